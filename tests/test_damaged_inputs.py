"""What a damaged or hostile input gets (issue 12): every command reading a trace store whose
meta.json or events.parquet was damaged (no processes, a duplicated process entry, a thread,
rank or process id of 10^9, one flipped bit in a count) either answers or says one line
`pioscope: error: ...` with exit 2, never a panic (101), a hang or memory sized by the damaged
value; a FIFO or a device where a table or raw file is expected is an error naming it.
Memory is checked with an address-space limit far below what the damaged values used to claim."""
import json
import os
import resource
import shutil
import signal
import subprocess

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest import PIOSCOPE, ROOT
from test_view_server import get, start

DATA = ROOT / "tests" / "data" / "hpio-collective"
# Far below the gigabytes the damaged values claimed, far above what the 4982-event trace needs.
MEMORY_LIMIT = 1 << 30


def limited():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def run(*args):
    """Runs pioscope under the memory limit; a hang fails the test by its timeout."""
    return subprocess.run([str(PIOSCOPE), *map(str, args)], capture_output=True, text=True,
                          preexec_fn=limited, timeout=120)


def answers_or_refuses(result, *why):
    """Exit 0, or exit 2 with one `pioscope: error:` line containing each of `why`."""
    if result.returncode == 0:
        return
    assert result.returncode == 2, (result.returncode, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("pioscope: error: "), result.stderr
    for w in why:
        assert w in lines[0], result.stderr


def store(tmp_path, name="t"):
    out = tmp_path / name
    shutil.copytree(DATA, out)
    return out


def edit_meta(trace, change):
    meta = json.loads((trace / "meta.json").read_text())
    change(meta)
    (trace / "meta.json").write_text(json.dumps(meta))


def set_event_column(trace, column, row, value):
    table = pq.read_table(trace / "events.parquet")
    i = table.schema.get_field_index(column)
    values = table.column(column).to_pylist()
    values[row] = value
    field = table.schema.field(column)
    table = table.set_column(i, field, pa.array(values, type=field.type))
    pq.write_table(table, trace / "events.parquet", compression="zstd")


@pytest.fixture(scope="module")
def simulated(tmp_path_factory):
    out = tmp_path_factory.mktemp("sim") / "sim"
    r = run("simulate", "--trace", DATA, "--system", "lustre-fdr", "-o", out)
    assert r.returncode == 0, r.stderr
    return out


def every_command(trace, tmp_path, simulated):
    """(name, result) of each command that reads a whole store."""
    out = tmp_path / "out"
    for fmt, suffix in [("paje", ".paje"), ("chrome", ".json"), ("csv", ".csv"), ("otf2", "")]:
        yield f"export {fmt}", run("export", trace, "--to", fmt, "-o", f"{out}{suffix}",
                                   "--force")
    yield "stats", run("stats", trace)
    yield "report", run("report", trace)
    yield "report --json", run("report", trace, "--json")
    yield "dump", run("dump", trace, "--limit", "5")
    yield "simulate", run("simulate", "--trace", trace, "--system", "lustre-fdr", "-o",
                          tmp_path / "replayed", "--force")
    yield "compare", run("compare", trace, simulated)


def test_paje_export_of_a_store_without_processes(tmp_path):
    # Issue 12: exited 101 (a panic) on the first event's unknown container.
    trace = store(tmp_path)
    edit_meta(trace, lambda m: m.__setitem__("processes", []))
    r = run("export", trace, "--to", "paje", "-o", tmp_path / "t.paje")
    answers_or_refuses(r, "event 0 has process 0, which meta.json does not list")
    assert r.returncode == 2
    assert not (tmp_path / "t.paje").exists(), "nothing left behind"


def test_duplicated_process_entries_are_refused_by_every_command(tmp_path, simulated):
    trace = store(tmp_path)
    edit_meta(trace, lambda m: m["processes"].__setitem__(1, dict(m["processes"][0])))
    for name, r in every_command(trace, tmp_path, simulated):
        assert r.returncode == 2, (name, r.stderr)
        answers_or_refuses(r, "meta.json: processes[1] is process 0, not 1")


@pytest.mark.parametrize("column,row,value", [
    ("thread", 0, 10**9),     # export --to paje declared 10^9 thread containers (a hang)
    ("thread", -1, 10**9),
    ("thread", -1, -5),
    ("rank", -1, 10**9),      # compare sized a table by the rank (3.9 GB)
    ("rank", 0, 10**9),
    ("process", 0, 10**9),    # report sized its host table by the process (8 GB)
    ("process", -1, -5),
])
def test_an_id_of_a_billion_costs_no_memory(tmp_path, simulated, column, row, value):
    trace = store(tmp_path)
    set_event_column(trace, column, row, value)
    for name, r in every_command(trace, tmp_path, simulated):
        assert r.returncode in (0, 2), (name, r.returncode, r.stderr[-2000:])
        answers_or_refuses(r)
    proc, url = start(trace)
    try:
        status, _ = get(url + "api/window?trace=0&px=600")
        assert status == 200
        status, _ = get(url + "api/window?trace=0&px=300&group=1")
        assert status == 200
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=20)


