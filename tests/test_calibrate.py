"""`pioscope calibrate --quick` end to end: it runs the calibration benchmarks here, writes a
model that `pioscope bounds` loads, with a fit per measurement; and `bounds` on the presets."""
import json
import tomllib

import pytest

from conftest import BUILD, pioscope

pytestmark = pytest.mark.skipif(
    not (BUILD / "bin" / "pioscope-cal-net").exists(),
    reason="calibration benchmarks not built (make -C bench)")


def test_quick_calibration_writes_a_loadable_model(tmp_path):
    out = tmp_path / "system.toml"
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    r = pioscope("calibrate", "-o", out, "--quick", "--dir", scratch, "-n", "2")
    assert "model written to" in r.stdout
    assert "median error" in r.stdout
    assert "calibrate: MPI ping-pong" in r.stderr
    # The scratch directory is left as it was found.
    assert list(scratch.iterdir()) == []

    model = tomllib.loads(out.read_text())
    assert out.read_text().startswith("# system.toml: written by `pioscope calibrate` on ")
    assert model["name"] == "local"
    assert model["nodes"]["count"] == 1
    assert model["storage"]["disk"]["kind"] == "ssd"
    fits = model["calibration"]["fits"]
    names = {f["name"] for f in fits}
    # Quick: 11 ping-pong sizes (1 B .. 1 MiB); 5 request sizes (4 KiB .. 1 MiB) x 7 runs x 2
    # concurrencies; 4 metadata operations x 2 concurrencies; a barrier and an all-to-all of
    # every rank and 4 cycles of the two-phase exchange (issue 4: what a synchronization and
    # an aggregator's intake cost the job).
    assert "ping-pong 1 B" in names and "ping-pong 1 MiB" in names
    assert "barrier 2 ranks" in names and "alltoall 2 ranks" in names
    assert "write-cached seq 4 KiB x1" in names and "read-direct rand 1 MiB x2" in names
    assert "create x1" in names and "remove x2" in names
    assert "rewrite-cached seq 1 MiB x2" in names
    assert sum(n.startswith("exchange cycle ") for n in names) == 4
    assert len(fits) == 11 + 5 * 7 * 2 + 4 * 2 + 2 + 4
    # Issue 4 (accuracy): parallel service, the read copy rate and the datatype cost are fitted.
    assert model["storage"]["server_threads"] >= 1
    assert model["storage"]["cache"]["read_memory_bandwidth"] > 0
    assert model["mpiio"]["exchange_piece_ns"] >= 0
    assert model["storage"]["cache"]["rewrite_memory_bandwidth"] > 0
    assert model["nodes"]["cores"] >= 1 and model["network"]["intra_node_bandwidth"] > 0
    for f in fits:
        assert f["measured"] > 0 and f["model"] > 0 and f["unit"] in ("s", "B/s", "1/s")

    b = json.loads(pioscope("bounds", "--system", out, "--json").stdout)
    assert b["system"] == "local"
    assert b["clients"] == model["nodes"]["ranks_per_node"]
    assert b["write"]["bytes_per_s"] > 0 and b["write"]["limited_by"]
    text = pioscope("bounds", "--system", out, "--clients", "2").stdout
    assert "limited by" in text


def test_node_cpu_of_fuse_daemons_from_runs(tmp_path):
    """Issue 15 item 9: the FUSE daemons' CPU a runs file holds (`machine.daemon_cpu`) becomes
    node CPU only with --node-cpu: the client's costs, colocated servers, and the client's
    share taken out of the server's fitted line."""
    runs, scratch = tmp_path / "runs.json", tmp_path / "scratch"
    scratch.mkdir()
    pioscope("calibrate", "-o", tmp_path / "m.toml", "--quick", "--dir", scratch, "-n", "2",
             "--save-runs", runs)
    data = json.loads(runs.read_text())
    assert "daemon_cpu" not in data["machine"]  # not a FUSE mount
    data["machine"]["daemon_cpu"] = {
        "client_per_request_s": 2e-6, "client_per_byte_s": 1e-9, "servers": 1,
        "server_per_request_s": 1e-6, "server_per_byte_s": 0.0}
    runs.write_text(json.dumps(data))
    plain, cpu = tmp_path / "plain.toml", tmp_path / "cpu.toml"
    pioscope("calibrate", "--from-runs", runs, "-o", plain)
    pioscope("calibrate", "--from-runs", runs, "-o", cpu, "--node-cpu")
    p, c = (tomllib.loads(f.read_text()) for f in (plain, cpu))
    assert "client_cpu_per_request_ns" not in p["nodes"] and "colocated" not in p["storage"]
    assert c["nodes"]["client_cpu_per_request_ns"] == 2000
    assert c["nodes"]["client_cpu_bandwidth"] == pytest.approx(1e9)
    assert c["storage"]["colocated"] is True
    assert c["storage"]["cpu_per_request_ns"] == max(0, p["storage"]["cpu_per_request_ns"] - 2000)


