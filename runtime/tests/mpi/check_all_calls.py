#!/usr/bin/env python3
"""check_all_calls.py: asserts on the raw files of one traced run of mpi_all_calls.c.

    check_all_calls.py <raw dir> [<expect dir, unused>] [--mpi-major N] [--mpiio romio|ompio]
                       [--verbose]

Every MPI and MPI-IO function of functions.def must be recorded by the program itself (depth 0)
on every rank (the point-to-point ones on the ranks that make them), with its family's flags,
object and link: collective MPI-IO calls carry an instance link equal on all ranks, split
collective ends share their begin's link, nonblocking starts carry a request id that one
tracer_complete child of a Wait/Test carries too; SETTINGS chunks only where the hints or
the view changed. Every MPI-4 large-count `_c` form records what its int twin records (same
bytes). ROMIO's independent nonblocking MPI-IO (this MPICH builds it on POSIX aio) shows one
aio_read/aio_write child per call, whose completion (a tracer_complete under aio_return, inside
the Wait) carries the bytes. Exit 0 when all checks pass.

An MPI-3 library (--mpi-major 3: Open MPI 4.1) has no `_c` forms, and the program makes none.
Under Open MPI's OMPIO (--mpiio ompio) set_info does not change what get_info returns, so no
hints chunk follows it.
"""
import argparse
import collections
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import praw  # noqa: E402
from praw import F_COLLECTIVE, F_NONBLOCKING, F_OFFSET_UNKNOWN, F_COMPLETION, NO_RANK  # noqa

N = 256
FAILURES = []
# Independent nonblocking MPI-IO calls: ROMIO queues each as one POSIX aio request.
AIO_PARENTS = {f"MPI_File_i{d}{p}{c}": "aio_" + d for d in ("read", "write")
               for p in ("", "_at", "_shared") for c in ("", "_c")}


def int_twin(name):
    """MPI_Send for MPI_Send_c (MPI-4 large-count forms), else name."""
    return name[:-2] if name.endswith("_c") else name


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)
    return cond


def check_aio(raw, top, r, expected):
    """Each independent nonblocking MPI-IO call has exactly one aio child with its bytes and
    file offset, completed once, inside a Wait, by an aio_return carrying the bytes."""
    parents = [e for e in top if e.name in AIO_PARENTS]
    check(len(parents) == expected,
          f"rank {r}: {expected} independent nonblocking MPI-IO calls ({parents})")
    for e in parents:
        kids = [c for c in raw.children(e) if c.name.startswith("aio_")]
        want = AIO_PARENTS[e.name]
        if not check(len(kids) == 1 and kids[0].name == want,
                     f"rank {r}: {e.name} has one {want} child ({kids})"):
            continue
        aio = kids[0]
        check(aio.size == N and aio.result == N and aio.flags & F_NONBLOCKING and aio.link and
              aio.object == e.object, f"rank {r}: {e.name}: {aio} queues {N} bytes of its file")
        if not e.flags & F_OFFSET_UNKNOWN:
            check(aio.offset == e.offset, f"rank {r}: {e.name} at {e.offset}: {aio}")
        done = [c for c in raw.named("tracer_complete") if c.link == aio.link]
        if check(len(done) == 1 and done[0].size == N and done[0].result == N and
                 done[0].offset == aio.offset and done[0].flags & F_COMPLETION,
                 f"rank {r}: {aio} completed once with {N} bytes ({done})"):
            returns = [c for c in raw.named("aio_return")
                       if c.start <= done[0].start <= c.end and c.depth == done[0].depth - 1]
            check(len(returns) == 1 and returns[0].result == N and returns[0].depth == 1,
                  f"rank {r}: {aio}'s completion is inside an aio_return of a Wait ({returns})")
    unreturned = [c for c in raw.named("aio_error") if c.result == 115]  # EINPROGRESS
    check(not unreturned, f"rank {r}: polls that found a request in progress are not recorded")


def parse_args():
    ap = argparse.ArgumentParser(description="Checks the raw files of a run of mpi_all_calls.")
    ap.add_argument("raw", help="the run's raw directory")
    ap.add_argument("expect", nargs="?", help="unused")
    ap.add_argument("--mpi-major", type=int, default=4,
                    help="the MPI version of the library (< 4: no large-count forms)")
    ap.add_argument("--mpiio", choices=("romio", "ompio"), default="romio")
    ap.add_argument("--verbose", action="store_true")
    return ap.parse_args()


