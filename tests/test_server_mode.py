"""End-to-end tests of the runtime's server mode (issue 14, items 2 and 6; docs/SERVERS.md): a
Python process stands in for a server daemon, preloaded with libpioscope-posix.so and
PIOSCOPE_SERVER=1. Its records reach the raw file while it runs, its sockets are named by their
peer, and null storage discards the data written under a prefix while sizes stay right."""
import os
import subprocess
import sys
import time

from conftest import BUILD, Trace, pioscope

RUNTIME = BUILD / "lib" / "libpioscope-posix.so"


def server_env(raw, **extra):
    env = dict(os.environ, LD_PRELOAD=str(RUNTIME), PIOSCOPE_RAW_DIR=str(raw),
               PIOSCOPE_SERVER="1", **extra)
    return env


def merged(tmp_path, raw) -> Trace:
    out = tmp_path / "trace"
    pioscope("merge", raw, "-o", out)
    return Trace(out)


def on_path(t: Trace, path: str):
    ids = t.files[t.files.path == path].file_id
    return t.events[t.events.file_id.isin(ids)]


def test_records_reach_the_raw_file_while_the_server_runs(tmp_path):
    raw, data = tmp_path / "raw", tmp_path / "data.bin"
    code = (f"import os, time\n"
            f"fd = os.open({str(data)!r}, os.O_CREAT | os.O_WRONLY, 0o644)\n"
            f"os.write(fd, b'x' * 4096)\n"
            f"print('written', flush=True)\n"
            f"time.sleep(30)\n")
    daemon = subprocess.Popen([sys.executable, "-c", code],
                              env=server_env(raw, PIOSCOPE_FLUSH_MS="200"),
                              stdout=subprocess.PIPE, text=True)
    try:
        assert daemon.stdout.readline() == "written\n"
        time.sleep(1.0)  # five flush periods
        t = merged(tmp_path, raw)
        w = t.on_file("data.bin")
        assert list(w[w.func == "write"].result) == [4096]
        assert daemon.poll() is None  # read while it runs
    finally:
        daemon.kill()
        daemon.wait()


def test_sockets_are_named_by_their_peer(tmp_path):
    raw = tmp_path / "raw"
    code = ("import os, socket\n"
            "ls = socket.create_server(('127.0.0.1', 0))\n"
            "c = socket.create_connection(ls.getsockname())\n"
            "s, peer = ls.accept()\n"
            "os.write(s.fileno(), b'p' * 300)\n"
            "assert os.read(c.fileno(), 1000) == b'p' * 300\n"
            "print(peer[1], c.getsockname()[1], ls.getsockname()[1])\n")
    out = subprocess.run([sys.executable, "-c", code], env=server_env(raw), check=True,
                         capture_output=True, text=True).stdout.split()
    client_port, server_port = int(out[0]), int(out[2])
    t = merged(tmp_path, raw)
    # The accepted socket's peer is the client; the client's peer is the server.
    sent = on_path(t, f"socket:127.0.0.1:{client_port}")
    got = on_path(t, f"socket:127.0.0.1:{server_port}")
    # (closing at exit, the sockets' close is recorded on them too)
    assert [(e.func, e.result) for e in sent.itertuples()] == [("write", 300), ("close", 0)]
    assert [(e.func, e.result) for e in got.itertuples()] == [("read", 300), ("close", 0)]
    assert t.meta["processes"][0]["facts"]["server_mode"] == "1"


def test_null_storage_discards_data_and_keeps_sizes(tmp_path):
    raw, null, kept = tmp_path / "raw", tmp_path / "null", tmp_path / "kept.bin"
    null.mkdir()
    target = null / "f.bin"
    code = (f"import os\n"
            f"fd = os.open({str(target)!r}, os.O_CREAT | os.O_RDWR, 0o644)\n"
            f"assert os.pwrite(fd, b'x' * 65536, 1 << 20) == 65536\n"
            f"assert os.write(fd, b'y' * 100) == 100\n"
            f"assert os.lseek(fd, 0, os.SEEK_CUR) == 100\n"
            f"assert os.writev(fd, [b'a' * 28, b'b' * 100]) == 128\n"
            f"assert os.pread(fd, 16, 0) == bytes(16)\n"
            f"os.close(fd)\n"
            f"fd = os.open({str(kept)!r}, os.O_CREAT | os.O_WRONLY, 0o644)\n"
            f"os.write(fd, b'z' * 10)\n"
            f"os.close(fd)\n")
    subprocess.run([sys.executable, "-c", code], check=True,
                   env=server_env(raw, PIOSCOPE_NULL_PREFIX=str(null) + "/"))
    st = target.stat()
    assert st.st_size == (1 << 20) + 65536
    assert st.st_blocks == 0  # nothing reached the disk
    assert target.read_bytes() == bytes(st.st_size)
    assert kept.read_bytes() == b"z" * 10  # outside the prefix: written
    t = merged(tmp_path, raw)
    calls = t.on_file("f.bin")
    writes = calls[calls.func.isin(["pwrite", "pwrite64", "write", "writev"])]
    assert sorted(writes.result) == [100, 128, 65536]
    assert t.meta["processes"][0]["facts"]["null_prefix"] == str(null) + "/"


