#!/bin/bash
# Real Darshan logs for the import tests (tests/test_import_darshan.py, tests/test_drishti.py):
# the logs that PyDarshan's source distribution ships (darshan 3.5.0 on PyPI: its examples,
# darshan/examples/, and its own test inputs, darshan/tests/input/, less those with the same
# bytes as an example), taken from the package registry rather than checked in (Darshan's
# licence, COPYRIGHT in the distribution, is permissive), and extracted
# into DIR. No log on PyPI has the HEATMAP, PNETCDF or APMPI modules (PyDarshan's tests take
# those from the darshan-logs repository, which is not on PyPI).
#   scripts/darshan-logs.sh [DIR]     (default: build/third_party/darshan-logs)
set -euo pipefail
dir=${1:-build/third_party/darshan-logs}
version=3.5.0
python=${PYTHON:-python3}
marker=$dir/.complete-$version-examples-tests
if [ -f "$marker" ]; then
    exit 0
fi
mkdir -p "$dir"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$python" -m pip download -q --no-deps --no-binary :all: -d "$tmp" "darshan==$version"
tar -xzf "$tmp/darshan-$version.tar.gz" -C "$tmp" --wildcards '*.darshan'
find "$tmp/darshan-$version/darshan/examples" -name '*.darshan' -exec cp {} "$dir/" \;
for log in "$tmp/darshan-$version/darshan/tests/input"/*.darshan; do
    same=no
    for have in "$dir"/*.darshan; do
        cmp -s "$log" "$have" && same=yes && break
    done
    [ "$same" = yes ] || cp "$log" "$dir/"
done
touch "$marker"
echo "darshan-logs: $(find "$dir" -name '*.darshan' | wc -l) logs in $dir"
