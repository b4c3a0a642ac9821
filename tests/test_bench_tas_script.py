"""Issue 14: `pioscope bench tas` finds scripts/gluster-lab.sh when pioscope is installed
(<prefix>/bin/pioscope → <prefix>/share/pioscope/gluster-lab.sh), says which paths it searched
when the script is nowhere, and tells the script where pioscope and its runtime are. The lab is
never started: a stand-in script records how it was called and fails."""
import os
import shutil
import stat
import subprocess

import pytest

from conftest import PIOSCOPE


@pytest.fixture
def installed(tmp_path):
    """pioscope copied to <prefix>/bin (a copy: the executable's own directory is what
    counts), and a stand-in benchmark binary."""
    prefix = tmp_path / "prefix"
    (prefix / "bin").mkdir(parents=True)
    shutil.copy2(PIOSCOPE, prefix / "bin" / "pioscope")
    bench = tmp_path / "benchbin"
    bench.mkdir()
    fake = bench / "pioscope-mpi-io-test"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    env = {k: v for k, v in os.environ.items()
           if k not in ("PIOSCOPE_LAB_SCRIPT", "PIOSCOPE_BIN", "PIOSCOPE_LIB_DIR")}
    env["PIOSCOPE_BIN_DIR"] = str(bench)
    return prefix, env


def bench_tas(prefix, env):
    return subprocess.run([str(prefix / "bin" / "pioscope"), "bench", "tas", "-n", "1"],
                          capture_output=True, text=True, env=env, timeout=60)


def test_missing_script_names_every_path_searched(installed):
    prefix, env = installed
    r = bench_tas(prefix, env)
    assert r.returncode == 2, r.stderr
    bindir = prefix / "bin"
    for searched in (bindir / "../share/pioscope/gluster-lab.sh",
                     bindir / "../../scripts/gluster-lab.sh"):
        assert str(searched) in r.stderr, r.stderr
    assert "PIOSCOPE_LAB_SCRIPT" in r.stderr


def test_installed_script_is_found_and_told_where_pioscope_is(installed, tmp_path):
    prefix, env = installed
    script = prefix / "share" / "pioscope" / "gluster-lab.sh"
    script.parent.mkdir(parents=True)
    log = tmp_path / "called"
    script.write_text('#!/bin/sh\n'
                      'printf "%s\\n" "$*" "$PIOSCOPE_BIN" "$PIOSCOPE_LIB_DIR" > "$TAS_LOG"\n'
                      'exit 1\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    env["TAS_LOG"] = str(log)
    r = bench_tas(prefix, env)
    assert r.returncode == 2
    # Found from the executable's directory, as searched.
    assert f"{prefix / 'bin' / '../share/pioscope/gluster-lab.sh'} up --dir" in r.stderr and "failed" in r.stderr, r.stderr
    args, binary, lib = log.read_text().splitlines()
    assert args.startswith("up --dir ") and args.endswith("/disk"), args
    assert binary == str(prefix / "bin" / "pioscope")
    assert lib == str(prefix / "bin" / "../lib")
