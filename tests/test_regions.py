"""User phases from include/pioscope.h nest like calls, and the header costs nothing without
the tracer."""
import subprocess

from conftest import run_traced


def test_regions_nest_and_enclose_calls(programs, workdir, tmp_path):
    _, trace = run_traced(tmp_path / "trace", programs["regions"], workdir)
    regions = trace.calls("region").set_index("region")
    assert sorted(regions.index) == ["output", "write"]
    assert set(trace.calls("region").layer) == {"region"}
    assert regions.loc["output", "depth"] == 0 and regions.loc["write", "depth"] == 1
    assert regions.loc["write", "parent"] == regions.loc["output", "id"]

    ev = trace.on_file("regions.bin")
    pwrites = ev[ev.func == "pwrite"]
    assert len(pwrites) == 2
    assert (pwrites.parent == regions.loc["write", "id"]).all()
    assert (pwrites.depth == 2).all()
    close = ev[ev.func == "close"]
    assert close.depth.tolist() == [0] and close.parent.isna().all()
    # The region spans its calls.
    w = regions.loc["write"]
    assert (pwrites.start_ns >= w.start_ns).all()
    assert ((pwrites.start_ns + pwrites.duration_ns) <= w.start_ns + w.duration_ns).all()


def test_regions_are_no_ops_without_the_tracer(programs, workdir):
    result = subprocess.run([programs["regions"], workdir])
    assert result.returncode == 0
    assert (workdir / "regions.bin").read_bytes() == b"abcd"
