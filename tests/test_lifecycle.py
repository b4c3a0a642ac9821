"""Every way a program can end leaves a readable trace: threads, fork, exit statuses, fatal
signals, _exit, MPI_Abort, and a damaged raw file; and the traced program never notices the
tracer."""
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import PIOSCOPE, Trace, pioscope, run_traced


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


def wait_for(paths, seconds=60.0):
    """Waits until every path exists; fails after `seconds`."""
    deadline = time.monotonic() + seconds
    while not all(p.exists() for p in paths):
        assert time.monotonic() < deadline, f"not written: {[p for p in paths if not p.exists()]}"
        time.sleep(0.1)


def alive(pid: int) -> bool:
    """Whether pid is a running (not zombie) process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def children_of(pid: int) -> list[int]:
    return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def assert_all_gone(pids, seconds=5.0):
    deadline = time.monotonic() + seconds
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [p for p in pids if alive(p)], "processes left running"


def test_sigterm_to_run_stops_the_job_and_merges(programs, workdir, tmp_path):
    """Issue 13: a scheduler's SIGTERM to `pioscope run` exited 143 at once, with no merge,
    and left mpiexec and the ranks running. Now it is passed on, the partial trace merged,
    and no process of the job is left."""
    trace_dir = tmp_path / "trace"
    run = subprocess.Popen([str(PIOSCOPE), "run", "-o", str(trace_dir), "-n", "2", "--",
                            str(programs["mpi_sleep"]), str(workdir), "120"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        pid_files = [workdir / f"rank-{r}.pid" for r in range(2)]
        wait_for(pid_files)
        ranks = [int(p.read_text()) for p in pid_files]
        launcher = children_of(run.pid)
        assert launcher and all(alive(p) for p in ranks + launcher)
        started = time.monotonic()
        run.send_signal(signal.SIGTERM)
        stdout, stderr = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 128 + signal.SIGTERM, (run.returncode, stdout, stderr)
    assert time.monotonic() - started < 10, "the ranks took the SIGTERM: no SIGKILL needed"
    assert "SIGTERM received" in stderr and "merging what it wrote" in stderr, stderr
    assert "events" in stdout
    assert_all_gone(ranks + launcher)
    trace = Trace(trace_dir)
    for r in range(2):
        assert len(pwrites_on(trace, f"data-{r}.bin")) == 100
    assert trace.meta["partial"] is True
    assert "SIGTERM" in " ".join(trace.meta["partial_reasons"])
    assert not Path(f"{trace_dir}.raw").exists()


def test_job_ignoring_sigterm_is_killed_after_the_grace_time(tmp_path):
    """Issue 13: what outlives the passed-on SIGTERM by 10 s is killed, never left behind."""
    pid_file = tmp_path / "sleep.pid"
    script = f"trap '' TERM; sleep 300 & echo $! > {pid_file}.tmp; mv {pid_file}.tmp {pid_file}; wait"
    run = subprocess.Popen([str(PIOSCOPE), "run", "-o", str(tmp_path / "trace"), "--",
                            "bash", "-c", script],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for([pid_file])
        sleeper = int(pid_file.read_text())
        shell = children_of(run.pid)
        started = time.monotonic()
        run.send_signal(signal.SIGTERM)
        stdout, stderr = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 128 + signal.SIGTERM, (run.returncode, stdout, stderr)
    assert 10 <= time.monotonic() - started < 30
    assert "killed what still ran after 10 s" in stderr, stderr
    assert_all_gone([sleeper, *shell])
