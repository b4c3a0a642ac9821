#!/usr/bin/env python3
"""check_threads.py: asserts on the raw files of one traced run of mpi_threads.c.

    check_threads.py <raw dir> [<expect dir, unused>]

Every Isend/Irecv completes exactly once, inside a Wait/Waitall of the thread that started it,
with the start's tag and the partner rank as peer. Exit 0 when all checks pass."""
import collections
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import praw  # noqa: E402

THREADS, ROUNDS = 3, 2000


def main():
    failures = 0
    raws = praw.read_dir(sys.argv[1])
    for r, raw in sorted(raws.items()):
        starts = {e.link: e for e in raw.events if e.name in ("MPI_Isend", "MPI_Irecv")}
        done = [e for e in raw.events if e.name == "tracer_complete"]
        per_link = collections.Counter(e.link for e in done)
        problems = []
        if len(starts) != THREADS * ROUNDS * 2:
            problems.append(f"{len(starts)} starts, expected {THREADS * ROUNDS * 2}")
        problems += [f"start {hex(l)} completed {per_link[l]} times"
                     for l in starts if per_link[l] != 1]
        for c in done:
            s = starts.get(c.link)
            if not s or c.thread != s.thread or c.tag != s.tag or c.peer != r ^ 1 or c.depth != 1:
                problems.append(f"completion {c} does not match its start {s}")
        for p in problems[:10]:
            print(f"FAIL: rank {r}: {p}")
        failures += len(problems)
    print("OK" if not failures else f"{failures} problem(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
