#!/usr/bin/env bash
# run_tests.sh: runs the runtime's C tests: the core unit tests (test_core) and the traced test
# programs, each checked by check_raw, then the MPI layer's tests (tests/mpi). Counts the
# PASS/FAIL lines; a program that crashes or prints no verdict counts as a failure. Ends with
# "N passed, M failed"; exits 1 on failure.
# usage: run_tests.sh TESTBIN_DIR LIB_DIR
set -u
BIN=$(cd "$1" && pwd)
LIB=$(cd "$2" && pwd)
POSIX_LIB=$LIB/libpioscope-posix.so
MPI_LIB=$LIB/libpioscope.so
WORK=$(mktemp -d "${TMPDIR:-/tmp}/pioscope-runtime-tests.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
ulimit -c 0   # the signal tests must not leave core dumps
unset LD_PRELOAD PIOSCOPE_RAW_DIR PIOSCOPE_BUFFER_BYTES PIOSCOPE_CLOCK PIOSCOPE_DISABLE \
      PIOSCOPE_EXCLUDE PIOSCOPE_DEBUG
passed=0
failed=0

HERE=$(cd "$(dirname "$0")" && pwd)

# Runs a command that prints PASS/FAIL lines; counts them.
verdicts() {
    local out rc
    out=$("$@")
    rc=$?
    [ -n "$out" ] && printf '%s\n' "$out"
    local p f
    p=$(printf '%s\n' "$out" | grep -c '^PASS ')
    f=$(printf '%s\n' "$out" | grep -c '^FAIL ')
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "FAIL $* (exit $rc, no verdict)"
        f=1
    fi
    passed=$((passed + p))
    failed=$((failed + f))
}

# core MODE [VAR=value...]: the unit tests, recording into their own raw directory.
core() {
    local mode=$1
    shift
    local dir=$WORK/core-$mode
    mkdir -p "$dir/cwd"
    verdicts env -u LD_PRELOAD PIOSCOPE_RAW_DIR="$dir/raw" "$@" \
        sh -c 'cd "$1" && shift && exec "$@"' sh "$dir/cwd" "$BIN/test_core" "$mode"
}

# traced SCENARIO LABEL LIB [VAR=value...] -- PROGRAM ARGS...: runs PROGRAM (its DIR argument
# is the placeholder @DIR) in a fresh directory under LIB (or "none"), then check_raw.
traced() {
    local scenario=$1 label=$2 lib=$3
    shift 3
    local vars=()
    while [ "$1" != "--" ]; do vars+=("$1"); shift; done
    shift
    local d=$WORK/$label
    mkdir -p "$d/data"
    local args=()
    for a in "$@"; do args+=("${a//@DIR/$d/data}"); done
    local preload=()
    [ "$lib" != none ] && preload=(LD_PRELOAD="$lib")
    # (The outer braces keep bash's own "Terminated"/"Aborted" notices off the output.)
    # FD_LIMIT (set by the caller): the program starts with that many descriptors allowed.
    { (cd "$d/data" && { [ -z "${FD_LIMIT:-}" ] || ulimit -n "$FD_LIMIT"; } &&
       exec env "${preload[@]}" PIOSCOPE_RAW_DIR="$d/raw" "${vars[@]}" \
        "${args[@]}") >"$d/stdout" 2>"$d/stderr"; } 2>/dev/null
    local status=$?
    verdicts "$BIN/check_raw" "$scenario" "$d/data" "$d/raw" "$status"
}

core unit
core spill PIOSCOPE_BUFFER_BYTES=4096
core fork
core fail
core clock PIOSCOPE_CLOCK=monotonic

traced posix posix "$POSIX_LIB" -- "$BIN/prog_posix" @DIR
traced posix posix-mpi-build "$MPI_LIB" -- "$BIN/prog_posix" @DIR
traced aio aio "$POSIX_LIB" -- "$BIN/prog_aio" @DIR
traced fortify fortify "$POSIX_LIB" -- "$BIN/prog_fortify" @DIR 8
traced threads threads "$POSIX_LIB" PIOSCOPE_BUFFER_BYTES=16K -- "$BIN/prog_threads" @DIR
traced running running "$POSIX_LIB" PIOSCOPE_BUFFER_BYTES=4K -- "$BIN/prog_threads" @DIR running
traced regions regions "$POSIX_LIB" -- "$BIN/prog_regions" @DIR
traced regions regions-nopie "$POSIX_LIB" -- "$BIN/prog_regions_nopie" @DIR
traced none:regions-untraced regions-untraced none -- "$BIN/prog_regions" @DIR
if [ -x "$BIN/prog_regions_f" ]; then
    traced fortran fortran "$POSIX_LIB" -- "$BIN/prog_regions_f" @DIR
fi

traced end:exit:7 exit "$POSIX_LIB" -- "$BIN/prog_lifecycle" @DIR exit 7
traced end:_exit:5 _exit "$POSIX_LIB" -- "$BIN/prog_lifecycle" @DIR _exit 5
traced end:_Exit:6 _Exit "$POSIX_LIB" -- "$BIN/prog_lifecycle" @DIR _Exit 6
traced signal:SIGTERM sigterm "$POSIX_LIB" -- "$BIN/prog_lifecycle" @DIR sigterm
traced signal:SIGINT sigint "$POSIX_LIB" -- "$BIN/prog_lifecycle" @DIR sigint
traced signal:SIGABRT:abort abort "$POSIX_LIB" -- "$BIN/prog_lifecycle" @DIR abort
traced signal:SIGSEGV:raise segv "$POSIX_LIB" -- "$BIN/prog_lifecycle" @DIR segv
traced signal:SIGSEGV:fault fault "$POSIX_LIB" -- "$BIN/prog_lifecycle" @DIR fault
traced fork fork "$POSIX_LIB" -- "$BIN/prog_lifecycle" @DIR fork
traced exec exec "$POSIX_LIB" -- "$BIN/prog_lifecycle" @DIR exec
traced forkexec forkexec "$POSIX_LIB" -- "$BIN/prog_lifecycle" @DIR forkexec
traced execfail execfail "$POSIX_LIB" -- "$BIN/prog_lifecycle" @DIR execfail
traced closerange closerange "$POSIX_LIB" -- "$BIN/prog_lifecycle" @DIR closerange

# Issue 12: the traced program never notices the tracer: its descriptor numbers, its results at
# the descriptor limit (the same as untraced), and a full disk keeps the records that fit.
traced fd768 fd768 "$POSIX_LIB" -- "$BIN/prog_lifecycle" @DIR fd768
FD_LIMIT=8 traced fdlimit fdlimit "$POSIX_LIB" PIOSCOPE_BUFFER_BYTES=4K -- \
    "$BIN/prog_lifecycle" @DIR fdlimit
FD_LIMIT=8 traced none:fdlimit-untraced fdlimit-untraced none -- "$BIN/prog_lifecycle" @DIR fdlimit
if cmp -s "$WORK/fdlimit/stdout" "$WORK/fdlimit-untraced/stdout"; then
    echo "PASS fdlimit (issue 12): the same descriptors and errno as untraced"
    passed=$((passed + 1))
else
    echo "FAIL fdlimit (issue 12): traced '$(cat "$WORK/fdlimit/stdout")'," \
         "untraced '$(cat "$WORK/fdlimit-untraced/stdout")'"
    failed=$((failed + 1))
fi
# The raw directory, a 64 KiB tmpfs, fills in the middle of the first 256 KiB chunk (mounting
# needs root).
FULL=$WORK/diskfull/raw
mkdir -p "$FULL"
if mount -t tmpfs -o size=64k pioscope-test "$FULL" 2>/dev/null; then
    trap 'umount "$FULL"; rm -rf "$WORK"' EXIT
    traced diskfull diskfull "$POSIX_LIB" PIOSCOPE_BUFFER_BYTES=256K -- \
        "$BIN/prog_lifecycle" @DIR bulk 20000
    umount "$FULL"
    trap 'rm -rf "$WORK"' EXIT
else
    echo "SKIP diskfull (issue 12): cannot mount a tmpfs (not root)"
fi

traced none:PIOSCOPE_DISABLE=1 disabled "$POSIX_LIB" PIOSCOPE_DISABLE=1 -- "$BIN/prog_posix" @DIR
traced none:PIOSCOPE_EXCLUDE excluded "$POSIX_LIB" PIOSCOPE_EXCLUDE=true,prog_posix -- \
    "$BIN/prog_posix" @DIR
traced none:unwritable-raw-dir unwritable "$POSIX_LIB" PIOSCOPE_RAW_DIR=/proc/pioscope-no -- \
    "$BIN/prog_posix" @DIR

# The MPI layer's tests (runtime/tests/mpi, the MPI wrappers' own), when present: under the
# default runtime, then under Open MPI's when it was built beside it (docs/RUNTIME.md; the
# script picks Open MPI's ROMIO or OMPIO per program). Open MPI refuses root without the two
# variables and more ranks than cores without --oversubscribe.
if [ -x "$HERE/mpi/run_mpi_tests.sh" ]; then
    verdicts "$HERE/mpi/run_mpi_tests.sh" "$LIB"
    if [ -e "$LIB/libpioscope-openmpi.so" ] && [ "$(readlink "$MPI_LIB")" != libpioscope-openmpi.so ]; then
        verdicts env FLAVOUR=openmpi MPICC=mpicc.openmpi \
            MPIEXEC="mpiexec.openmpi --oversubscribe" \
            OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
            "$HERE/mpi/run_mpi_tests.sh" "$LIB"
    fi
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
