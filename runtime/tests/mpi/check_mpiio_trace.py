#!/usr/bin/env python3
"""check_mpiio_trace.py: asserts on the raw files of one traced run of mpiio_trace.c.

    check_mpiio_trace.py <raw dir> <expect dir> [--verbose]

Checks the MPI and MPI-IO records: collective instance links equal on every rank, POSIX writes
nested under MPI_File_write_all only on the aggregators, offsets resolved through the view, the
SETTINGS hints equal to what MPI_File_get_info reported, the flattened view, request
completions, point-to-point peers and tags in MPI_COMM_WORLD ranks, collective roots, job facts
and clock syncs. Prints what MPICH-internal MPI calls appear inside the MPI-IO calls. Exit 0 when
every check passes, 1 otherwise.
"""
import collections
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import praw  # noqa: E402
from praw import F_COLLECTIVE, F_NONBLOCKING, F_OFFSET_UNKNOWN, F_COMPLETION, NO_RANK  # noqa

FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)
    return cond


def read_expect(directory, rank):
    expect = {"hints": {}}
    with open(os.path.join(directory, f"expect.{rank}.txt")) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("hint "):
                k, v = line[5:].split("=", 1)
                expect["hints"][k] = v
            elif "=" in line:
                k, v = line.split("=", 1)
                expect[k] = int(v)
    return expect


def top(raw, name):
    """The records of `name` the program made itself (not nested in another MPI call)."""
    return [e for e in raw.named(name) if e.depth == 0]


