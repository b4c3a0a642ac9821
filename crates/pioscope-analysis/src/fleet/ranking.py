"""Runs the fleet's ranking (ranking.sql, beside this file) with DuckDB over one fleet's
jobs.parquet and findings.parquet, and prints the results as one JSON object for
crates/pioscope-analysis/src/fleet/ranking.rs: {query name: [row, ...]}, each row an object
keyed by column, one query per "-- name: NAME" line of the SQL. DuckDB's memory is capped
(memory_limit; what does not fit spills to temp_directory), so the step is bounded whatever the
number of jobs; it uses every core. Without the duckdb module it prints
{"missing_module": "duckdb"} and exits 0, so that the caller can say how to install it.

Run as: python3 -c "$(cat ranking.py)" SQL JOBS_PARQUET FINDINGS_PARQUET TEMP_DIR MEMORY_LIMIT
"""
import json
import re
import sys

try:
    import duckdb
except ImportError:
    json.dump({"missing_module": "duckdb"}, sys.stdout)
    sys.exit(0)

# The line that opens each statement of ranking.sql and names its results.
MARKER = re.compile(r"^-- name: (\w+)$", re.MULTILINE)


def statements(sql):
    """{name: statement} of the SQL text, in order (what precedes the first name is a note)."""
    parts = MARKER.split(sql)
    return {name: body.strip().rstrip(";") for name, body in zip(parts[1::2], parts[2::2])}


def main():
    sql, jobs, findings, temp_dir, memory_limit = sys.argv[1:6]
    con = duckdb.connect(config={"memory_limit": memory_limit, "temp_directory": temp_dir})
    con.read_parquet(jobs).create_view("jobs")
    con.read_parquet(findings).create_view("findings")
    results = {}
    for name, statement in statements(sql).items():
        cursor = con.execute(statement)
        columns = [d[0] for d in cursor.description]
        results[name] = [dict(zip(columns, row)) for row in cursor.fetchall()]
    json.dump(results, sys.stdout, separators=(",", ":"))


main()
