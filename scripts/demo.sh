#!/usr/bin/env bash
# The built-in default job of `make demo`: the HPIO benchmark with 4 ranks and 32-byte regions,
# once independent and once collective, each traced; the statistics of both traces, the report of
# the collective one, and its replay on the local model compared with what was observed.
set -euo pipefail
cd "$(dirname "$0")/.."

pioscope=build/bin/pioscope
out=build/demo
rm -rf "$out"
mkdir -p "$out"

for mode in independent collective; do
    echo "== HPIO, 4 ranks, 32-byte regions, $mode =="
    "$pioscope" bench hpio -n 4 --trace "$out/hpio-$mode" -- \
        --region-size 32 --mode "$mode" --path "$out/hpio-$mode.dat"
    echo
done

for mode in independent collective; do
    echo "== pioscope stats $out/hpio-$mode --by func =="
    "$pioscope" stats "$out/hpio-$mode" --by func
    echo
done
echo "== pioscope report $out/hpio-collective --html $out/report.html =="
"$pioscope" report "$out/hpio-collective" --html "$out/report.html"
echo

echo "== pioscope simulate --trace $out/hpio-collective --system local, then compare =="
"$pioscope" simulate --trace "$out/hpio-collective" --system local -o "$out/hpio-collective-sim"
"$pioscope" compare "$out/hpio-collective" "$out/hpio-collective-sim" --top 5
echo
echo "Traces are in $out/ (Parquet + meta.json); the report page is $out/report.html."
echo "Next: $pioscope view $out/hpio-collective $out/hpio-collective-sim   (timeline, observed above simulated)"
