"""PnetCDF under the tracer (issue 16): every PnetCDF call of tests/programs/pnc_trace.c is
recorded once per rank with its variable's name, bytes and mode (typed forms under the generic
name); the MPI-IO calls PnetCDF makes and ROMIO's POSIX calls nest beneath
(ncmpi_put_vara_all -> MPI_File_write_at_all -> pwrite; ncmpi_wait_all carries the queued
iput's MPI-IO). PnetCDF is built shared from Debian's source package
(tests/third_party/pnetcdf), so its calls go through the dynamic linker."""
import pytest

from conftest import pioscope, pnetcdf_program, run_traced

RANKS = 4
ROWS, COLUMNS = 4, 10
ELEMENTS = ROWS * COLUMNS

EXPECTED_CALLS = {
    "ncmpi_create": 1, "ncmpi_enddef": 2, "ncmpi_redef": 1, "ncmpi_put_vara_all": 1,
    "ncmpi_iput_vara": 1, "ncmpi_wait_all": 1, "ncmpi_put_vara": 1, "ncmpi_close": 2,
    "ncmpi_open": 1, "ncmpi_get_vara_all": 1, "ncmpi_get_var_all": 1, "ncmpi_get_vars_all": 1,
    "ncmpi_get_varn": 1,
}


@pytest.fixture(scope="module")
def pnc(tmp_path_factory):
    work = tmp_path_factory.mktemp("pnc")
    exe = pnetcdf_program("pnc_trace", work)
    target = work / "fields.nc"
    _, trace = run_traced(work / "trace", exe, target, ranks=RANKS)
    trace.target = str(target)
    return trace


def pnetcdf(trace):
    return trace.events[trace.events.layer == "pnetcdf"]


def on(trace, func, variable):
    calls = trace.calls(func)
    return calls[calls.file_id.map(trace.path_of) == f"{trace.target}:{variable}"]


def test_every_pnetcdf_call_is_recorded_once_per_rank(pnc):
    counts = pnetcdf(pnc).groupby(["rank", "func"]).size()
    for rank in range(RANKS):
        assert counts[rank].to_dict() == EXPECTED_CALLS, rank
    assert (pnetcdf(pnc).error == 0).all()
    for func in ["ncmpi_create", "ncmpi_open", "ncmpi_enddef", "ncmpi_redef", "ncmpi_close",
                 "ncmpi_wait_all"]:
        assert set(pnc.calls(func).file_id.map(pnc.path_of)) == {pnc.target}, func


def test_vara_calls_record_variable_bytes_and_mode(pnc):
    for func, variable, element, collective in [
            ("ncmpi_put_vara_all", "temperature", 4, True),
            ("ncmpi_iput_vara", "pressure", 4, False),
            ("ncmpi_put_vara", "humidity", 8, False),
            ("ncmpi_get_vara_all", "temperature", 4, True),
            ("ncmpi_get_var_all", "pressure", 4 * RANKS, True),  # the whole variable
            ("ncmpi_get_vars_all", "pressure", 2, True),  # every second column
            ("ncmpi_get_varn", "pressure", 4 * 2 / ROWS, False)]:  # two rows
        calls = on(pnc, func, variable)
        assert sorted(calls["rank"]) == list(range(RANKS)), (func, variable)
        assert (calls["size"] == ELEMENTS * element).all(), (func, variable)
        assert (calls.collective == collective).all(), (func, variable)
        # Only the queued iput is flagged NONBLOCKING (0x04), with no request id.
        assert ((calls["flags"] & 0x04 != 0) == (func == "ncmpi_iput_vara")).all(), func
        assert calls.request.isna().all(), func
    waits = pnc.calls("ncmpi_wait_all")
    assert (waits["size"] == 1).all() and waits.collective.all()  # one request each


def test_mpiio_and_posix_nest_beneath(pnc):
    events = pnc.events
    for func, mpiio in [("ncmpi_put_vara_all", "MPI_File_write_at_all"),
                        ("ncmpi_wait_all", "MPI_File_write_at_all"),
                        ("ncmpi_get_vara_all", "MPI_File_read_at_all")]:
        parents = pnc.calls(func)
        kids = events[events.parent.isin(parents.id) & (events.func == mpiio)]
        assert sorted(kids["rank"]) == list(range(RANKS)), func
        assert (kids["size"] == ELEMENTS * 4).all() and kids.collective.all(), func
        posix = events[events.parent.isin(kids.id)]
        assert set(posix.func) & {"pwrite", "pwrite64", "pread", "pread64"}, func
    # The queued iput moves no data itself.
    iputs = pnc.calls("ncmpi_iput_vara")
    assert not events.parent.isin(iputs.id).any()


def test_settings_hold_the_count_and_stats_the_variables(pnc):
    s = pnc.settings[pnc.settings.key == "nc.count"]
    # vara's count, the whole variable's dims (get_var), the strided count (get_vars).
    assert set(s.value) == {f"{ROWS}x{COLUMNS}", f"{ROWS * RANKS}x{COLUMNS}",
                            f"{ROWS}x{COLUMNS // 2}"}
    rows = pioscope("stats", pnc.path, "--by", "file").stdout.splitlines()
    temperature = [r.split() for r in rows if r.startswith(pnc.target + ":temperature ")]
    assert len(temperature) == 1 and temperature[0][1:3] == ["pnetcdf", str(2 * RANKS)]
    dump = pioscope("dump", pnc.path, "--layer", "pnetcdf", "--rank", "0").stdout
    assert f"ncmpi_put_vara_all {pnc.target}:temperature size={ELEMENTS * 4} collective" in dump
