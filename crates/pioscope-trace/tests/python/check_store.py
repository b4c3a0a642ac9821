"""Reads a pioscope trace with pandas (pyarrow) and DuckDB, as users will, and checks that both
see the same rows and types. Usage: python3 check_store.py TRACE_DIR. Exit 0 = readable;
exit 77 = pandas/pyarrow/duckdb not installed (the Rust test then skips)."""
import json
import os
import sys

try:
    import duckdb
    import pandas as pd
    import pyarrow.parquet as pq
except ImportError as e:  # pragma: no cover
    print(f"skipped: {e}")
    sys.exit(77)

trace = sys.argv[1]
meta = json.load(open(os.path.join(trace, "meta.json")))
assert meta["format"] == "pioscope-trace", meta["format"]

for table, count_key in [("events", "events"), ("files", "files"), ("settings", "settings")]:
    path = os.path.join(trace, f"{table}.parquet")
    df = pd.read_parquet(path)
    assert len(df) == meta["counts"][count_key], (table, len(df), meta["counts"][count_key])
    con = duckdb.connect()
    n = con.execute(f"select count(*) from read_parquet('{path}')").fetchone()[0]
    assert n == len(df), (table, n, len(df))
    print(table, len(df), "rows;", ", ".join(f"{c}:{t}" for c, t in df.dtypes.astype(str).items()))

ev = os.path.join(trace, "events.parquet")
df = pd.read_parquet(ev)
con = duckdb.connect()
if len(df):
    # Sorted by rank then start; ids are row numbers; parents point backwards to real rows.
    assert (df["id"].values == range(len(df))).all()
    key = list(zip(df["rank"], df["start_ns"]))
    assert key == sorted(key)
    parents = df["parent"].dropna().astype("int64")
    assert (parents >= 0).all() and (parents < len(df)).all()
    # DuckDB agrees on sums, string columns and nulls.
    q = f"""select sum(duration_ns), count(parent), count(file_id), count(region),
                   count(distinct func), sum(size) from read_parquet('{ev}')"""
    d = con.execute(q).fetchone()
    p = (int(df["duration_ns"].sum()), int(df["parent"].notna().sum()), int(df["file_id"].notna().sum()),
         int(df["region"].notna().sum()), int(df["func"].nunique()), int(df["size"].sum()))
    assert tuple(int(x) for x in d) == p, (d, p)
    by_layer = con.execute(f"select layer, count(*) from read_parquet('{ev}') group by layer order by 1").fetchall()
    print("by layer (duckdb):", by_layer)
    # Joins with the files table work on file_id.
    j = con.execute(f"""select count(*) from read_parquet('{ev}') e
                        join read_parquet('{os.path.join(trace, "files.parquet")}') f using (file_id)""").fetchone()[0]
    assert j == df["file_id"].notna().sum(), j
    md = pq.ParquetFile(ev).metadata
    print("row groups:", md.num_row_groups, "stats on start_ns:", md.row_group(0).column(4).statistics is not None)
print("ok")
