"""Shared fixtures of the end-to-end tests: build the test programs, run them under
`pioscope run`, and load the resulting trace store with pandas, as a user would."""
import json
import os
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "build"
PIOSCOPE = BUILD / "bin" / "pioscope"
PROGRAMS = Path(__file__).resolve().parent / "programs"
# The runtime's own test programs serve here too: "lifecycle" ends a process every way there
# is, "threads" writes from 4 threads.
SHARED_PROGRAMS = [ROOT / "runtime" / "tests" / "prog_lifecycle.c",
                   ROOT / "runtime" / "tests" / "prog_threads.c"]
MPI_PROGRAMS = {"mpi_abort", "mpi_checksum", "mpi_hints", "mpi_messages", "mpi_multihost", "mpi_sleep",
                "mpi_comm_self", "mpi_write_shared"}
# Parallel HDF5 programs, built with HDF5's MPICH compiler wrapper against the shared library
# (libhdf5-mpich-dev, scripts/install-deps.sh): the tracer finds HDF5's functions with dlsym.
HDF5_PROGRAMS = {"h5_trace", "h5_findings", "h5_chunks"}
# Built by their own test, against a library the test builds first (tests/third_party/):
# pnetcdf_program.
OWN_BUILD_PROGRAMS = {"pnc_trace", "pnc_findings"}
PNETCDF = BUILD / "conformance" / "pnetcdf" / "install"
# Open MPI refuses to run as root (CI) and more ranks than cores without these (MPICH's Hydra
# needs neither).
OMPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
            "OMPI_MCA_rmaps_base_oversubscribe": "1"}


class Trace:
    """A trace store directory read with pandas: events, files, settings and meta."""

    def __init__(self, path: Path):
        self.path = path
        self.meta = json.loads((path / "meta.json").read_text())
        self.events = pd.read_parquet(path / "events.parquet")
        self.files = pd.read_parquet(path / "files.parquet")
        self.settings = pd.read_parquet(path / "settings.parquet")

    def path_of(self, file_id) -> str:
        return self.files.set_index("file_id").loc[file_id, "path"]

    def on_file(self, name: str) -> pd.DataFrame:
        """Events on the file whose path ends with `name`."""
        ids = self.files[self.files.path.str.endswith("/" + name)].file_id
        return self.events[self.events.file_id.isin(ids)]

    def calls(self, func: str) -> pd.DataFrame:
        return self.events[self.events.func == func]


@pytest.fixture(scope="session")
def programs(tmp_path_factory):
    """Compiles tests/programs/*.c and SHARED_PROGRAMS once; returns {name: path}."""
    out = tmp_path_factory.mktemp("programs")
    built = {}
    for source in sorted(PROGRAMS.glob("*.c")) + SHARED_PROGRAMS:
        name = source.stem.removeprefix("prog_")
        if name in OWN_BUILD_PROGRAMS:
            continue
        compiler = (["h5pcc.mpich", "-shlib"] if name in HDF5_PROGRAMS
                    else ["mpicc"] if name in MPI_PROGRAMS else ["cc"])
        exe = out / name
        # -U_FORTIFY_SOURCE keeps calls on their plain names (open, not __open_2).
        subprocess.run([*compiler, "-O0", "-U_FORTIFY_SOURCE", "-pthread",
                        "-I", str(ROOT / "runtime" / "include"), "-o", str(exe), str(source)],
                       check=True)
        built[name] = exe
    return built


def pnetcdf_program(name: str, out: Path) -> Path:
    """Builds PnetCDF (tests/third_party/pnetcdf, once) and tests/programs/<name>.c linked to
    its shared library into `out`; returns the program."""
    subprocess.run(["make", "-s", "-C", ROOT / "tests" / "third_party" / "pnetcdf",
                    f"OUT={BUILD / 'conformance' / 'pnetcdf'}", "lib"], check=True)
    exe = out / name
    subprocess.run(["mpicc", "-O0", "-I", PNETCDF / "include", "-o", exe,
                    PROGRAMS / f"{name}.c", "-L", PNETCDF / "lib", "-lpnetcdf",
                    f"-Wl,-rpath,{PNETCDF / 'lib'}"], check=True)
    return exe


def pioscope(*args, check=True, **kwargs) -> subprocess.CompletedProcess:
    """Runs the pioscope binary; returns the completed process (text output)."""
    result = subprocess.run([str(PIOSCOPE), *map(str, args)], capture_output=True, text=True,
                            **kwargs)
    if check and result.returncode != 0:
        raise AssertionError(f"pioscope {' '.join(map(str, args))} exited "
                             f"{result.returncode}\nstdout:\n{result.stdout}\n"
                             f"stderr:\n{result.stderr}")
    return result


def run_traced(trace: Path, program, *args, ranks=None, expect_status=0, extra=()):
    """Traces `program args` (with `ranks` MPI ranks if given) into `trace`; returns
    (completed process, Trace)."""
    cmd = ["run", "-o", trace, *extra]
    if ranks:
        cmd += ["-n", ranks]
    result = pioscope(*cmd, "--", program, *args, check=False)
    assert result.returncode == expect_status, (result.returncode, result.stdout, result.stderr)
    return result, Trace(trace)


@pytest.fixture
def workdir(tmp_path):
    d = tmp_path / "work"
    d.mkdir()
    yield d
    shutil.rmtree(d, ignore_errors=True)


def bench_binary(name: str) -> Path:
    return BUILD / "bin" / f"pioscope-{name}"


os.environ.setdefault("HYDRA_LAUNCHER", "fork")


DARSHAN_LOGS = BUILD / "third_party" / "darshan-logs"
# Their names (without .darshan), known before the fixture fetches them.
DARSHAN_LOG_NAMES = [
    "dxt",
    "example",
    "ior_hdf5_example",
    "noposix",
    "noposixopens",
    "pq_app_readAB_writeC_id71326_7-31-5658-2037904274838284930_55623",
    "pq_app_read_id71317_7-31-5657-2037904274838284930_55623",
    "pq_app_read_id71344_7-31-5658-2037904274838284930_55623",
    "pq_app_write_id71296_7-31-5657-2037904274838284930_55623",
    "pq_app_write_id71303_7-31-5657-2037904274838284930_55623",
    "pq_app_write_id71310_7-31-5657-2037904274838284930_55623",
    "sample-badost",
    "sample-dxt-simple",
    "sample-goodost",
    "shane_macsio_id29959_5-22-32552-7035573431850780836_1590156158",
]


@pytest.fixture(scope="session")
def darshan_logs() -> Path:
    """The real Darshan logs of PyDarshan's source distribution (scripts/darshan-logs.sh
    fetches them from PyPI once)."""
    subprocess.run([str(ROOT / "scripts" / "darshan-logs.sh"), str(DARSHAN_LOGS)], check=True)
    return DARSHAN_LOGS
