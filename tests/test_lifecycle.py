"""Every way a program can end leaves a readable trace: threads, fork, exit statuses, fatal
signals, _exit, MPI_Abort, and a damaged raw file; and the traced program never notices the
tracer."""
import signal
import subprocess

import pytest

from conftest import Trace, pioscope, run_traced


def pwrites_on(trace, name):
    ev = trace.on_file(name)
    return ev[ev.func == "pwrite"]


def test_threads_each_record_their_own_calls(programs, workdir, tmp_path):
    _, trace = run_traced(tmp_path / "trace", programs["threads"], workdir)
    per_thread = {}
    for i in range(4):
        ev = pwrites_on(trace, f"thread-{i}.bin")
        assert len(ev) == 1000
        assert list(ev.sort_values("start_ns")["offset"]) == list(range(1000))
        threads = set(ev.thread)
        assert len(threads) == 1
        per_thread[i] = threads.pop()
    assert len(set(per_thread.values())) == 4
    assert trace.meta["partial"] is False


def test_fork_child_traces_into_its_own_process(programs, workdir, tmp_path):
    _, trace = run_traced(tmp_path / "trace", programs["lifecycle"], workdir, "fork")
    assert len(trace.meta["processes"]) == 2
    child, parent = pwrites_on(trace, "child.bin"), pwrites_on(trace, "parent.bin")
    assert len(child) == 20 and len(parent) == 10
    assert set(child.process).isdisjoint(set(parent.process))
    assert set(parent.process) == set(pwrites_on(trace, "main.bin").process)
    child_meta = [p for p in trace.meta["processes"] if p.get("forked_from")]
    assert len(child_meta) == 1
    assert trace.meta["partial"] is False


@pytest.mark.parametrize("how,status", [("exit", 7), ("_exit", 5)])
def test_exit_status_is_passed_on_and_trace_complete(programs, workdir, tmp_path, how, status):
    _, trace = run_traced(tmp_path / "trace", programs["lifecycle"], workdir, how, status,
                          expect_status=status)
    assert len(pwrites_on(trace, "main.bin")) == 100
    assert trace.meta["partial"] is False


@pytest.mark.parametrize("how,sig", [("sigterm", signal.SIGTERM), ("abort", signal.SIGABRT),
                                     ("segv", signal.SIGSEGV)])
def test_fatal_signal_leaves_a_flagged_trace(programs, workdir, tmp_path, how, sig):
    _, trace = run_traced(tmp_path / "trace", programs["lifecycle"], workdir, how,
                          expect_status=128 + sig)
    assert len(pwrites_on(trace, "main.bin")) == 100
    assert trace.meta["partial"] is True
    reasons = " ".join(trace.meta["partial_reasons"])
    assert sig.name in reasons


def test_mpi_abort_keeps_the_aborting_ranks_records(programs, workdir, tmp_path):
    """Issue 12: MPI_Abort left a trace with 0 events; the job still ends as untraced."""
    untraced = subprocess.run(["mpiexec", "-n", "2", programs["mpi_abort"], workdir],
                              capture_output=True, check=False)
    assert untraced.returncode == 3
    _, trace = run_traced(tmp_path / "trace", programs["mpi_abort"], workdir, ranks=2,
                          expect_status=untraced.returncode)
    assert len(pwrites_on(trace, "rank-0.bin")) == 100
    assert trace.meta["partial"] is True
    assert any("MPI_Abort called with error code 3" in r for r in trace.meta["partial_reasons"])


def test_descriptor_768_belongs_to_the_program(tmp_path):
    """Issue 12: the tracer held descriptor 768; a shell's `exec 768>out` lost its output."""
    out = tmp_path / "out"
    _, trace = run_traced(tmp_path / "trace", "bash", "-c",
                          f"exec 768>{out}; echo hi >&768; exec 768>&-")
    assert out.read_text() == "hi\n"
    assert trace.meta["partial"] is False


def test_corrupt_raw_file_keeps_records_before_the_damage(programs, workdir, tmp_path):
    trace_dir = tmp_path / "trace"
    run_traced(trace_dir, programs["threads"], workdir, extra=["--keep-raw"])
    raws = sorted(tmp_path.glob("**/*.praw"))
    assert len(raws) == 1, raws
    raw = raws[0]
    size = raw.stat().st_size
    with open(raw, "r+b") as f:
        f.truncate(size - 40)  # cut into the last chunk
    merged = tmp_path / "merged"
    result = pioscope("merge", raw.parent, "-o", merged)
    assert raw.name in result.stderr
    trace = Trace(merged)
    assert trace.meta["partial"] is True
    assert any(raw.name in r for r in trace.meta["partial_reasons"])
    assert len(trace.events) > 0


def test_not_a_trace_is_a_clear_error(tmp_path):
    result = pioscope("stats", tmp_path, check=False)
    assert result.returncode == 2
    assert str(tmp_path) in result.stderr
    assert "panicked" not in result.stderr


def test_missing_program_is_a_clear_error(tmp_path):
    result = pioscope("run", "-o", tmp_path / "t", "--", tmp_path / "no-such-program",
                      check=False)
    assert result.returncode == 2
    assert "no-such-program" in result.stderr


def test_existing_trace_is_refused_without_force(programs, workdir, tmp_path):
    trace_dir = tmp_path / "trace"
    run_traced(trace_dir, programs["lifecycle"], workdir, "exit", 0)
    again = pioscope("run", "-o", trace_dir, "--", programs["lifecycle"], workdir, "exit", "0",
                     check=False)
    assert again.returncode == 2
    assert "--force" in again.stderr
    pioscope("run", "-o", trace_dir, "--force", "--", programs["lifecycle"], workdir, "exit", "0")
