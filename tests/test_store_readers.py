"""The trace store is open: pandas, pyarrow and DuckDB read it as it is (docs/FORMAT.md shows
the same queries)."""
import duckdb
import pyarrow.parquet as pq

from conftest import run_traced


def test_duckdb_and_pandas_agree(programs, workdir, tmp_path):
    _, trace = run_traced(tmp_path / "trace", programs["threads"], workdir)
    events = trace.path / "events.parquet"
    rows = duckdb.sql(f"""
        SELECT func, count(*) AS calls, sum(size) AS bytes
        FROM '{events}' WHERE func = 'pwrite' GROUP BY func""").fetchall()
    assert rows == [("pwrite", 4000, 4000)]
    assert (trace.events.func == "pwrite").sum() == 4000


def test_events_sorted_by_rank_then_time_and_compressed(programs, workdir, tmp_path):
    _, trace = run_traced(tmp_path / "trace", programs["threads"], workdir)
    meta = pq.ParquetFile(trace.path / "events.parquet").metadata
    assert meta.num_rows == len(trace.events)
    codecs = {meta.row_group(0).column(i).compression for i in range(meta.num_columns)}
    assert codecs == {"ZSTD"}
    ev = trace.events
    assert list(ev.id) == list(range(len(ev)))
    assert ev.sort_values(["rank", "start_ns"], kind="stable").id.tolist() == ev.id.tolist()