def main():
    raw_dir, expect_dir = sys.argv[1], sys.argv[2]
    verbose = "--verbose" in sys.argv
    raws = praw.read_dir(raw_dir)
    ranks = sorted(r for r in raws if r >= 0)
    size = len(ranks)
    check(size >= 2, f"at least 2 ranked raw files (found ranks {ranks})")
    if size < 2:
        return 1
    ex = {r: read_expect(expect_dir, r) for r in ranks}
    block, blocks, indep = ex[0]["block"], ex[0]["blocks"], ex[0]["indep"]
    region = ex[0]["region"]

    # ---- lifecycle: job facts, clock syncs, init/finalize records ----
    for r in ranks:
        raw = raws[r]
        check(raw.pid == ex[r]["pid"], f"rank {r}: raw file pid {raw.pid} == program pid")
        for key in ("mpi_library", "mpi_version", "thread_level", "processor_name"):
            check(raw.job.get(key), f"rank {r}: job fact {key} present")
        phases = sorted(c[0] for c in raw.clock_syncs)
        check(phases == [1, 2], f"rank {r}: clock syncs INIT and FINALIZE (got {phases})")
        for phase, ref, offset, rtt, _ in raw.clock_syncs:
            check(ref == 0, f"rank {r}: clock sync reference rank 0")
            if r == 0:
                check(offset == 0 and rtt == 0, "rank 0: zero offset against itself")
            else:
                check(0 < rtt < 10**9, f"rank {r}: clock sync rtt {rtt} ns plausible")
        check(len(top(raw, "MPI_Init")) == 1, f"rank {r}: one MPI_Init record")
        check(len(top(raw, "MPI_Finalize")) == 1, f"rank {r}: one MPI_Finalize record")

    # ---- MPI-IO: file object, collective links equal across ranks ----
    coll_seq = {}
    for r in ranks:
        raw = raws[r]
        mpiio = [e for e in raw.sorted_events() if 300 <= e.func < 400 and e.depth == 0]
        coll_seq[r] = [(e.name, e.link) for e in mpiio if e.flags & F_COLLECTIVE
                       and not e.flags & F_NONBLOCKING]
        opens = top(raw, "MPI_File_open")
        if check(len(opens) == 1, f"rank {r}: one MPI_File_open"):
            path = raw.strings.get(opens[0].object, "")
            check(path.startswith("/") and not path.startswith("ufs:") and
                  path.endswith(os.path.basename(path)), f"rank {r}: open object is a path: {path}")
            check(opens[0].link & 0xFFFFFFFF == 0, f"rank {r}: open link has call number 0")
    check(all(coll_seq[r] == coll_seq[ranks[0]] for r in ranks),
          "collective MPI-IO calls have identical (function, link) sequences on all ranks")
    links = [l for n, l in coll_seq[ranks[0]] if not n.endswith("_end")]
    check(len(set(links)) == len(links), "collective links are distinct within a file")
    if verbose:
        print("collective sequence (rank 0):", [(n, hex(l)) for n, l in coll_seq[ranks[0]]])

    # ---- write_all: size, result, offset through the view, aggregators ----
    aggregators = []
    internal_children = collections.Counter()
    for r in ranks:
        raw = raws[r]
        wa = top(raw, "MPI_File_write_all")
        if not check(len(wa) == 1, f"rank {r}: one MPI_File_write_all"):
            continue
        w = wa[0]
        check(w.size == block * blocks and w.result == block * blocks,
              f"rank {r}: write_all size/result {w.size}/{w.result} == {block * blocks}")
        check(w.offset == r * block and not w.flags & F_OFFSET_UNKNOWN,
              f"rank {r}: write_all offset {w.offset} == first byte of the view {r * block}")
        kids = raw.children(w)
        posix = [k for k in kids if k.name in ("pwrite", "pwrite64", "write", "pwritev")]
        if posix:
            aggregators.append(r)
            check(all(k.depth == 1 for k in posix), f"rank {r}: POSIX writes at depth 1")
        for k in kids:
            if 400 <= k.func < 500:
                internal_children[k.name] += 1
        if verbose:
            print(f"rank {r} write_all children:",
                  collections.Counter(k.name for k in kids).most_common())
    cb_nodes = int(ex[0]["hints"].get("cb_nodes", "0"))
    check(len(aggregators) == min(cb_nodes, size) and len(aggregators) > 0,
          f"POSIX writes under write_all on exactly cb_nodes={cb_nodes} ranks (got {aggregators})")
    print("aggregators (ranks with POSIX writes under MPI_File_write_all):", aggregators)
    print("MPI calls recorded as children of MPI_File_write_all (all ranks):",
          dict(internal_children) or "none")

    # ---- split collective, independent and nonblocking file writes ----
    for r in ranks:
        raw = raws[r]
        b, e = top(raw, "MPI_File_write_all_begin"), top(raw, "MPI_File_write_all_end")
        if check(len(b) == 1 and len(e) == 1, f"rank {r}: one split collective begin/end"):
            check(b[0].link == e[0].link and b[0].link != 0,
                  f"rank {r}: split begin/end share the instance link")
            check(b[0].offset == r * block + block * blocks * size,
                  f"rank {r}: split begin offset {b[0].offset} is the second view tile")
            check(e[0].result == block * blocks, f"rank {r}: split end result = bytes written")
        wat = top(raw, "MPI_File_write_at")
        if check(len(wat) == 1, f"rank {r}: one MPI_File_write_at"):
            check(wat[0].offset == region + r * indep and wat[0].size == indep and
                  wat[0].result == indep and not wat[0].flags & F_COLLECTIVE,
                  f"rank {r}: write_at offset/size/result ({wat[0]})")
        wr = top(raw, "MPI_File_write")
        if check(len(wr) == 1, f"rank {r}: one MPI_File_write"):
            check(wr[0].offset == region + (size + r) * indep,
                  f"rank {r}: write offset {wr[0].offset} from the individual pointer")
        iw = top(raw, "MPI_File_iwrite_at")
        if check(len(iw) == 1, f"rank {r}: one MPI_File_iwrite_at"):
            i = iw[0]
            check(i.flags & F_NONBLOCKING and i.link != 0, f"rank {r}: iwrite_at nonblocking")
            check(i.offset == region + (2 * size + r) * indep, f"rank {r}: iwrite_at offset")
            done = [c for c in raw.named("tracer_complete") if c.link == i.link]
            if check(len(done) == 1, f"rank {r}: iwrite_at completion recorded"):
                check(done[0].flags & F_COMPLETION and done[0].result == indep and
                      done[0].size == indep, f"rank {r}: iwrite_at completion bytes {done[0]}")
                check(done[0].depth == 1, f"rank {r}: completion nested in the Wait")
        ra = top(raw, "MPI_File_read_all")
        if check(len(ra) == 1, f"rank {r}: one MPI_File_read_all"):
            check(ra[0].result == block * blocks and ra[0].offset == r * block,
                  f"rank {r}: read_all result/offset {ra[0]}")

    # ---- SETTINGS: hints equal to MPI_File_get_info, flattened view ----
    # Two chunks per call, the hints (with open.* at open) and the view, each written only when
    # it differs from the last one written for the file: the first open writes both, a
    # set_view that leaves the hints alone writes its view only.
    def is_view(chunk):
        return all(k.startswith("view.") for k in chunk[3])

    for r in ranks:
        raw = raws[r]
        check(all(is_view(s) or not any(k.startswith("view.") for k in s[3])
                  for s in raw.settings), f"rank {r}: hints and view in separate chunks")
        opens = [s for s in raw.settings if s[1] == "MPI_File_open"]
        open_hints = [s for s in opens if not is_view(s)]
        open_views = [s for s in opens if is_view(s)]
        if check(len(open_hints) == 1 and len(open_views) == 1,
                 f"rank {r}: one hints and one view SETTINGS chunk for open"):
            got = {k: v for k, v in open_hints[0][3].items() if not k.startswith("open.")}
            check(got == ex[r]["hints"], f"rank {r}: open hints equal MPI_File_get_info "
                  f"(diff {set(got.items()) ^ set(ex[r]['hints'].items())})")
            check(open_views[0][3].get("view.runs") == "1" and
                  open_views[0][3].get("view.flat") == "0:1",
                  f"rank {r}: default view at open is one byte run")
            check(open_hints[0][3].get("open.comm_size") == str(size),
                  f"rank {r}: open.comm_size")
        set_views = [s for s in raw.settings if s[1] == "MPI_File_set_view"]
        check(all(is_view(s) for s in set_views),
              f"rank {r}: set_view leaves the hints unchanged, so writes no hints chunk")
        views = [s for s in set_views if is_view(s)]
        if check(len(views) == 4, f"rank {r}: four view SETTINGS chunks for set_view "
                 f"(each differs from the view before it)"):
            v = views[0][3]
            want_flat = ",".join(f"{i * block * size}:{block}" for i in range(blocks))
            check(v.get("view.disp") == str(r * block) and
                  v.get("view.filetype_size") == str(block * blocks) and
                  v.get("view.filetype_extent") == str(block * blocks * size) and
                  v.get("view.runs") == str(blocks) and v.get("view.flat") == want_flat and
                  v.get("view.etype_size") == "1" and v.get("view.datarep") == "native",
                  f"rank {r}: interleaved view flattened ({ {k: x for k, x in v.items() if k.startswith('view.')} })")
            check(views[1][3].get("view.runs") == "1", f"rank {r}: byte view after reset")
            big = views[3][3]
            check(big.get("view.runs") == "1024" and big.get("view.vector") == "1024:1024:4096"
                  and "view.flat" not in big,
                  f"rank {r}: a 4 MiB hvector view comes as view.vector ({big})")

    # ---- point-to-point and requests ----
    for r in ranks:
        raw = raws[r]
        right, left = (r + 1) % size, (r + size - 1) % size
        isend, irecv = top(raw, "MPI_Isend"), top(raw, "MPI_Irecv")
        if check(len(isend) == 1 and len(irecv) == 1, f"rank {r}: one Isend and one Irecv"):
            s, v = isend[0], irecv[0]
            check(raw.strings.get(s.object) == "world", f"rank {r}: Isend object 'world'")
            check(s.peer == right and s.tag == 7 and s.size == 64 and s.flags & F_NONBLOCKING,
                  f"rank {r}: Isend peer/tag/size {s}")
            check(v.peer == NO_RANK and v.tag == 7, f"rank {r}: Irecv start has ANY_SOURCE")
            wall = top(raw, "MPI_Waitall")
            if check(len(wall) == 1, f"rank {r}: one Waitall"):
                kids = [k for k in raw.children(wall[0]) if k.name == "tracer_complete"]
                by_link = {k.link: k for k in kids}
                check(s.link in by_link and v.link in by_link,
                      f"rank {r}: Waitall has both completions as children")
                if v.link in by_link:
                    c = by_link[v.link]
                    check(c.peer == left and c.tag == 7 and c.size == 64 and c.result == 64,
                          f"rank {r}: Irecv completion resolves source {left}, tag, bytes ({c})")
        # Sendrecv on the reversed communicator: world peers, recv half as a child.
        sr = top(raw, "MPI_Sendrecv")
        if check(len(sr) == 1, f"rank {r}: one Sendrecv"):
            rr = size - 1 - r
            dest_world = size - 1 - (rr + 1) % size
            src_world = size - 1 - (rr + size - 1) % size
            x = sr[0]
            check(raw.strings.get(x.object, "").startswith("comm-") and
                  raw.strings.get(x.object, "").endswith(f"size={size}"),
                  f"rank {r}: Sendrecv object names the split communicator")
            check(x.peer == dest_world and x.tag == 3 and x.size == 8,
                  f"rank {r}: Sendrecv send half peer {x.peer} == world {dest_world}")
            half = [k for k in raw.children(x) if k.name == "tracer_complete"]
            check(len(half) == 1 and half[0].peer == src_world and half[0].size == 8 and
                  half[0].link == 0, f"rank {r}: Sendrecv receive half from world {src_world}")
        if r == 0:
            recvs = top(raw, "MPI_Recv")
            got = sorted((e.peer, e.tag) for e in recvs)
            check(got == [(i, 9 + i) for i in range(1, size)],
                  f"rank 0: ANY_SOURCE/ANY_TAG receives resolved ({got})")
        else:
            sends = top(raw, "MPI_Send")
            check(len(sends) == 1 and sends[0].peer == 0 and sends[0].tag == 9 + r,
                  f"rank {r}: Send to 0 with tag {9 + r}")

    # ---- collectives ----
    for r in ranks:
        raw = raws[r]
        bc = top(raw, "MPI_Bcast")
        if check(len(bc) == 1, f"rank {r}: one Bcast"):
            check(bc[0].peer == size - 1 and bc[0].tag == size and bc[0].size == 8 and
                  bc[0].flags & F_COLLECTIVE, f"rank {r}: Bcast root/comm size/bytes {bc[0]}")
        ar = top(raw, "MPI_Allreduce")
        if check(len(ar) == 1, f"rank {r}: one Allreduce"):
            check(ar[0].peer == NO_RANK and ar[0].tag == size and ar[0].size == 8,
                  f"rank {r}: Allreduce no root, size 8")
        a2a = top(raw, "MPI_Alltoall")
        if check(len(a2a) == 1, f"rank {r}: one Alltoall"):
            check(a2a[0].size == 8 * size, f"rank {r}: Alltoall bytes sent {a2a[0].size}")
        check(len(top(raw, "MPI_Barrier")) == 1, f"rank {r}: one Barrier")

    # ---- what MPICH calls on its own, nested inside MPI-IO calls ----
    nested = collections.Counter()
    for r in ranks:
        raw = raws[r]
        for e in raw.sorted_events():
            if 300 <= e.func < 400 and e.depth == 0:
                for k in raw.children(e):
                    nested[(e.name, k.name)] += 1
    print("children of MPI-IO calls (all ranks):")
    for (parent, child), n in sorted(nested.items()):
        print(f"  {parent} > {child}: {n}")

    print("OK" if not FAILURES else f"{len(FAILURES)} check(s) failed")
    return 0 if not FAILURES else 1


if __name__ == "__main__":
    sys.exit(main())
