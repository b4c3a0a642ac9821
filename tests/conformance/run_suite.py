#!/usr/bin/env python3
"""Runs the conformance suite and prints its table: per program the untraced and traced exit
status, whether their output matches, whether the trace has the MPI-IO calls and bytes the
program makes, whether `simulate --trace` replays it, the top finding, and the false findings
seen. Exit 1 when a row fails. Usage: run_suite.py [--all] [--keep DIR] [PROGRAM...]"""
import argparse
import shutil
import sys
import tempfile
from pathlib import Path

import suite
from false_findings import all_false_findings


def row(outcome: suite.Outcome) -> tuple[list[str], bool]:
    false = all_false_findings(outcome) if outcome.report else ["no report"]
    replay_ok = outcome.replay is not None and outcome.replay.returncode == 0
    expected = outcome.program
    as_expected = outcome.bytes_as_expected
    cells = [
        expected.name,
        str(outcome.untraced.status),
        str(outcome.traced.status),
        "yes" if outcome.same_output else "NO",
        f"{'yes' if as_expected else 'NO'} ({outcome.calls()} calls, "
        f"{outcome.bytes('write')} B written, {outcome.bytes('read')} B read"
        + "".join(f"; {key} {got} B, expected {want} B"
                  for key, (got, want) in outcome.unexpected_bytes().items()) + ")",
        "yes" if replay_ok else "NO",
        outcome.top_finding,
        "; ".join(false) if false else "none",
    ]
    ok = (outcome.untraced.status == 0 and outcome.traced.status == 0 and outcome.same_output
          and as_expected and replay_ok)
    return cells, ok


def print_table(rows: list[list[str]]) -> None:
    header = ["program", "untraced", "traced", "same output", "MPI-IO calls and bytes as expected",
              "replay ok", "top finding", "false findings"]
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    for cells in rows:
        print("| " + " | ".join(cells) + " |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true", help="every program, not the subset")
    parser.add_argument("--keep", type=Path, help="keep work directories and traces in DIR")
    parser.add_argument("programs", nargs="*", help="only these programs")
    args = parser.parse_args()
    unknown = [name for name in args.programs if name not in suite.BY_NAME]
    if unknown:
        parser.error(f"unknown program {unknown[0]!r}; known: {', '.join(suite.BY_NAME)}")
    programs = ([suite.BY_NAME[n] for n in args.programs] if args.programs
                else suite.PROGRAMS if args.all else suite.SUBSET)

    suite.build(programs)
    work = args.keep or Path(tempfile.mkdtemp(prefix="pioscope-conformance-"))
    rows, failed, with_false_findings = [], [], 0
    try:
        for i, program in enumerate(programs):
            print(f"[{i + 1}/{len(programs)}] {program.name}", file=sys.stderr, flush=True)
            cells, ok = row(suite.measure(program, work / program.name.replace(" ", "_")))
            rows.append(cells)
            with_false_findings += cells[-1] != "none"
            if not ok:
                failed.append(program.name)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print_table(rows)
    print(f"\n{len(rows) - len(failed)} passed, {len(failed)} failed"
          + (f": {', '.join(failed)}" if failed else ""))
    print(f"false findings in {with_false_findings} of {len(rows)} reports")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
