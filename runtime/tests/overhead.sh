#!/usr/bin/env bash
# overhead.sh: ns added per traced pwrite (N one-byte pwrites to /dev/shm), R rounds, median.
# Each round runs the probe once under the tracer: it alternates blocks of traced and untraced
# calls (see overhead.c). Also reports raw bytes per event. A measurement, not a test.
# usage: overhead.sh PROBE LIB [N=2000000] [R=5]
set -eu
probe=$1 lib=$2 n=${3:-2000000} rounds=${4:-5}
work=$(mktemp -d /dev/shm/pioscope-overhead.XXXXXX)
trap 'rm -rf "$work"' EXIT
added=()
for r in $(seq "$rounds"); do
    read -r traced plain < <(LD_PRELOAD=$lib PIOSCOPE_RAW_DIR=$work/raw-$r "$probe" "$n" "$work/target")
    bytes=$(cat "$work"/raw-$r/*.praw | wc -c)
    a=$(awk -v p="$plain" -v t="$traced" 'BEGIN { printf "%.2f", t - p }')
    added+=("$a")
    awk -v p="$plain" -v t="$traced" -v b="$bytes" -v n="$n" -v r="$r" 'BEGIN {
        printf "round %d: untraced %.1f ns/call, traced %.1f ns/call, added %.1f ns, raw %.2f bytes/event\n",
               r, p, t, t - p, b / n }'
    rm -rf "$work/raw-$r"
done
printf '%s\n' "${added[@]}" | sort -g |
    awk '{ v[NR] = $1 } END { printf "median added: %.1f ns per call\n", v[int((NR + 1) / 2)] }'
