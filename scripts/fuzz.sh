#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ (cargo-fuzz) and runs each for a bounded time from its
# seed corpus (fuzz/corpus/TARGET, never written to), then prints the executions per target.
# Fails when any target crashes, runs one input longer than 10 s or needs more than 2 GiB.
# A failing input and the run's log are kept in fuzz/artifacts/TARGET/ (docs/FUZZING.md).
#
# usage: scripts/fuzz.sh [SECONDS_PER_TARGET [TARGET...]]   (default: 15 s, every target)
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-15}
shift || true
fuzz_dir=fuzz
# cargo-fuzz's instrumentation flags need a nightly compiler; the stable one accepts them so.
export RUSTC_BOOTSTRAP=1

if [ "$#" -gt 0 ]; then
    targets=("$@")
else
    mapfile -t targets < <(cargo fuzz list --fuzz-dir "$fuzz_dir")
fi

# cargo-fuzz has no --locked: refuse a Cargo.lock that would have to change, as --locked does.
cargo fetch --locked --quiet --manifest-path "$fuzz_dir/Cargo.toml"
# No sanitizer (it needs the nightly standard library); overflow checks and debug assertions on.
cargo fuzz build --fuzz-dir "$fuzz_dir" --sanitizer none
bin_dir="$fuzz_dir/target/$(rustc -vV | sed -n 's/^host: //p')/release"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=()
printf '%-16s %12s %8s  %s\n' target executions seconds result
for t in "${targets[@]}"; do
    mkdir -p "$work/$t/corpus" "$work/$t/tmp" "$work/$t/artifacts"
    status=0
    # New inputs go to the first (scratch) corpus; the seeds are only read. The targets'
    # scratch stores live under TMPDIR, removed with $work.
    TMPDIR="$work/$t/tmp" "$bin_dir/$t" "$work/$t/corpus" "$fuzz_dir/corpus/$t" \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$work/$t/artifacts/" \
        >"$work/$t/log" 2>&1 || status=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$t/log")
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/$t/log")
    if [ "$status" -eq 0 ]; then
        printf '%-16s %12s %8s  ok (%s exec/s)\n' "$t" "${execs:-?}" "$seconds" "${rate:-?}"
    else
        printf '%-16s %12s %8s  FAILED (exit %d)\n' "$t" "${execs:-?}" "$seconds" "$status"
        mkdir -p "$fuzz_dir/artifacts/$t"
        cp -p "$work/$t/artifacts/"* "$work/$t/log" "$fuzz_dir/artifacts/$t/" 2>/dev/null || true
        grep -E 'panicked|ERROR: libFuzzer|SUMMARY|Test unit written|^thread ' "$work/$t/log" |
            head -20 | sed 's/^/    /'
        failed+=("$t")
    fi
done

if [ "${#failed[@]}" -gt 0 ]; then
    echo "fuzz: failing targets: ${failed[*]} (inputs in $fuzz_dir/artifacts/)" >&2
    exit 1
fi
