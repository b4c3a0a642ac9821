"""`make install PREFIX=DIR` (docs/INSTALL.md): it builds with what is installed and never asks
a package manager, and the installed pioscope finds its runtime relative to itself: run from
another directory, with no build/ on PATH, it traces MPI programs of both MPI libraries."""
import os
import subprocess

import pytest

from conftest import BUILD, OMPI_ENV, PROGRAMS, ROOT, Trace

RANKS = 4
# What must not run: the install of a user without root has none of them.
PACKAGE_TOOLS = ("apt-get", "apt", "sudo", "dpkg")
# Compiler wrapper and launcher of each MPI library (Debian's suffixed names).
FLAVOURS = {"mpich": ("mpicc.mpich", "mpiexec.mpich", {}),
            "openmpi": ("mpicc.openmpi", "mpiexec.openmpi", OMPI_ENV)}


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(prefix, environment without build/ on PATH) after `make install PREFIX=prefix`, run
    with stand-ins for the package tools that record being called."""
    tmp = tmp_path_factory.mktemp("install")
    stubs, called = tmp / "stubs", tmp / "package-tool-called"
    stubs.mkdir()
    for tool in PACKAGE_TOOLS:
        stub = stubs / tool
        stub.write_text(f"#!/bin/sh\necho {tool} \"$@\" >> {called}\nexit 1\n")
        stub.chmod(0o755)
    path = [d for d in os.environ["PATH"].split(os.pathsep) if not d.startswith(str(BUILD))]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIOSCOPE_")}
    env["PATH"] = os.pathsep.join([str(stubs), *path])
    prefix = tmp / "x"
    subprocess.run(["make", "-s", "install", f"PREFIX={prefix}"], cwd=ROOT, env=env, check=True,
                   stdout=subprocess.DEVNULL)
    assert not called.exists(), called.read_text()
    env["PATH"] = os.pathsep.join(path)
    return prefix, env


def test_the_prefix_holds_every_part(installed):
    prefix, _ = installed
    lib = prefix / "lib"
    for part in ("bin/pioscope", "bin/pioscope-hpio", "lib/libpioscope-mpich.so",
                 "lib/libpioscope-openmpi.so", "lib/libpioscope-posix.so", "include/pioscope.h",
                 "share/pioscope/gluster-lab.sh", "share/doc/pioscope/INSTALL.md"):
        assert (prefix / part).is_file(), part
    assert os.readlink(lib / "libpioscope.so") == "libpioscope-mpich.so"
    help_text = subprocess.run([prefix / "bin" / "pioscope", "run", "--help"], check=True,
                               capture_output=True, text=True).stdout
    assert "libpioscope-openmpi.so" in help_text


@pytest.mark.parametrize("flavour", sorted(FLAVOURS))
def test_the_installed_pioscope_traces_from_another_directory(installed, flavour, tmp_path):
    prefix, env = installed
    mpicc, launcher, extra_env = FLAVOURS[flavour]
    prog = tmp_path / "mpi_checksum"
    subprocess.run([mpicc, "-O0", "-o", prog, PROGRAMS / "mpi_checksum.c"], check=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    result = subprocess.run(
        [prefix / "bin" / "pioscope", "run", "-o", "t", "-n", str(RANKS), "--launcher", launcher,
         "--", prog, "data.bin"],
        cwd=elsewhere, env={**env, **extra_env}, capture_output=True, text=True)
    assert result.returncode == 0, (result.stdout, result.stderr)
    assert "mismatches=0" in result.stdout
    trace = Trace(elsewhere / "t")
    assert (trace.events.func == "MPI_File_write_at_all").sum() == RANKS
    library = trace.meta["job"]["mpi_library"]
    assert library.startswith("Open MPI" if flavour == "openmpi" else "MPICH"), library