def test_rotation_keeps_the_disk_use_under_the_cap_and_counts_what_it_drops(tmp_path, programs):
    """A daemon with 64 KiB segments and a 256 KiB cap writes 40002 records (1.2 MiB): the
    oldest segments are deleted, the disk use stays under the cap, and the merge joins the
    segments left into one server container and reports exactly the records it lost."""
    job, servers, data = tmp_path / "job", tmp_path / "servers", tmp_path / "data.bin"
    n = 40000
    env = server_env(servers, PIOSCOPE_SERVER_FILE_BYTES="64K",
                     PIOSCOPE_SERVER_MAX_BYTES="256K", PIOSCOPE_BUFFER_BYTES="16K")
    # The job runs the daemon from start to end, so its window holds every daemon record.
    code = (f"import subprocess\n"
            f"subprocess.run([{str(programs['pwrite_loop'])!r}, {str(data)!r}, '{n}'],"
            f" env={env!r}, check=True)\n"
            f"open({str(tmp_path / 'after.txt')!r}, 'w').write('done')\n")
    subprocess.run([sys.executable, "-c", code], check=True,
                   env=dict(os.environ, LD_PRELOAD=str(RUNTIME), PIOSCOPE_RAW_DIR=str(job)))

    segments = sorted(servers.glob("*.praw"), key=lambda p: int(p.stem.rsplit("-", 1)[1]))
    numbers = [int(p.stem.rsplit("-", 1)[1]) for p in segments]
    on_disk = sum(p.stat().st_size for p in segments)
    assert on_disk <= 256 * 1024 + 64 * 1024
    assert numbers[0] > 0 and numbers == list(range(numbers[0], numbers[-1] + 1))

    out = tmp_path / "trace"
    merge = pioscope("merge", job, "--servers", servers, "-o", out)
    t = Trace(out)
    [server] = [p for p in t.meta["processes"] if p["kind"] == "server"]
    facts = server["facts"]
    dropped, kept = int(facts["dropped_records"]), server["events"]
    assert kept > 0 and dropped > 0
    assert dropped + kept == n + 2  # open, n pwrites, close: every record kept or counted
    assert int(facts["dropped_segments"]) == numbers[0]  # segments 0 .. first kept - 1
    assert int(facts["segment"]) == numbers[-1]
    assert server["raw_file"] == segments[0].name
    assert len(t.events[t.events.process == server["process"]]) == kept
    assert (f"server {server['host']}: {dropped} records ({facts['dropped_bytes']} bytes)"
            f" dropped by rotation") in merge.stderr


def test_a_buffer_restarted_after_each_flush_loses_and_repeats_no_record(tmp_path, programs):
    """The flusher runs every millisecond while a thread records 200000 pwrites: each flush
    that empties the buffer lets the thread start it again from its beginning (buffer.c), so
    the records of one buffer go out over many chunks; every pwrite is in the merge exactly
    once, at its own offset, in order."""
    raw, data = tmp_path / "raw", tmp_path / "data.bin"
    n = 200000
    subprocess.run([str(programs["pwrite_loop"]), str(data), str(n)], check=True,
                   env=server_env(raw, PIOSCOPE_FLUSH_MS="1"))
    t = merged(tmp_path, raw)
    w = t.on_file("data.bin")
    writes = w[w.func.isin(["pwrite", "pwrite64"])].sort_values("start_ns")
    assert list(writes.offset) == list(range(n))
    assert len(w) == n + 2  # open and close too
