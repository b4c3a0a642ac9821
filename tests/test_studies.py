"""The studies of shared/BACKGROUND.md on the presets (bench/perf/studies.py, issue 15): every
mechanism shows the direction its study describes. The simulator is deterministic, so these
are facts of the build, not timings: a change that loses one (list I/O that no longer cuts the
requests, a deferred close that no longer hides the flush) fails here."""
import subprocess
import sys

from conftest import ROOT


def test_every_study_shows_its_direction():
    r = subprocess.run([sys.executable, ROOT / "bench" / "perf" / "studies.py"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count(": shown\n") == 11
    assert "NOT shown" not in r.stdout
    assert r.stdout.rstrip().endswith("11 of 11 directions shown")
    # Each simulation is printed with the command that makes it.
    assert r.stdout.count("      pioscope simulate --system ") == 27
    # The two-phase cycles of PIOviz's HPIO on 4 nodes, in closed form.
    assert "([10, 2, 1, 1], expected [10, 2, 1, 1]" in r.stdout
    assert "([72, 9, 3, 1], expected [72, 9, 3, 1]" in r.stdout
