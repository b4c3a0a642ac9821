#!/usr/bin/env bash
# Installs what building and testing pioscope needs and is missing on a Debian machine:
# MPICH (compiler wrappers, launcher) and Open MPI beside it, a Rust toolchain with rustfmt, clippy and cargo-fuzz, and
# the Python modules the end-to-end tests read traces with. Safe to run again: it only installs
# what is absent.
set -euo pipefail

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

apt_updated=0
apt_install() {
    if [ "$apt_updated" -eq 0 ]; then
        as_root apt-get update -qq
        apt_updated=1
    fi
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@"
}

if ! command -v mpicc.mpich >/dev/null 2>&1 || ! command -v mpiexec.mpich >/dev/null 2>&1; then
    echo "install-deps: installing MPICH (mpich, libmpich-dev)"
    apt_install mpich libmpich-dev
fi
# Open MPI too: the runtime is built once per MPI library and the MPI tests run under both
# (docs/RUNTIME.md). Its packages rank their alternatives above MPICH's, so the plain mpicc,
# mpiexec and mpi.h are pinned to MPICH first (a manual choice survives later installs): the
# rest of the build and the tests keep MPICH as the default MPI.
pins=(mpi:/usr/bin/mpicc.mpich mpirun:/usr/bin/mpirun.mpich)
for include in /usr/include/*/mpich; do # the header alternative is per architecture
    [ -d "$include" ] && pins+=("mpi-$(basename "$(dirname "$include")"):$include")
done
for pin in "${pins[@]}"; do
    name=${pin%%:*} choice=${pin#*:}
    # Not every match is an alternative (/usr/include/hdf5/mpich is HDF5's, once installed).
    update-alternatives --query "$name" >/dev/null 2>&1 || continue
    state=$(update-alternatives --query "$name" 2>/dev/null | sed -n 's/^\(Status\|Value\): //p')
    if [ -e "$choice" ] && [ "$state" != "$(printf 'manual\n%s' "$choice")" ]; then
        as_root update-alternatives --quiet --set "$name" "$choice"
    fi
done
if ! command -v mpicc.openmpi >/dev/null 2>&1 || ! command -v mpiexec.openmpi >/dev/null 2>&1; then
    echo "install-deps: installing Open MPI (openmpi-bin, libopenmpi-dev)"
    apt_install openmpi-bin libopenmpi-dev
fi

# The conformance suite (tests/conformance/): parallel HDF5 built for MPICH; ROMIO's tests and
# PnetCDF, which tests/third_party/ takes from the Debian source packages `mpich` and `pnetcdf`
# (that needs deb-src entries beside the deb ones); autotools to configure PnetCDF's source.
[ -x /usr/bin/h5pcc.mpich ] || apt_install libhdf5-mpich-dev
# tests/test_hdf5_trace.py: h5py on serial HDF5, for the system's Python, traced by the POSIX
# runtime.
/usr/bin/python3 -c 'import h5py' >/dev/null 2>&1 || apt_install python3-h5py
if ! command -v autoreconf >/dev/null 2>&1 || ! command -v libtoolize >/dev/null 2>&1; then
    apt_install autoconf automake libtool m4
fi
if ! apt-cache showsrc mpich 2>/dev/null | grep -q '^Package: mpich'; then
    echo "install-deps: enabling Debian source packages (deb-src)"
    deb_src=/etc/apt/sources.list.d/pioscope-deb-src
    # Debian's own archives only (signed with its keyring): another repository may have no
    # source packages, and apt-get update would fail on it.
    for sources in /etc/apt/sources.list.d/*.sources; do
        [ "$sources" != "$deb_src.sources" ] && grep -q debian-archive-keyring "$sources" 2>/dev/null ||
            continue
        sed 's/^Types: deb$/Types: deb-src/' "$sources"
        echo
    done > /tmp/pioscope-deb-src.$$
    [ -s /tmp/pioscope-deb-src.$$ ] && as_root cp /tmp/pioscope-deb-src.$$ "$deb_src.sources"
    rm -f /tmp/pioscope-deb-src.$$
    if [ -e /etc/apt/sources.list ]; then
        sed -n 's/^deb \(.*\)/deb-src \1/p' /etc/apt/sources.list | as_root tee "$deb_src.list" >/dev/null
    fi
    as_root apt-get update -qq
    apt_updated=1
fi

# c++ builds libFuzzer for the fuzz targets.
if ! command -v cc >/dev/null 2>&1 || ! command -v c++ >/dev/null 2>&1 ||
    ! command -v make >/dev/null 2>&1; then
    echo "install-deps: installing a C toolchain"
    apt_install build-essential
fi

if ! command -v cargo >/dev/null 2>&1; then
    if [ -x "$HOME/.cargo/bin/cargo" ]; then
        echo "install-deps: cargo is in \$HOME/.cargo/bin; add it to PATH" >&2
        exit 1
    fi
    echo "install-deps: installing cargo"
    apt_install cargo
fi
# `make test` gates on rustfmt and clippy: from the toolchain's own components when rustup
# manages it, else the distribution's packages.
if ! cargo fmt --version >/dev/null 2>&1 || ! cargo clippy --version >/dev/null 2>&1; then
    echo "install-deps: installing rustfmt and clippy"
    if command -v rustup >/dev/null 2>&1; then
        rustup component add rustfmt clippy
    else
        apt_install rustfmt rust-clippy
    fi
fi

# The fuzz targets (fuzz/, run by scripts/fuzz.sh) are built by cargo-fuzz, from crates.io.
if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "install-deps: installing cargo-fuzz"
    cargo install --locked --quiet cargo-fuzz
fi

python=${PYTHON:-python3}
if ! command -v "$python" >/dev/null 2>&1 || ! "$python" -m pip --version >/dev/null 2>&1; then
    echo "install-deps: installing python3 and pip"
    apt_install python3 python3-pip
fi
# tests/test_python_api.py installs the Python package into a virtual environment: Debian's
# own Python makes one with pip only with python3-venv (ensurepip).
if ! "$python" -c 'import ensurepip, venv' >/dev/null 2>&1; then
    echo "install-deps: installing python3-venv"
    apt_install python3-venv
fi
# The validators of the exports (pajeng's pj_dump, otf2-print), the OTF2 library the OTF2
# export links, the headless browser the page tests drive, and GlusterFS.
missing=()
command -v pj_dump >/dev/null 2>&1 || missing+=(pajeng)
command -v otf2-print >/dev/null 2>&1 || missing+=(otf2-tools)
[ -e /usr/include/otf2/otf2.h ] || missing+=(libotf2-trace-dev)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
# GlusterFS, the real file system of the server tests (scripts/gluster-lab.sh, docs/SERVERS.md).
command -v glusterd >/dev/null 2>&1 || missing+=(glusterfs-server)
if [ "${#missing[@]}" -gt 0 ]; then
    echo "install-deps: installing ${missing[*]}"
    apt_install "${missing[@]}"
fi

# matplotlib and polars are the Python package's dependencies (python/pyproject.toml):
# tests/test_python_api.py installs the package into a virtual environment that takes them from
# here, built by this setuptools and wheel (no download).
if ! "$python" -c 'import pytest, pyarrow, pandas, duckdb, playwright, matplotlib, polars, setuptools, wheel' >/dev/null 2>&1; then
    echo "install-deps: installing Python modules (pytest pyarrow pandas duckdb playwright matplotlib polars setuptools wheel)"
    # playwright drives the system's Chromium (no browser download).
    modules=(pytest pyarrow pandas duckdb playwright matplotlib polars setuptools wheel)
    # A distribution's own Python refuses plain pip installs (PEP 668); these are test tools.
    "$python" -m pip install -q "${modules[@]}" ||
        "$python" -m pip install -q --break-system-packages "${modules[@]}"
fi

# Darshan's log reader (PyDarshan, which bundles libdarshan-util): `pioscope import darshan`
# runs it (docs/IMPORT.md). Pinned: the import tests check counts against its reading.
if ! "$python" -c 'import darshan, sys; sys.exit(darshan.__version__ != "3.5.0")' >/dev/null 2>&1; then
    echo "install-deps: installing PyDarshan 3.5.0 (darshan on PyPI)"
    "$python" -m pip install -q darshan==3.5.0 ||
        "$python" -m pip install -q --break-system-packages darshan==3.5.0
fi
# Drishti (drishti-io on PyPI), the I/O insight tool tests/test_drishti.py runs beside `pioscope
# report` on the same Darshan logs (docs/FINDINGS.md maps its codes to pioscope's rules). Pinned:
# the test checks the codes it triggers.
if ! "$python" -c 'import importlib.metadata as m, sys; sys.exit(m.version("drishti-io") != "0.8")' >/dev/null 2>&1; then
    echo "install-deps: installing Drishti 0.8 (drishti-io on PyPI)"
    "$python" -m pip install -q drishti-io==0.8 ||
        "$python" -m pip install -q --break-system-packages drishti-io==0.8
fi
