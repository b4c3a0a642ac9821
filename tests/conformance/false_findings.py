"""Findings `pioscope report` is known to have made falsely on these programs (issue 13). Each
check takes an Outcome and returns what it found wrong (empty: none of that false finding).
`APPLIES` says which programs a check is about: the program that showed the false finding."""
from __future__ import annotations

import json
import re

import pandas as pd

from suite import Outcome

# Records of the MPI library's own start-up and shutdown: system files and MPICH's
# shared-memory segments, read inside MPI_Init / MPI_Finalize.
LIBRARY_PATHS = re.compile(r"(?<![\w.])(/sys|/proc|/dev/shm|/etc|/usr|/lib|/lib64)(?![\w-])")
# ROMIO keeps the shared file pointer in a hidden file `.NAME.shfp.NNN` beside the file.
SHARED_FP_FILE = re.compile(r"\.shfp\.")
WRITE_REMEDY = re.compile(r"MPI_File_(i?write|write_)\w*|romio_(cb|ds)_write")
READ_REMEDY = re.compile(r"MPI_File_(i?read|read_)\w*|romio_(cb|ds)_read")
# A function among a finding's worst: "call MPI_File_open: 800 calls, 264.67 ms".
WORST_FUNCTION = re.compile(r"^call (\w+): \d+ calls, ([\d.]+) (ns|us|ms|s)$")
NS_PER = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}


def findings(outcome: Outcome, rule: str | None = None) -> list[dict]:
    return [f for f in outcome.report.get("findings", []) if rule in (None, f["id"])]


def shared_fp_file_as_noncontiguous(outcome: Outcome) -> list[str]:
    """MPI_File_write_shared with the default (contiguous) view is not noncontiguous
    independent I/O; the POSIX requests on ROMIO's hidden .shfp file are not the data's."""
    wrong = [f"{f['id']} names the .shfp file" for f in findings(outcome)
             if SHARED_FP_FILE.search(json.dumps(f["evidence"]))]
    wrong += [f"noncontiguous-independent: {f['evidence']['summary']}"
              for f in findings(outcome, "noncontiguous-independent")]
    return wrong


def metadata_storm_ranked_by_time(outcome: Outcome) -> list[str]:
    """The worst functions of metadata-storm come by the time they took, not by their count
    (md-test: MPI_File_open's time, not MPI_File_close's count)."""
    wrong = []
    for f in findings(outcome, "metadata-storm"):
        shown = [(m.group(1), float(m.group(2)) * NS_PER[m.group(3)])
                 for m in map(WORST_FUNCTION.match, f["evidence"]["worst"]) if m]
        times = [ns for _, ns in shown]
        if times != sorted(times, reverse=True):
            wrong.append(f"worst functions not by time: {[name for name, _ in shown]}")
    return wrong


def close_sync_outranks_data_sieving(outcome: Outcome) -> list[str]:
    """On 32-byte independent HPIO the cost is data sieving; a collective close that is
    mostly a barrier must not rank above it."""
    ids = [f["id"] for f in findings(outcome)]
    if "close-sync" in ids and "data-sieving" in ids and \
            ids.index("close-sync") < ids.index("data-sieving"):
        return [f"close-sync ranked {ids.index('close-sync') + 1}, data-sieving "
                f"{ids.index('data-sieving') + 1}"]
    if "data-sieving" not in ids:
        return [f"no data-sieving finding: {ids}"]
    return []


def close_sync_on_a_barrier(outcome: Outcome) -> list[str]:
    """MPI_File_close is collective: ROMIO waits in an MPI_Barrier inside it for the slowest
    rank. That wait is load imbalance, not write-back: close-sync must not count it as close
    time (its close time holding the barrier, and mostly barrier, is the false finding)."""
    wrong = []
    for f in findings(outcome, "close-sync"):
        close_ns = f["evidence"]["numbers"]["close_time_ns"]
        barrier_ns = barrier_time_in_closes(outcome)
        if close_ns / 2 < barrier_ns <= close_ns:
            wrong.append(f"close-sync ({f['severity']}) counts {close_ns} ns of close, "
                         f"{barrier_ns} ns of it in the MPI_Barrier of MPI_File_close")
    return wrong


def barrier_time_in_closes(outcome: Outcome) -> int:
    """ns spent in MPI_Barrier calls inside MPI_File_close, over all ranks."""
    events = pd.read_parquet(outcome.trace / "events.parquet",
                             columns=["id", "parent", "func", "duration_ns"])
    closes = events[events.func == "MPI_File_close"]
    beneath = events[events.parent.isin(closes.id)]
    return int(beneath[beneath.func == "MPI_Barrier"].duration_ns.sum())


def close_sync_on_requested_sync(outcome: Outcome) -> list[str]:
    """A program that syncs because it was asked to (IOR -e, mpi-io-test's timed sync) and
    closes once per file has no close-sync problem."""
    return [f"close-sync ({f['severity']}): {f['evidence']['summary']}"
            for f in findings(outcome, "close-sync")]


def library_records_as_evidence(outcome: Outcome) -> list[str]:
    """Nothing MPI_Init or MPI_Finalize read or wrote (/sys, /proc, /dev/shm/mpich_shar_tmp*)
    is evidence of a finding, let alone the top one."""
    wrong = []
    for f in findings(outcome):
        path = LIBRARY_PATHS.search(json.dumps(f["evidence"]))
        if path:
            wrong.append(f"{f['id']} names {path.group(1)}")
    return wrong


def remedy_of_the_other_direction(outcome: Outcome) -> list[str]:
    """A finding about read calls only is not remedied with writes, nor the other way round."""
    wrong = []
    for f in findings(outcome):
        numbers = f["evidence"].get("numbers", {})
        reads, writes = numbers.get("read_calls", 0), numbers.get("write_calls", 0)
        if reads and not writes and WRITE_REMEDY.search(f["remedy"]):
            wrong.append(f"{f['id']}: {reads} read calls, no write, remedy: {f['remedy']}")
        if writes and not reads and READ_REMEDY.search(f["remedy"]):
            wrong.append(f"{f['id']}: {writes} write calls, no read, remedy: {f['remedy']}")
    return wrong


# check -> the programs it is about (None: every program).
APPLIES = {
    shared_fp_file_as_noncontiguous: {"shared_fp", "ordered_fp"},
    metadata_storm_ranked_by_time: {"md-test"},
    close_sync_outranks_data_sieving: {"hpio independent"},
    close_sync_on_requested_sync: {"mpi-io-test -c", "ior_large_count"},
    # where file locks (the shared file pointer, atomic mode, data sieving) put the ranks out
    # of step before every close: a long barrier wait, and close-sync, on every run so far
    close_sync_on_a_barrier: {"shared_fp", "atomicity", "i_noncontig", "hpio independent"},
    library_records_as_evidence: None,
    remedy_of_the_other_direction: None,
}


def checks_for(program_name: str):
    return [check for check, names in APPLIES.items() if names is None or program_name in names]


def all_false_findings(outcome: Outcome) -> list[str]:
    return [f"{check.__name__}: {w}" for check in checks_for(outcome.program.name)
            for w in check(outcome)]
