#!/bin/bash
# Real Darshan logs for the import tests (tests/test_import_darshan.py): the example logs that
# PyDarshan's source distribution ships (darshan 3.5.0 on PyPI, darshan/examples/), taken
# from the package registry rather than checked in, and extracted into DIR.
#   scripts/darshan-logs.sh [DIR]     (default: build/third_party/darshan-logs)
set -euo pipefail
dir=${1:-build/third_party/darshan-logs}
version=3.5.0
python=${PYTHON:-python3}
if [ -f "$dir/.complete-$version" ]; then
    exit 0
fi
mkdir -p "$dir"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$python" -m pip download -q --no-deps --no-binary :all: -d "$tmp" "darshan==$version"
tar -xzf "$tmp/darshan-$version.tar.gz" -C "$tmp" --wildcards '*.darshan'
find "$tmp/darshan-$version/darshan/examples" -name '*.darshan' -exec cp {} "$dir/" \;
touch "$dir/.complete-$version"
echo "darshan-logs: $(find "$dir" -name '*.darshan' | wc -l) logs in $dir"