def slowed(runs: dict, k: float) -> dict:
    """A runs file whose every measurement took k times as long."""
    out = json.loads(json.dumps(runs))
    net, storage = out["net"], out["storage"]
    for p in net["points"]:
        p["one_way_s"] *= k
    for e in net["exchange"]:
        e["s"] *= k
    for key in ("barrier_s", "alltoall_s"):
        net[key] *= k
    net["fresh_memory_bytes_per_s"] /= k
    for r in storage["runs"]:
        r["per_request_s"] *= k
        r["bytes_per_s"] /= k
    for r in storage["metadata"]:
        r["per_op_s"] *= k
        r["ops_per_s"] /= k
    return out


def test_several_runs_files_fit_their_medians(tmp_path):
    """`--from-runs A B C`: each measurement the median of its runs, so three runs, one of
    them twice and one three times as slow, fit the model of the middle one alone; runs that
    do not measure the same things are refused, naming the run and the measurement."""
    runs, scratch = tmp_path / "runs.json", tmp_path / "scratch"
    scratch.mkdir()
    pioscope("calibrate", "-o", tmp_path / "m.toml", "--quick", "--dir", scratch, "-n", "2",
             "--save-runs", runs)
    data = json.loads(runs.read_text())
    files = []
    for k in (3.0, 1.0, 2.0):
        files.append(tmp_path / f"runs-x{k:g}.json")
        files[-1].write_text(json.dumps(slowed(data, k)))
    median, middle = tmp_path / "median.toml", tmp_path / "middle.toml"
    r = pioscope("calibrate", "--from-runs", *files, "-o", median)
    assert "model written to" in r.stdout
    pioscope("calibrate", "--from-runs", files[2], "-o", middle)
    m, x = (tomllib.loads(f.read_text()) for f in (median, middle))
    assert m == x
    assert m != tomllib.loads((tmp_path / "m.toml").read_text())

    short = slowed(data, 1.0)
    dropped = short["storage"]["runs"].pop()
    files[1].write_text(json.dumps(short))
    r = pioscope("calibrate", "--from-runs", *files, "-o", tmp_path / "bad.toml", check=False)
    assert r.returncode != 0
    assert (f"run 2 has no {dropped['mode']} {dropped['pattern']} of {dropped['size']} B "
            f"x{dropped['concurrency']} that run 1 has") in r.stderr
    assert not (tmp_path / "bad.toml").exists()


def test_calibrate_refuses_to_overwrite(tmp_path):
    out = tmp_path / "system.toml"
    out.write_text("keep me\n")
    r = pioscope("calibrate", "-o", out, "--quick", "--dir", tmp_path, check=False)
    assert r.returncode == 2
    assert "already exists" in r.stderr
    assert out.read_text() == "keep me\n"


def test_bounds_of_the_presets():
    b = json.loads(pioscope("bounds", "--system", "pvfs2-2009", "--clients", "8",
                            "--request-size", "4M", "--json").stdout)
    # 4 data servers x a RAID-1 pair of 40 MB/s IDE disks (reads use both).
    assert b["read"]["limited_by"] == "disks"
    assert b["read"]["bytes_per_s"] == 320e6
    assert b["metadata"]["creates"]["per_s"] == pytest.approx(100.0)
    b = json.loads(pioscope("bounds", "--system", "lustre-fdr", "--set", "stripe_count=1",
                            "--clients", "64", "--request-size", "16M", "--json").stdout)
    assert b["stripe"] == {"targets": 1, "servers": 1, "stripe_size": 1 << 20}
    assert b["write"]["bytes_per_s"] == 1.5e9


def test_bad_model_errors_name_the_field(tmp_path):
    r = pioscope("bounds", "--system", "pvfs2-2009", "--set", "stripe_size=0", check=False)
    assert r.returncode == 2
    assert "--set stripe_size=0: layout.stripe_size: 0 is not allowed" in r.stderr
    bad = tmp_path / "bad.toml"
    text = (BUILD.parent / "crates/pioscope-sim/presets/pvfs2-2009.toml").read_text()
    bad.write_text(text.replace('dirty_limit = "400M"', 'dirty_limit = "2G"'))
    r = pioscope("bounds", "--system", bad, check=False)
    assert r.returncode == 2
    line = next(i for i, l in enumerate(bad.read_text().splitlines(), 1)
                if l.startswith("dirty_limit"))
    assert f"{bad}:{line}: storage.cache.dirty_limit: 2147483648 is larger than" in r.stderr
    r = pioscope("bounds", "--system", "no-such-preset", check=False)
    assert "neither a preset (local, pvfs2-2009, lustre-fdr) nor a file" in r.stderr
