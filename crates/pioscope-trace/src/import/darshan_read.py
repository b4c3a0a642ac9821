"""Reads Darshan logs with Darshan's own reader (PyDarshan over libdarshan-util) and writes each
to stdout as JSON lines for `pioscope import darshan` and `pioscope fleet` (crates/pioscope-trace/
src/import/darshan.rs parses them; docs/IMPORT.md). One process reads many logs, so PyDarshan's
start-up (about a second) is paid once per process, not once per log: the logs come on stdin,
one a line, each path hex-encoded (any bytes a path can hold), and the answer to each ends with
an "end" line. One object per line, told apart by "kind":

  {"kind": "job", ...}          first: the job, the modules and the mount table
  {"kind": "name", "id", "path"} every record id with a name
  {"kind": "counters", "module", "rank", "id", "counters": {NAME: int}, "fcounters": {NAME: float}}
                                LUSTRE: one per layout component, with "component": i
  {"kind": "dxt", "module", "rank", "id", "host", "op": "read"|"write", "segments": [[offset, length, start_s, end_s], ...]}
  {"kind": "heatmap", "module", "rank", "bin_width_s", "read": [bytes, ...], "write": [bytes, ...]}
                                HEATMAP: one per module and rank (POSIX, MPIIO, STDIO, ...)
  {"kind": "skipped", "module", "why"}   a module whose records this reader does not carry
  {"kind": "stderr", "text"}    what libdarshan-util and PyDarshan said on stderr for this log
  {"kind": "error", "message"}  the log cannot be read
  {"kind": "end"}               last, for every log

Run as: python3 -c "$(cat darshan_read.py)", with the logs on stdin.
"""
import contextlib
import gc
import json
import math
import os
import sys
import tempfile


# The JSON lines' stream, kept aside: PyDarshan's notes on sys.stdout go to stderr.
OUT = sys.stdout


def emit(obj):
    OUT.write(json.dumps(obj, separators=(",", ":")))
    OUT.write("\n")


def number(value):
    """A counter as JSON: NaN and infinities (unset float counters) become null."""
    value = value.item() if hasattr(value, "item") else value
    return None if isinstance(value, float) and not math.isfinite(value) else value


def counter_record(module, rank, rid, values, names, extra=None):
    line = {"kind": "counters", "module": module, "rank": int(rank), "id": int(rid)}
    for kind in ("counters", "fcounters"):
        line[kind] = {n: number(v) for n, v in zip(names.get(kind, []), values.get(kind, []))}
    line.update(extra or {})
    emit(line)


def dxt_record(module, rec):
    for op in ("write", "read"):
        segments = rec.get(op + "_segments") or []
        if segments:
            emit({"kind": "dxt", "module": module, "rank": int(rec["rank"]), "id": int(rec["id"]),
                  "host": str(rec.get("hostname", "")), "op": op,
                  "segments": [[int(g["offset"]), int(g["length"]), float(g["start_time"]),
                                float(g["end_time"])] for g in segments]})


def module_records(report, module):
    names = report.counters.get(module, {})
    for rec in report.records[module].to_numpy():
        if module.startswith("DXT_"):
            dxt_record(module, rec)
        elif module == "LUSTRE":
            # One line per layout component (a progressive file layout has several).
            for i, comp in enumerate(rec.get("components", [])):
                counter_record(module, rec["rank"], rec["id"], comp, names, {"component": i})
        else:
            counter_record(module, rec["rank"], rec["id"], rec, names)


def heatmap_records(report):
    """HEATMAP: PyDarshan gathers its records per module (the API the bins count) as frames
    of one row per rank and one column per time bin."""
    for module, heatmap in report.heatmaps.items():
        reads = heatmap.to_df(ops=["read"])
        writes = heatmap.to_df(ops=["write"])
        width = float(reads.columns[0].length) if len(reads.columns) else 0.0
        for rank in reads.index:
            emit({"kind": "heatmap", "module": str(module), "rank": int(rank), "bin_width_s": width,
                  "read": [int(v) for v in reads.loc[rank]],
                  "write": [int(v) for v in writes.loc[rank]]})


def read_log(darshan, path):
    try:
        # Closed when read (not left to the garbage collector: see main).
        with darshan.DarshanReport(path, read_all=False) as report:
            report.read_all(dtype="numpy")
    except Exception as e:  # PyDarshan raises plain RuntimeError/ValueError for bad logs
        emit({"kind": "error", "message": f"not a readable Darshan log ({e})"})
        return
    emit_report(darshan, report)


def emit_report(darshan, report):
    meta = report.metadata
    emit({"kind": "job", "exe": meta.get("exe", ""), "job": dict(meta.get("job", {})),
          "modules": {m: {"version": int(v.get("ver", 0)), "partial": bool(v.get("partial_flag")),
                          "records": int(v.get("num_records", 0))}
                      for m, v in report.modules.items()},
          "mounts": [[p, t] for p, t in report.mounts],
          "reader": f"PyDarshan {darshan.__version__}"})
    for rid, name in report.name_records.items():
        emit({"kind": "name", "id": int(rid), "path": name})
    for module in report.modules:
        if module == "HEATMAP":
            heatmap_records(report)
        elif module in report.records:
            module_records(report, module)
        else:
            emit({"kind": "skipped", "module": module,
                  "why": "PyDarshan does not read this module's records"})


@contextlib.contextmanager
def captured_stderr():
    """Everything written on stderr meanwhile, libdarshan-util's C writes included (fd 2),
    kept apart per log; PyDarshan's notes on stdout go there too (the JSON lines own stdout)."""
    with tempfile.TemporaryFile(mode="w+b") as spool:
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(spool.fileno(), 2)
        text = []
        try:
            with contextlib.redirect_stdout(sys.stderr):
                yield text
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            spool.seek(0)
            text.append(spool.read().decode(errors="replace"))


def main():
    # The cyclic garbage collector runs between logs only. A DarshanReport sits in reference
    # cycles, and its __del__ closes the log through cffi, whose lock is not reentrant: run by a
    # collection that began while cffi parsed a C type (holding that lock), it waited on the
    # lock forever, and `pioscope fleet` with it (issue 17).
    gc.disable()
    try:
        import darshan
    except ImportError:
        darshan = None
    for n, line in enumerate(sys.stdin):
        path = os.fsdecode(bytes.fromhex(line.strip()))
        if darshan is None:
            emit({"kind": "error", "message":
                  "PyDarshan is not installed (python3 -m pip install darshan; `make deps` installs it)"})
        else:
            with captured_stderr() as text:
                read_log(darshan, path)
            if text and text[0].strip():
                emit({"kind": "stderr", "text": text[0]})
            gc.collect()
            if n == 0:
                # What the first log imported stays for good: later collections skip it (a
                # collection over pandas and numpy costs 20 ms a log, over one log's objects
                # well under 1).
                gc.freeze()
        emit({"kind": "end"})
        OUT.flush()


main()
