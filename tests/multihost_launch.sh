#!/bin/sh
# multihost_launch.sh: an MPI launcher for `pioscope run --launcher` that puts each rank on a
# pretend host of its own clock, so that one machine exercises a multi-host trace
# (tests/test_multihost.py). Needs root (unshare) and MPICH's hydra (PMI_RANK).
#
#   PIOSCOPE_TEST_HOSTS="HOST=OFFSET_NS,DRIFT_PPM ..." multihost_launch.sh -n N COMMAND...
#
# Rank i runs COMMAND in a UTS namespace of its own whose host name is the i-th HOST, with
# PIOSCOPE_TEST_CLOCK_SKEW=OFFSET_NS,DRIFT_PPM (the runtime's test-only clock skew,
# docs/RUNTIME.md). The wrapper runs before COMMAND, which under `pioscope run` is
# `env LD_PRELOAD=...`: neither it nor unshare nor hostname is traced.
set -eu
if [ "${1:-}" = "--rank" ]; then
    shift
    rank=${PMI_RANK:?PMI_RANK unset: not started by MPICH hydra}
    i=0
    entry=
    for e in $PIOSCOPE_TEST_HOSTS; do
        if [ "$i" -eq "$rank" ]; then entry=$e; fi
        i=$((i + 1))
    done
    [ -n "$entry" ] || { echo "multihost_launch.sh: no host for rank $rank" >&2; exit 2; }
    exec unshare --uts sh -c 'hostname "$1"; PIOSCOPE_TEST_CLOCK_SKEW=$2; export PIOSCOPE_TEST_CLOCK_SKEW
        shift 2; exec "$@"' sh "${entry%%=*}" "${entry#*=}" "$@"
fi
[ "${1:-}" = "-n" ] || { echo "usage: multihost_launch.sh -n N COMMAND..." >&2; exit 2; }
n=$2
shift 2
exec mpiexec -n "$n" "$0" --rank "$@"
