"""End-to-end tests of storage servers in the trace (issue 14) on a real GlusterFS volume on
loopback: scripts/gluster-lab.sh starts a one-brick distribute volume with its daemons traced in
server mode, HPIO runs on it with 4 ranks (collective and independent) under
`pioscope bench --trace --servers`, and the trace holds the brick daemon as a `server`
container whose storage writes add up to what the clients wrote. Needs root and FUSE (CI has
both); GlusterFS is installed by scripts/install-deps.sh."""
import json
import os
import socket
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from conftest import ROOT, Trace, pioscope
from test_viewer import Server, view, viewer

LAB = ROOT / "scripts" / "gluster-lab.sh"
WRITES = {"write", "pwrite", "pwrite64", "writev", "pwritev", "pwritev64"}
MODES = ("collective", "independent")


def lab(*args):
    return subprocess.run([str(LAB), *map(str, args)], capture_output=True, text=True,
                          check=True)


def leftovers(lab_dir: Path):
    """What of the lab still runs or is mounted: daemons with its raw directory in their
    environment or its mount point on their command line, and mounts under it."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            env = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if f"PIOSCOPE_RAW_DIR={lab_dir}/servers".encode() in env or str(lab_dir).encode() in cmd:
            found.append(cmd.decode(errors="replace"))
    found += [line for line in Path("/proc/mounts").read_text().splitlines()
              if str(lab_dir) in line]
    return found


@pytest.fixture(scope="module")
def gluster(tmp_path_factory):
    """A one-brick distribute volume, its servers traced; down at the end whatever happens."""
    lab_dir = tmp_path_factory.mktemp("gluster-lab")
    try:
        lab("up", "--dir", lab_dir, "--bricks", 1, "--type", "distribute")
        yield lab_dir
    finally:
        lab("down", "--dir", lab_dir)


def traced_hpio(gluster, out: Path, *hpio_args) -> dict:
    """HPIO with 4 ranks on the volume, collective and independent, traced with servers."""
    found = {}
    for mode in MODES:
        trace = out / f"hpio-{mode}"
        pioscope("bench", "hpio", "-n", 4, "--trace", trace, "--servers", gluster / "servers",
                 "--", "--mode", mode, *hpio_args, "--iterations", 1,
                 "--path", gluster / "mnt" / f"{out.name}-{mode}.dat")
        found[mode] = Trace(trace)
    return found


@pytest.fixture(scope="module")
def traces(gluster, tmp_path_factory):
    """HPIO's 32-byte regions, 16 KiB per rank."""
    return traced_hpio(gluster, tmp_path_factory.mktemp("gluster-traces"), "--region-count", 512)


@pytest.fixture(scope="module")
def large_traces(gluster, tmp_path_factory):
    """HPIO's 1 KiB regions, 2 MiB per rank: more than the client's write-behind window (1 MB
    a file by default), so the brick writes while the clients' calls run. With 16 KiB a rank a
    collective write fits the window whole and reaches the brick only after the call returned,
    which no call explains."""
    return traced_hpio(gluster, tmp_path_factory.mktemp("gluster-large-traces"),
                       "--region-size", 1024, "--region-count", 2048)


def processes(trace: Trace) -> pd.DataFrame:
    return pd.DataFrame(trace.meta["processes"])


def written(trace: Trace, processes_of, under: str) -> int:
    """Bytes the write calls of `processes_of` moved to files whose path starts with `under`."""
    ids = trace.files[trace.files.path.str.startswith(under)].file_id
    ev = trace.events
    w = ev[ev.process.isin(processes_of) & ev.file_id.isin(ids) & ev.func.isin(WRITES)
           & (ev.result > 0)]
    return int(w.result.sum())


@pytest.mark.parametrize("mode", MODES)
def test_brick_daemon_is_a_server_container(gluster, traces, mode):
    t = traces[mode]
    procs = processes(t)
    assert sorted(procs[procs.kind == "process"]["rank"]) == [0, 1, 2, 3]
    servers = procs[procs.kind == "server"]
    brick = str(gluster / "bricks" / "b0")
    bricks = servers[servers.facts.map(lambda f: f.get("brick") == brick)]
    assert len(bricks) == 1
    facts = bricks.iloc[0].facts
    host = socket.gethostname()
    assert (facts["role"], facts["host"], facts["server"]) == ("data", host, f"{host}:{brick}")
    b = bricks.iloc[0]
    assert (b["rank"], b["host"]) == (-1, f"{host}:{brick}")
    assert b["events"] > 0
    # Every server record lies in the job's window.
    ev = t.events[t.events.process.isin(servers.process)]
    assert (ev.start_ns >= 0).all()
    assert (ev.start_ns <= t.meta["job"]["duration_ns"]).all()
    # Network records name the peer: `socket:<address>:<port>`; storage records the brick's files.
    paths = set(t.files[t.files.file_id.isin(ev.file_id.dropna())].path)
    assert any(p.startswith("socket:127.0.0.1:") for p in paths)
    assert any(p.startswith(brick + "/") for p in paths)


@pytest.mark.parametrize("mode", MODES)
def test_brick_wrote_what_the_clients_wrote(gluster, traces, mode):
    t = traces[mode]
    procs = processes(t)
    clients = procs[procs.kind == "process"].process
    brick = procs[(procs.kind == "server")
                  & procs.facts.map(lambda f: "brick" in f)].process
    sent = written(t, clients, str(gluster / "mnt") + "/")
    stored = written(t, brick, str(gluster / "bricks" / "b0") + "/")
    assert sent > 0
    assert stored == sent