def main():
    args = parse_args()
    raws = praw.read_dir(args.raw)
    large_count = args.mpi_major >= 4
    ranks = sorted(r for r in raws if r >= 0)
    size = len(ranks)
    if not check(size >= 2 and size % 2 == 0, f"an even number of ranks (got {ranks})"):
        return 1
    wanted = [name for fid, name in praw.FUNC_NAMES.items() if 300 <= fid < 500
              and (large_count or not name.endswith("_c"))]
    p2p_only_even = {"MPI_Ssend", "MPI_Bsend", "MPI_Rsend", "MPI_Ssend_c", "MPI_Bsend_c",
                     "MPI_Rsend_c"}
    seqs = {}
    for r in ranks:
        raw = raws[r]
        top = [e for e in raw.sorted_events() if e.depth == 0]
        seen = {e.name for e in top}
        for name in wanted:
            if name == "MPI_Init":
                continue  # the program calls MPI_Init_thread
            if name in p2p_only_even and r % 2:
                continue
            if name == "MPI_File_delete" and r != 0:
                continue
            check(name in seen, f"rank {r}: {name} recorded")
        for e in top:
            if 300 <= e.func < 400:
                is_coll = any(k in e.name for k in ("_all", "_ordered", "open", "close",
                                                    "set_view", "set_size", "preallocate",
                                                    "set_info", "sync", "seek_shared",
                                                    "set_atomicity"))
                check(bool(e.flags & F_COLLECTIVE) == is_coll,
                      f"rank {r}: {e.name} collective flag {e.flags:#x}")
                if e.name not in ("MPI_File_delete", "MPI_Register_datarep",
                                  "MPI_Register_datarep_c"):
                    check(raw.strings.get(e.object, "").startswith("/"),
                          f"rank {r}: {e.name} object is the file path")
                shared = "_shared" in e.name or "_ordered" in e.name
                if e.name.startswith(("MPI_File_read", "MPI_File_write", "MPI_File_iread",
                                      "MPI_File_iwrite")):
                    check(bool(e.flags & F_OFFSET_UNKNOWN) == shared,
                          f"rank {r}: {e.name} offset known unless shared ({e})")
                    check(e.size == N, f"rank {r}: {e.name} size {e.size}")
                    if not shared:
                        check(e.offset % (size * N) == r * N,
                              f"rank {r}: {e.name} offset {e.offset} in this rank's block")
                if e.flags & F_NONBLOCKING:
                    done = [c for c in raw.named("tracer_complete") if c.link == e.link]
                    check(len(done) == 1 and done[0].result == N and done[0].depth == 1,
                          f"rank {r}: {e.name} completed once with {N} bytes ({done})")
        seqs[r] = [(e.name, e.link) for e in top if 300 <= e.func < 400 and
                   e.flags & F_COLLECTIVE and not e.flags & F_NONBLOCKING]
        for a, b in zip(top, top[1:]):
            begin = int_twin(a.name)
            if begin.endswith("_begin") and b.name == begin.replace("_begin", "_end"):
                check(a.link == b.link and a.link, f"rank {r}: {a.name}/{b.name} share a link")
        # Point-to-point: every nonblocking start completes exactly once, with its own tag.
        for e in top:
            if int_twin(e.name) in ("MPI_Isend", "MPI_Issend", "MPI_Irecv"):
                done = [c for c in raw.named("tracer_complete") if c.link == e.link]
                check(len(done) == 1 and done[0].size == 4 and done[0].peer == r ^ 1 and
                      done[0].tag == e.tag,
                      f"rank {r}: {e.name} tag {e.tag} completed from/to {r ^ 1} ({done})")
        recvs = [e for e in top if int_twin(e.name) == "MPI_Recv" and e.size]
        check(all(e.peer == r ^ 1 for e in recvs), f"rank {r}: Recv peers resolved")
        # Collectives: root rank 1 in world ranks, comm size, COLLECTIVE flag.
        for e in top:
            if 430 <= e.func <= 446 or 460 <= e.func <= 475:
                rooted = int_twin(e.name) in ("MPI_Bcast", "MPI_Reduce", "MPI_Gather", "MPI_Gatherv",
                                    "MPI_Scatter", "MPI_Scatterv")
                check(e.flags & F_COLLECTIVE and e.tag == size and
                      e.peer == (1 if rooted else NO_RANK),
                      f"rank {r}: {e.name} root/comm size ({e})")
        for name in ("MPI_Scatter", "MPI_Scatter_c") if large_count else ("MPI_Scatter",):
            scat = [e for e in top if e.name == name]
            check(scat and scat[0].size == (8 * size if r == 1 else 0),
                  f"rank {r}: {name} bytes only at the root ({scat})")
        # Large-count forms: the same bytes, peers and tags as their int twins.
        first = {}
        for e in top:
            first.setdefault(e.name, e)
        for name, e in first.items():
            if name.endswith("_c") and 400 <= e.func < 500:
                twin = first.get(int_twin(name))
                check(twin is not None and (e.size, e.result, e.flags, e.object) ==
                      (twin.size, twin.result, twin.flags, twin.object),
                      f"rank {r}: {name} records as {int_twin(name)} ({e} vs {twin})")
        # Odd ranks' MPI_Send_c sends 0 bytes (the go-ahead for the even ranks' Rsend_c).
        if large_count:
            sends_c = [e for e in top
                       if e.name in ("MPI_Send_c", "MPI_Isend_c", "MPI_Sendrecv_c") and e.size]
            check(len(sends_c) == (2 if r % 2 else 3) and
                  all(e.size == 4 and e.peer == r ^ 1 and 30 <= e.tag < 40 for e in sends_c),
                  f"rank {r}: Send_c, Isend_c, Sendrecv_c: 4 bytes to {r ^ 1} ({sends_c})")
        check_aio(raw, top, r, 12 if large_count else 6)
        # SETTINGS are written when they change: set_info changes cb_buffer_size (one hints
        # chunk, none under OMPIO, whose get_info does not follow set_info); set_view restores
        # the view of the open with unchanged hints (no chunk).
        by_func = collections.Counter(s[1] for s in raw.settings)
        infos = [s for s in raw.settings if s[1] == "MPI_File_set_info"]
        check(by_func["MPI_File_open"] == 2 and len(infos) == (0 if args.mpiio == "ompio" else 1)
              and all(i[3].get("cb_buffer_size") == "1048576" and
                      not any(k.startswith("view.") for k in i[3]) for i in infos),
              f"rank {r}: open writes hints and view, set_info its new hints ({by_func})")
        check(by_func["MPI_File_set_view"] == 0,
              f"rank {r}: a set_view to the open's view with unchanged hints writes nothing")
        if args.verbose:
            for e in top:
                print(r, e)
    check(all(seqs[r] == seqs[ranks[0]] for r in ranks),
          "collective MPI-IO (function, link) sequences equal on all ranks")
    print("OK" if not FAILURES else f"{len(FAILURES)} check(s) failed")
    return 0 if not FAILURES else 1


if __name__ == "__main__":
    sys.exit(main())
