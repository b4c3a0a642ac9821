"""The report's profile as data: `pioscope report --json` (every section, docs/CLI.md) kept as
the binary wrote it, with the sections a notebook tabulates or draws as data frames and arrays.
"""
from dataclasses import dataclass

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class Profile:
    """One `pioscope report --json` object; `data` is all of it, as parsed."""
    data: dict

    @property
    def job(self) -> dict:
        """Ranks, processes, hosts, duration, events, scope, partial reasons."""
        return self.data["job"]

    @property
    def findings(self) -> pd.DataFrame:
        """Every finding, most costly first: id, severity, title, cost_ns, remedy, evidence."""
        return pd.DataFrame(self.data["findings"],
                            columns=["id", "severity", "title", "cost_ns", "remedy", "evidence"])

    @property
    def ranks(self) -> pd.DataFrame:
        """Per rank its wall, I/O (and its classes), MPI and other time, ns."""
        rows = []
        for r in self.data["breakdown"]["ranks"]:
            row = {k: r[k] for k in ("rank", "host", "wall_ns", "io_ns", "mpi_ns", "other_ns")}
            row.update({f"io_{k}": v for k, v in r["io"].items()})
            rows.append(row)
        return pd.DataFrame(rows)

    def table(self, by: str) -> pd.DataFrame:
        """The statistics rows of one grouping (`layer`, `func`, `file`, `rank`, `host`,
        `phase`, `server`), as `stats --json` has them."""
        tables = self.data["tables"]
        if by not in tables:
            raise KeyError(f"no table by {by!r}; the profile has {', '.join(tables)}")
        return pd.DataFrame(tables[by])

    def size_histograms(self) -> dict:
        """Per layer with data calls, {bin_min: count} of its requested sizes (bins of powers
        of two: [b, 2b), and 0)."""
        return {row["layer"]: {b["bin_min"]: b["count"] for b in row["size_histogram"]}
                for row in self.data["tables"]["layer"] if row["size_histogram"]}

    @property
    def heatmap(self) -> np.ndarray:
        """I/O busy time per (rank row, time bin), ns; the grid is described by
        `data['heatmap']` (`per_row` ranks per row, `bin_ns` per column)."""
        return np.array(self.data["heatmap"]["busy_ns"], dtype=np.int64).reshape(
            self.data["heatmap"]["rows"], self.data["heatmap"]["columns"])
