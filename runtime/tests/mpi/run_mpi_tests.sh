#!/usr/bin/env bash
# run_mpi_tests.sh: builds the MPI test programs, runs each under the tracer with mpiexec and
# checks the raw files with its Python checker. Prints PASS/FAIL per program; exits 1 on failure.
# usage: [FLAVOUR=openmpi MPICC=.. MPIEXEC=..] run_mpi_tests.sh LIB_DIR [RANKS]
#   (RANKS: even, default 4; oversubscribes; FLAVOUR: the runtime libpioscope-FLAVOUR.so, default
#   libpioscope.so)
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
LIB=$(cd "$1" && pwd)/libpioscope${FLAVOUR:+-$FLAVOUR}.so
RANKS=${2:-4}
MPICC=${MPICC:-mpicc}
# The launcher with its options ("mpiexec.openmpi --oversubscribe"), split into words.
read -r -a MPIEXEC <<<"${MPIEXEC:-mpiexec}"
export PYTHONDONTWRITEBYTECODE=1 # no __pycache__ in the source tree
WORK=$(mktemp -d "${TMPDIR:-/tmp}/pioscope-mpi-tests.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
failed=0

# run NAME RANKS "CHECKER [ARGS]" [program args...]: one traced run, then its checker on the raw
# files. MPIIO_ENV (VAR=VALUE words) is added to the run's environment.
run() {
    local name=$1 ranks=$2 checker
    read -r -a checker <<<"$3"
    shift 3
    local dir=$WORK/$name
    mkdir -p "$dir/raw" "$dir/expect" "$dir/data"
    if ! "$MPICC" -O1 -pthread -o "$dir/$name" "$HERE/$name.c" 2>"$dir/build.log"; then
        cat "$dir/build.log"
        echo "FAIL $name (build)"
        failed=1
        return
    fi
    local args=("${@//@DIR@/$dir}")
    # shellcheck disable=SC2086 # MPIIO_ENV is a list of words
    if ! timeout 600 env PIOSCOPE_RAW_DIR="$dir/raw" LD_PRELOAD="$LIB" ${MPIIO_ENV:-} \
            "${MPIEXEC[@]}" -n "$ranks" "$dir/$name" "${args[@]}"; then
        echo "FAIL $name (run)"
        failed=1
        return
    fi
    if python3 "$HERE/${checker[0]}" "$dir/raw" "$dir/expect" "${checker[@]:1}"; then
        echo "PASS $name"
    else
        echo "FAIL $name"
        failed=1
    fi
}

# Every MPI and MPI-IO function of functions.def is exported under its MPI_ and PMPI_ names.
exported=$(nm -D --defined-only "$LIB" | awk '{print $3}')
missing=$(sed -n 's/^PIOSCOPE_FUNC([34][0-9][0-9], *MPI[A-Z]*, *\(MPI_[A-Za-z_]*\)).*/\1/p' \
              "$HERE/../../src/functions.def" |
          while read -r name; do
              for symbol in "$name" "P$name"; do
                  grep -qx "$symbol" <<<"$exported" || echo "$symbol"
              done
          done)
if [ -z "$missing" ]; then
    echo "PASS symbols"
else
    echo "FAIL symbols: not exported: $missing"
    failed=1
fi

# Open MPI has two MPI-IO implementations: its ROMIO (romio321) for mpiio_trace, which opens a
# "ufs:" file name only ROMIO knows; its default OMPIO for mpi_all_calls, whose nonblocking
# collective calls romio321 lacks (they crash there, traced or not).
if [ "${FLAVOUR:-}" = openmpi ]; then
    romio_env=OMPI_MCA_io=romio321 all_calls_mpiio=ompio
else
    romio_env='' all_calls_mpiio=romio
fi
MPIIO_ENV=$romio_env run mpiio_trace "$RANKS" check_mpiio_trace.py @DIR@/data/file.dat @DIR@/expect
# mpi_all_calls makes the MPI-4 large-count (_c) calls only when the library is MPI-4 (MPICH 4,
# not Open MPI 4.1).
mpi_major=$(printf '#include <mpi.h>\nMPI_VERSION\n' | "$MPICC" -E -x c - | tail -n 1)
run mpi_all_calls "$RANKS" "check_all_calls.py --mpi-major $mpi_major --mpiio $all_calls_mpiio" \
    @DIR@/data/all.dat
run mpi_threads 2 check_threads.py
exit $failed