@pytest.mark.parametrize("mode", MODES)
def test_brick_writes_are_tied_to_the_client_calls_that_caused_them(large_traces, mode):
    """The brick writes through its gfid handles (`.glusterfs/ab/cd/GFID`), a name no client
    uses: `stats --by server` ties them to the client's MPI-IO writes by time (docs/CLI.md).
    Every data access of the brick is either tied or counted untied, and the writes the
    clients' calls were running for are tied to those calls, on the one brick."""
    table = json.loads(pioscope("stats", large_traces[mode].path, "--by", "server",
                                "--json").stdout)
    servers = table["servers"]
    accesses = sum(s["storage_accesses"] for s in servers["servers"])
    tied = sum(c["server_ops"] for c in servers["calls"])
    assert accesses > 0
    assert tied + servers["untied_server_ops"] == accesses
    writes = [c for c in servers["calls"] if c["direction"] == "write"]
    assert writes and all(c["func"].startswith("MPI_File_write") for c in writes)
    assert all(c["servers"] == 1 and c["ranks"] > 0 for c in writes)
    assert sum(c["server_ops"] for c in writes) > servers["untied_server_ops"]


def test_viewer_shows_server_rows(gluster, traces):
    trace = traces["collective"].path
    brick = f"{socket.gethostname()}:{gluster / 'bricks' / 'b0'}"
    server = Server([trace])
    try:
        with viewer(server.url) as page:
            labels = [r["label"] for r in view(page, "rowList(0)")]
            assert any(label.startswith(brick) for label in labels), labels
            assert {f"rank {r}" for r in range(4)} <= set(labels)
            page.screenshot("viewer-gluster-servers")
            assert page.errors == []
    finally:
        server.stop()


def brick_daemons(lab_dir: Path):
    """Pids of the lab's brick daemons: glusterfsd with its raw directory in their environment."""
    out = subprocess.run(["pgrep", "-x", "glusterfsd"], capture_output=True, text=True).stdout
    mark = f"PIOSCOPE_RAW_DIR={lab_dir}/servers".encode()
    return [int(pid) for pid in out.split()
            if mark in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")]


def test_restart_starts_a_new_traced_brick_daemon(gluster, traces):
    """`restart` stops and starts the volume: a new brick daemon, traced (a raw file of its
    own), and the mount back with what was written before."""
    before = brick_daemons(gluster)
    kept = gluster / "mnt" / "kept.bin"
    kept.write_bytes(b"k" * 4096)
    lab("restart", "--dir", gluster)
    after = brick_daemons(gluster)
    assert len(before) == len(after) == 1 and before != after
    assert kept.read_bytes() == b"k" * 4096
    assert len(list((gluster / "servers").glob(f"*-{after[0]}-*.praw"))) == 1


def test_down_leaves_nothing_behind(gluster, traces):
    """Last: takes the module's lab down, twice (idempotent)."""
    assert leftovers(gluster), "the lab should be up before this test"
    for _ in range(2):
        lab("down", "--dir", gluster)
        assert leftovers(gluster) == []
    assert not (gluster / "mnt").exists()
    assert not (gluster / "bricks").exists()
    # The servers' raw files are what the lab collected: they stay.
    assert list((gluster / "servers").glob("*.praw"))


def test_null_bricks_discard_data_and_keep_the_file_system_working(tmp_path, gluster):
    """With the module's lab down (glusterd is one per machine), a lab with null bricks.
    Data written through the mount never reaches the brick's disk (its file is a hole of the
    right size); sizes and metadata stay right, so the file system keeps working (issue 14, item 6)."""
    lab("down", "--dir", gluster)
    lab_dir = tmp_path / "null-lab"
    try:
        lab("up", "--dir", lab_dir, "--null")
        data = lab_dir / "mnt" / "data.bin"
        data.write_bytes(b"x" * (3 << 20))
        os.sync()
        assert data.stat().st_size == 3 << 20
        # (reads through the mount may come from the client's cache; the brick holds zeros)
        brick_file = lab_dir / "bricks" / "b0" / "data.bin"
        st = brick_file.stat()
        assert st.st_size == 3 << 20
        # No data block: at most the one block of GlusterFS's extended attributes.
        assert st.st_blocks * 512 <= 4096
        assert brick_file.read_bytes() == bytes(3 << 20)
        (lab_dir / "mnt" / "dir").mkdir()
        (lab_dir / "mnt" / "data.bin").rename(lab_dir / "mnt" / "dir" / "moved.bin")
        assert (lab_dir / "mnt" / "dir" / "moved.bin").stat().st_size == 3 << 20
    finally:
        lab("down", "--dir", lab_dir)
    assert leftovers(lab_dir) == []


@pytest.mark.parametrize("mode", MODES)
def test_brick_daemon_has_its_sampled_counters(traces, mode):
    """The lab's sampler (`pioscope sample --match glusterfsd`) puts the brick daemon's CPU on
    its server container, and `stats --by server` shows it."""
    t = traces[mode]
    procs = processes(t)
    brick = procs[(procs.kind == "server") & procs.facts.map(lambda f: "brick" in f)]
    counters = pd.read_parquet(t.path / "counters.parquet")
    cpu = counters[counters.process.isin(brick.process) & (counters.counter == "cpu_user_pct")]
    assert len(cpu) > 0
    table = json.loads(pioscope("stats", t.path, "--by", "server", "--json").stdout)
    rows = [s for s in table["servers"]["servers"] if s["server"] == brick.iloc[0]["host"]]
    assert len(rows) == 1 and rows[0]["cpu_percent"] is not None
    assert rows[0]["storage_accesses"] > 0 and rows[0]["network_ops"] > 0