@pytest.mark.parametrize("field", [
    ("job", "ranks"), ("job", "duration_ns"), ("counts", "events"),
    ("processes", 0, "threads"), ("processes", 0, "events"), ("processes", 0, "rank"),
])
def test_one_flipped_bit_in_a_count(tmp_path, simulated, field):
    """One high bit flipped in a count of meta.json: bounded memory, an answer or one line."""
    trace = store(tmp_path)

    def flip(meta):
        *path, key = field
        node = meta
        for p in path:
            node = node[p]
        node[key] = node[key] ^ (1 << 30)
    edit_meta(trace, flip)
    for name, r in every_command(trace, tmp_path, simulated):
        assert r.returncode in (0, 2), (name, field, r.returncode, r.stderr[-2000:])
        answers_or_refuses(r)


def test_flipped_bits_in_the_events_table(tmp_path, simulated):
    """Bits flipped through events.parquet's pages and footer: simulate --trace (which once
    allocated 3.3 TB) and report answer or refuse in one line within the memory limit."""
    size = (DATA / "events.parquet").stat().st_size
    for k, at in enumerate(range(5, size - 8, size // 23)):
        trace = store(tmp_path, f"flip{k}")
        data = bytearray((trace / "events.parquet").read_bytes())
        data[at] ^= 0x40
        (trace / "events.parquet").write_bytes(bytes(data))
        for args in (["simulate", "--trace", trace, "--system", "lustre-fdr", "-o",
                      tmp_path / f"replayed{k}"],
                     ["report", trace]):
            r = run(*args)
            assert r.returncode in (0, 2), (args[0], at, r.returncode, r.stderr[-2000:])
            answers_or_refuses(r)


def test_a_fifo_or_device_in_place_of_a_table(tmp_path):
    trace = store(tmp_path)
    (trace / "events.parquet").unlink()
    os.mkfifo(trace / "events.parquet")
    r = run("stats", trace)
    answers_or_refuses(r, "events.parquet", "not a regular file (a FIFO)")
    assert r.returncode == 2
    (trace / "files.parquet").unlink()
    os.symlink("/dev/zero", trace / "files.parquet")
    r = run("dump", trace)
    answers_or_refuses(r, "files.parquet", "not a regular file (a character device)")
    assert r.returncode == 2


def test_a_fifo_or_device_among_raw_files(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    os.mkfifo(raw / "node-0-1-0.praw")
    r = run("merge", raw, "-o", tmp_path / "t")
    answers_or_refuses(r, "node-0-1-0.praw", "not a regular file (a FIFO)")
    assert r.returncode == 2
    os.symlink("/dev/zero", raw / "node-0-2-0.praw")
    r = run("merge", raw, "-o", tmp_path / "t")
    answers_or_refuses(r, "node-0-2-0.praw", "not a regular file (a character device)")
    assert r.returncode == 2
    assert not (tmp_path / "t").exists()


def test_a_table_the_parquet_decoder_panics_on_is_one_error_line(tmp_path):
    """parquet-rs panics inside its page decoding on this events.parquet (found by fuzzing):
    the store's reader turns it into an error naming the table, and nothing else is printed."""
    store = tmp_path / "store"
    shutil.copytree(ROOT / "fuzz" / "store" / "posix-basic", store)
    shutil.copy(ROOT / "tests" / "data" / "fuzz-regressions"
                / "events-definition-levels-overrun.parquet", store / "events.parquet")
    result = run("stats", store)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"pioscope: error: {store}/events.parquet: damaged table: offset + len out of bounds"]
