#!/usr/bin/env bash
# The built-in default job of `make demo`: the HPIO benchmark with 4 ranks and 32-byte regions,
# once independent and once collective, each traced, then the statistics of both traces.
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
echo "Traces are in $out/ (Parquet + meta.json); try: $pioscope dump $out/hpio-collective --rank 0 --limit 40"
