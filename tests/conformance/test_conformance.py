"""The conformance suite's subset (suite.SUBSET): ROMIO tests, parallel HDF5 and the bench
programs run untraced and traced with the same exit status and output, their traces holding
the MPI-IO calls and bytes the programs make, replayed by `simulate --trace`, and their reports
free of the false findings of issue 13. `run_suite.py --all` runs every program."""
import pytest

import suite
from false_findings import checks_for


@pytest.fixture(scope="session")
def outcomes(tmp_path_factory):
    """Measures each program once, when a test first asks for it."""
    suite.build(suite.SUBSET)
    cache = {}

    def outcome(name: str) -> suite.Outcome:
        if name not in cache:
            work = tmp_path_factory.mktemp(name.replace(" ", "_"))
            cache[name] = suite.measure(suite.BY_NAME[name], work)
        return cache[name]

    return outcome


SUBSET = [p.name for p in suite.SUBSET]


@pytest.mark.parametrize("name", SUBSET)
def test_runs_untraced_and_traced_with_exit_status_0(outcomes, name):
    outcome = outcomes(name)
    assert (outcome.untraced.status, outcome.traced.status) == (0, 0), \
        (outcome.untraced.stderr, outcome.traced.stderr)


@pytest.mark.parametrize("name", SUBSET)
def test_traced_output_is_the_untraced_output(outcomes, name):
    untraced, traced = outcomes(name).outputs()
    assert traced == untraced


@pytest.mark.parametrize("name", SUBSET)
def test_trace_has_the_mpiio_bytes_the_program_moves(outcomes, name):
    outcome = outcomes(name)
    assert outcome.calls() > 0
    assert outcome.unexpected_bytes() == {}


@pytest.mark.parametrize("name", SUBSET)
def test_simulate_replays_the_trace(outcomes, name):
    replay = outcomes(name).replay
    assert replay is not None and replay.returncode == 0, replay and replay.stderr


def false_finding_cases() -> list:
    return [pytest.param(name, check, id=f"{name}-{check.__name__}")
            for name in SUBSET for check in checks_for(name)]


@pytest.mark.parametrize("name,check", false_finding_cases())
def test_report_has_no_false_finding(outcomes, name, check):
    outcome = outcomes(name)
    assert outcome.report, "no report"
    assert check(outcome) == []
