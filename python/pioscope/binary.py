"""Running the `pioscope` binary: the package reimplements no analysis, it asks the binary for
the report's profile, the colour table (`pioscope colours --json`) and Darshan imports.
"""
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path


class PioscopeError(Exception):
    """The binary is missing, or a command of it failed (the message carries its stderr)."""


# Where the binary may be named explicitly (a build tree, a second installation).
BINARY_ENV = "PIOSCOPE_BIN"


def find_binary() -> Path:
    """The `pioscope` binary: $PIOSCOPE_BIN, else beside this interpreter (a virtual
    environment's or a prefix's bin/), else on PATH."""
    named = os.environ.get(BINARY_ENV)
    if named:
        path = Path(named)
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise PioscopeError(f"${BINARY_ENV} is {named!r}, which is not an executable file")
        return path
    beside = Path(sys.prefix) / "bin" / "pioscope"
    if beside.is_file() and os.access(beside, os.X_OK):
        return beside
    found = shutil.which("pioscope")
    if found:
        return Path(found)
    raise PioscopeError(
        "the pioscope binary was not found: put it on PATH (make cli installs it as "
        f"build/bin/pioscope) or name it in ${BINARY_ENV}")


def run(*args) -> str:
    """Runs `pioscope ARGS`; returns its stdout, or raises PioscopeError with its stderr."""
    cmd = [str(find_binary()), *map(str, args)]
    done = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise PioscopeError(f"{' '.join(cmd)} exited {done.returncode}: {done.stderr.strip()}")
    return done.stdout


def report_json(trace: Path, *options) -> dict:
    """`pioscope report TRACE --json` (with `options`, e.g. --all) as a dict."""
    return json.loads(run("report", trace, "--json", *options))


def import_darshan(log: Path, out: Path) -> None:
    """`pioscope import darshan LOG -o OUT`, with this interpreter when it has PyDarshan."""
    has_pydarshan = importlib.util.find_spec("darshan") is not None
    python = ["--python", sys.executable] if has_pydarshan else []
    run("import", "darshan", log, "-o", out, *python)


def colour_table() -> dict:
    """`pioscope colours --json`: {"layers": {layer: css}, "functions": [{name, layer, colour}]}."""
    return json.loads(run("colours", "--json"))
