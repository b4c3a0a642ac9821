"""Reads one Darshan log with Darshan's own reader (PyDarshan over libdarshan-util) and writes
it to stdout as JSON lines for `pioscope import darshan` (crates/pioscope-trace/src/import/
darshan.rs parses them; docs/IMPORT.md). One object per line, told apart by "kind":

  {"kind": "job", ...}          first: the job, the modules and the mount table
  {"kind": "name", "id", "path"} every record id with a name
  {"kind": "counters", "module", "rank", "id", "counters": {NAME: int}, "fcounters": {NAME: float}}
                                LUSTRE: one per layout component, with "component": i
  {"kind": "dxt", "module", "rank", "id", "host", "op": "read"|"write", "segments": [[offset, length, start_s, end_s], ...]}
  {"kind": "skipped", "module", "why"}   a module whose records this reader does not carry
  {"kind": "error", "message"}  the log cannot be read (then exit status 2)

Run as: python3 -c "$(cat darshan_read.py)" LOG
"""
import contextlib
import json
import math
import sys


def emit(obj):
    sys.stdout.write(json.dumps(obj, separators=(",", ":")))
    sys.stdout.write("\n")


def fail(message):
    sys.stdout = sys.__stdout__
    emit({"kind": "error", "message": message})
    sys.exit(2)


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


def main():
    if len(sys.argv) != 2:
        fail("usage: darshan_read.py LOG")
    try:
        import darshan
    except ImportError:
        fail("PyDarshan is not installed (python3 -m pip install darshan; `make deps` installs it)")
    # PyDarshan prints notes on stdout; the JSON lines own it.
    with contextlib.redirect_stdout(sys.stderr):
        try:
            report = darshan.DarshanReport(sys.argv[1], read_all=False)
            report.read_all(dtype="numpy")
        except Exception as e:  # PyDarshan raises plain RuntimeError/ValueError for bad logs
            fail(f"not a readable Darshan log ({e})")
    meta = report.metadata
    emit({"kind": "job", "exe": meta.get("exe", ""), "job": dict(meta.get("job", {})),
          "modules": {m: {"version": int(v.get("ver", 0)), "partial": bool(v.get("partial_flag")),
                          "records": int(v.get("num_records", 0))}
                      for m, v in report.modules.items()},
          "mounts": [[p, t] for p, t in report.mounts],
          "reader": f"PyDarshan {darshan.__version__}"})
    for rid, path in report.name_records.items():
        emit({"kind": "name", "id": int(rid), "path": path})
    for module in report.modules:
        if module in report.records:
            module_records(report, module)
        else:
            emit({"kind": "skipped", "module": module,
                  "why": "PyDarshan does not read this module's records"})


main()
