"""Drishti (drishti-io 0.8 from PyPI, `make deps` installs it) and `pioscope report` on the same
real Darshan logs (scripts/darshan-logs.sh): every insight code Drishti triggers maps, by
docs/FINDINGS.md's table "Drishti's insights and the rules that cover them", to a finding
pioscope makes on the log, or to a fact its report states, or is one of the differences
FINDINGS.md explains (DIFFERENCES below, each with its reason). Facts only: codes and rule ids,
no timings."""
import csv
import json
import re
import subprocess
import sys

import pytest

from conftest import DARSHAN_LOG_NAMES, ROOT, pioscope

# The logs Drishti reads. dxt.darshan is not among them: Drishti 0.8 fails on it (its log
# has an empty executable name and handle_darshan.py takes `job['exe'].split()[0]`).
LOGS = [name for name in DARSHAN_LOG_NAMES if name != "dxt"]

# Drishti's codes on each log (its CSV export; the informational P01-P04, P12, P14, M04, M05
# left out, as in FINDINGS.md "On the example logs").
DRISHTI = {
    "example": ["P08", "P10", "M06", "M07"],
    "ior_hdf5_example": ["P08", "P10", "P19", "M06", "M07"],
    "noposix": ["S01", "M01"],
    "noposixopens": ["S01", "M01"],
    "pq_app_readAB_writeC_id71326_7-31-5658-2037904274838284930_55623":
        ["P07", "P08", "P18", "P19", "M06", "M07"],
    "pq_app_read_id71317_7-31-5657-2037904274838284930_55623": ["P08", "M01"],
    "pq_app_read_id71344_7-31-5658-2037904274838284930_55623": ["S01", "P08", "M01"],
    "pq_app_write_id71296_7-31-5657-2037904274838284930_55623": ["P08", "M01"],
    "pq_app_write_id71303_7-31-5657-2037904274838284930_55623": ["P08", "M01"],
    "pq_app_write_id71310_7-31-5657-2037904274838284930_55623": ["P08", "M01"],
    "sample-badost": ["M01"],
    "sample-dxt-simple": ["P21", "M06", "M07"],
    "sample-goodost": ["M01"],
    "shane_macsio_id29959_5-22-32552-7035573431850780836_1590156158":
        ["P06", "P08", "P16", "P18", "P19", "M06", "M07"],
}
INFORMATIONAL = {"P01", "P02", "P03", "P04", "P12", "P14", "M04", "M05"}

PQ_ZERO = "the pq_app logs record a run time of 0 s: no cost can be a share of it"
SMALL_MISALIGNED = "Drishti's P08 counts misaligned requests of every size, pioscope those of a unit or more"
P10_REVERSED = "Drishti's P10 fires on a file written with holes; no byte is written twice"
SHARED_IMBALANCE = ("Drishti's P18/P19 compare the slowest and fastest rank of a shared file with the "
                    "file's total; pioscope the slowest rank's I/O time with the mean, costed")
# Where a triggered code's rule does not fire, and why (FINDINGS.md "Where they differ").
DIFFERENCES = {
    ("example", "P10"): P10_REVERSED,
    ("ior_hdf5_example", "P08"): SMALL_MISALIGNED,
    ("ior_hdf5_example", "P10"): P10_REVERSED,
    ("ior_hdf5_example", "P19"): SHARED_IMBALANCE,
    **{("pq_app_readAB_writeC_id71326_7-31-5658-2037904274838284930_55623", c): PQ_ZERO
       for c in ("P07", "P08", "P18", "P19", "M06", "M07")},
    ("pq_app_read_id71317_7-31-5657-2037904274838284930_55623", "P08"): PQ_ZERO,
    ("pq_app_read_id71344_7-31-5658-2037904274838284930_55623", "S01"): PQ_ZERO,
    ("pq_app_read_id71344_7-31-5658-2037904274838284930_55623", "P08"): PQ_ZERO,
    **{(f"pq_app_write_id{run}_7-31-5657-2037904274838284930_55623", "P08"): PQ_ZERO
       for run in (71296, 71303, 71310)},
    ("sample-dxt-simple", "M06"): "one blocking MPI-IO call of its DXT trace: no time to overlap",
    ("sample-dxt-simple", "M07"): "one blocking MPI-IO call of its DXT trace: no time to overlap",
    ("shane_macsio_id29959_5-22-32552-7035573431850780836_1590156158", "P08"): SMALL_MISALIGNED,
    ("shane_macsio_id29959_5-22-32552-7035573431850780836_1590156158", "P18"): SHARED_IMBALANCE,
    ("shane_macsio_id29959_5-22-32552-7035573431850780836_1590156158", "P19"): SHARED_IMBALANCE,
}


def drishti_map() -> dict:
    """FINDINGS.md's table: code -> (the rules that cover it, whether the report states it
    as a fact instead)."""
    text = (ROOT / "docs" / "FINDINGS.md").read_text()
    table = text.split("## Drishti's insights and the rules that cover them")[1].split("\n\n")[2]
    codes = {}
    for row in table.splitlines()[2:]:
        cells = [c.strip() for c in row.strip("|").split("|")]
        for code in cells[0].split(", "):
            codes[code] = (set(re.findall(r"`([a-z0-9-]+)`", cells[2])), cells[2].startswith("report"))
    return codes


def drishti_codes(log, out) -> list:
    """The codes Drishti triggers on `log` (its --csv export: one row, a column per code)."""
    # Drishti's `drishti` command, run by this interpreter (the one with PyDarshan): an
    # ImportError here means drishti-io is missing (make deps installs it).
    subprocess.run([sys.executable, "-c", "from drishti.reporter import main; main()",
                    "--csv", "--export_dir", str(out), str(log)], check=True,
                   stdout=subprocess.DEVNULL)
    (row,) = csv.DictReader(open(out / f"{log.stem}.csv"))
    return [code for code, fired in row.items() if fired == "True"]


def test_the_map_covers_every_drishti_code():
    codes = drishti_map()
    assert len(codes) == 32 and {"S01", "P21", "M10"} <= set(codes)
    assert codes["P05"] == ({"small-requests"}, False)
    assert codes["P01"][1] and codes["M01"][1]


@pytest.mark.parametrize("name", LOGS)
def test_drishti_insights_map_to_pioscope_findings(darshan_logs, tmp_path, name):
    log = darshan_logs / f"{name}.darshan"
    codes = drishti_codes(log, tmp_path)
    assert [c for c in codes if c not in INFORMATIONAL] == DRISHTI[name]
    pioscope("import", "darshan", log, "-o", tmp_path / "t")
    findings = {f["id"] for f in json.loads(pioscope("report", tmp_path / "t", "--json").stdout)["findings"]}
    covered = drishti_map()
    unmatched = []
    for code in codes:
        rules, reported = covered[code]
        if not reported and not rules & findings:
            unmatched.append(code)
    assert {(name, c): DIFFERENCES.get((name, c)) for c in unmatched} == \
        {k: v for k, v in DIFFERENCES.items() if k[0] == name}
