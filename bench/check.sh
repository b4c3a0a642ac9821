#!/bin/sh
# check.sh: smoke check of the bench programs (make -C bench check): each runs with small sizes
# on NPROCS ranks and must exit as expected (0, 2 on bad input, 3 when data is corrupted).
# Environment: BINDIR (the programs), MPIEXEC (default mpiexec), NPROCS (default 4).
set -u

BINDIR=${BINDIR:-$(dirname "$0")/../build/bin}
MPIEXEC=${MPIEXEC:-mpiexec}
NPROCS=${NPROCS:-4}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/pioscope-bench-check.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT INT TERM
failed=0
count=0

# expect STATUS PROGRAM ARGS...: runs PROGRAM on NPROCS ranks, wants exit STATUS.
expect() {
    want=$1
    prog=$2
    shift 2
    count=$((count + 1))
    "$MPIEXEC" -n "$NPROCS" "$BINDIR/pioscope-$prog" "$@" >"$TMP/out" 2>&1
    got=$?
    what="$prog $(echo "$*" | sed "s|$TMP|\$TMP|g")${PIOSCOPE_BENCH_CORRUPT:+ (corrupted)}"
    if [ "$got" -eq "$want" ]; then
        echo "ok    $what"
    else
        echo "FAIL  $what (exit $got, expected $want)"
        sed 's/^/      | /' "$TMP/out"
        failed=$((failed + 1))
    fi
}

# json PROGRAM ARGS...: the --json output must be one valid JSON object.
json() {
    prog=$1
    shift
    count=$((count + 1))
    if "$MPIEXEC" -n "$NPROCS" "$BINDIR/pioscope-$prog" "$@" --json >"$TMP/json" 2>"$TMP/err" &&
        python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert isinstance(d, dict)' \
            "$TMP/json" 2>>"$TMP/err"; then
        echo "ok    $prog $(echo "$*" | sed "s|$TMP|\$TMP|g") --json"
    else
        echo "FAIL  $prog $* --json (not one JSON object)"
        sed 's/^/      | /' "$TMP/json" "$TMP/err"
        failed=$((failed + 1))
    fi
}

H="--region-count 256 --iterations 2 --path $TMP/hpio.dat"
for mode in independent collective; do
    for mem in contig noncontig; do
        for file in contig noncontig; do
            expect 0 hpio $H --op both --mode $mode --mem $mem --file-layout $file
        done
    done
done
expect 0 hpio $H --op read --mode collective --region-size 1000 --region-spacing 24
expect 0 hpio $H --op both --hint cb_buffer_size=4096 --hint romio_ds_write=disable
expect 0 hpio $H --op write --iterations 3 --region-spacing 0
expect 2 hpio --region-size 0
expect 2 hpio --mode sideways
expect 2 hpio --hint cb_buffer_size
# The corruption knob flips a byte after each read on rank 0: verification must notice.
export PIOSCOPE_BENCH_CORRUPT=1
expect 3 hpio $H --op both
expect 0 hpio $H --op both --no-verify
unset PIOSCOPE_BENCH_CORRUPT

M="--blocks 4 --block-size 4K --iterations 2 --path $TMP/mpi-io-test.dat"
expect 0 mpi-io-test $M
expect 0 mpi-io-test $M --collective
expect 0 mpi-io-test $M --block-size 1000
expect 2 mpi-io-test --blocks -1
expect 2 mpi-io-test --bogus
export PIOSCOPE_BENCH_CORRUPT=1
expect 3 mpi-io-test $M
unset PIOSCOPE_BENCH_CORRUPT

expect 0 md-test --files 20 --dir "$TMP/md/sub"
expect 2 md-test --files many
expect 1 md-test --files 1 --dir /proc/pioscope-cannot-exist

if command -v python3 >/dev/null 2>&1; then
    json hpio $H --op both
    json mpi-io-test $M
    json md-test --files 5 --dir "$TMP/md"
fi

if [ -e "$TMP/hpio.dat" ] || [ -e "$TMP/mpi-io-test.dat" ] || [ -e "$TMP/md/sub" ]; then
    echo "FAIL  a benchmark left its file or directory behind"
    failed=$((failed + 1))
fi

echo "$((count - failed)) of $count bench checks passed"
[ "$failed" -eq 0 ]
