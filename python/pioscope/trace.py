"""`pioscope.open` and `Trace`: one trace store, its tables as data frames (filters pushed down
to Parquet, ids resolved to names), the report's profile, the colour table and the plots.
"""
import json
from pathlib import Path
from typing import Iterable, Optional, Sequence, Tuple, Union

import pyarrow as pa

from . import binary, darshan_log, frames, plots, schema
from .colours import Colours
from .profile import Profile

PathLike = Union[str, Path]


def open(path: PathLike, store: Optional[PathLike] = None, backend: str = "pandas") -> "Trace":
    """Opens a trace store directory, or a Darshan log (a file), imported by `pioscope import
    darshan` into `store` or, without it, into a cache (once per log). `backend` is what the
    tables come as by default: "pandas", "polars" or "arrow"."""
    path = Path(path)
    if path.is_dir():
        return Trace(path, backend)
    if path.is_file():
        return Trace(darshan_log.store_of(path, Path(store) if store else None), backend)
    raise FileNotFoundError(f"{path}: no such trace store or Darshan log")


class Trace:
    """A trace store (docs/FORMAT.md). Times are ns since the job start."""

    def __init__(self, path: PathLike, backend: str = "pandas"):
        self.path = Path(path)
        meta_file = self.path / schema.META_FILE
        if not meta_file.is_file():
            raise ValueError(f"{self.path}: not a trace store (no {schema.META_FILE})")
        #: meta.json as a dict: the job, its processes and clocks, counts, what was lost.
        self.meta = json.loads(meta_file.read_text())
        if self.meta.get("format") != schema.FORMAT_NAME:
            raise ValueError(f"{meta_file}: format is {self.meta.get('format')!r}, "
                             f"not {schema.FORMAT_NAME!r}")
        if self.meta.get("version", 0) > schema.FORMAT_VERSION:
            raise ValueError(f"{meta_file}: store version {self.meta['version']} is newer than "
                             f"this package reads ({schema.FORMAT_VERSION}); update pioscope")
        if backend not in frames.BACKENDS:
            raise ValueError(f"backend must be one of {', '.join(frames.BACKENDS)}, "
                             f"not {backend!r}")
        self.backend = backend
        self._profiles = {}
        self._colours = None

    def __repr__(self):
        job = self.meta["job"]
        return (f"<pioscope.Trace {self.path}: {job['ranks']} ranks, "
                f"{self.meta['counts']['events']} events, {job['duration_ns'] / 1e9:.3f} s>")

    @property
    def ranks(self) -> int:
        """MPI ranks of the job (0 without MPI)."""
        return self.meta["job"]["ranks"]

    def _table(self, name: str) -> Path:
        return self.path / name

    def events(self, columns: Optional[Sequence[str]] = None,
               ranks: Union[None, int, range, Iterable[int]] = None,
               time: Optional[Tuple[int, int]] = None,
               layers: Union[None, str, Iterable[str]] = None,
               funcs: Union[None, str, Iterable[str]] = None,
               resolve: bool = True, backend: Optional[str] = None):
        """The traced calls in store order (rank, then start). `columns` projects; `ranks` (a
        rank, a range, a list), `time` ([t0, t1) ns: calls overlapping it), `layers` and `funcs`
        filter, pushed down to Parquet. With `resolve`, added columns: `path` (the file of
        `file_id`) and `parent_func`, `parent_layer` (the enclosing call's; parents filtered
        out are read by id), when their source columns are selected."""
        col = schema.events
        table = frames.read(self._table(schema.EVENTS_FILE), columns,
                            frames.events_filter(ranks, time, layers, funcs))
        if resolve and col.FILE_ID in table.column_names:
            table = frames.add_paths(table, frames.read(self._table(schema.FILES_FILE),
                                                        [schema.files.FILE_ID, schema.files.PATH]))
        if resolve and col.PARENT in table.column_names:
            table = frames.add_parents(table, self._table(schema.EVENTS_FILE))
        return frames.convert(table, backend or self.backend)

    def files(self, backend: Optional[str] = None):
        """Every file path with its file system, ranks and records."""
        return self._read(schema.FILES_FILE, backend)

    def settings(self, backend: Optional[str] = None):
        """MPI-IO hints, file views, HDF5 and PnetCDF properties, one row per key=value."""
        return self._read(schema.SETTINGS_FILE, backend)

    def messages(self, backend: Optional[str] = None):
        """MPI point-to-point messages, each send paired with its receive."""
        return self._read(schema.MESSAGES_FILE, backend)

    def counters(self, backend: Optional[str] = None):
        """Sampled node and process counters; no rows when nothing was sampled (or the store
        predates the table)."""
        if not self._table(schema.COUNTERS_FILE).is_file():
            empty = pa.table({name: pa.array([], pa.null()) for name in schema.counters.ALL})
            return frames.convert(empty, backend or self.backend)
        return self._read(schema.COUNTERS_FILE, backend)

    def darshan(self, backend: Optional[str] = None):
        """Every counter of every record of the Darshan log this store was imported from."""
        if not self._table(schema.DARSHAN_FILE).is_file():
            raise ValueError(f"{self.path}: not imported from a Darshan log "
                             f"(no {schema.DARSHAN_FILE})")
        return self._read(schema.DARSHAN_FILE, backend)

    def _read(self, name: str, backend: Optional[str]):
        return frames.convert(frames.read(self._table(name)), backend or self.backend)

    def profile(self, all: bool = False, config: Optional[PathLike] = None) -> Profile:
        """The report's profile (`pioscope report --json`: findings, time breakdown, tables,
        patterns, aggregation, heat map); `all` counts every record (`--all`), `config` names a
        findings thresholds file. Computed once per options."""
        options = (["--all"] if all else []) + (["--config", config] if config else [])
        key = tuple(map(str, options))
        if key not in self._profiles:
            self._profiles[key] = Profile(binary.report_json(self.path, *options))
        return self._profiles[key]

    def colours(self) -> Colours:
        """The colours the viewer draws this trace's layers and functions in."""
        if self._colours is None:
            self._colours = Colours.from_table(binary.colour_table())
        return self._colours

    def plot_timeline(self, ranks: Union[int, range, Iterable[int]] = range(0, 4),
                      time: Optional[Tuple[int, int]] = None,
                      layers: Union[None, str, Iterable[str]] = None, ax=None,
                      legend: bool = True):
        """The calls of `ranks` (within `time`, of `layers`) on a timeline, nested by depth, in
        the viewer's colours; one lane per thread. Returns the matplotlib figure."""
        col = schema.events
        table = self.events(columns=[col.RANK, col.PROCESS, col.THREAD, col.START_NS,
                                     col.DURATION_NS, col.DEPTH, col.FUNC, col.LAYER],
                            ranks=ranks, time=time, layers=layers, backend="arrow")
        return plots.timeline(table, self.colours(), ax, legend, time)

    def plot_sizes(self, layers: Iterable[str] = schema.FILE_LAYERS, ax=None):
        """Data calls per request-size bin of each of `layers` that has any (the report's
        histograms; by default the file layers'). Returns the figure."""
        histograms = self.profile().size_histograms()
        return plots.sizes({layer: histograms[layer] for layer in layers if layer in histograms},
                           self.colours(), ax)

    def plot_heatmap(self, ax=None, colorbar: bool = True):
        """The report's rank-by-time I/O heat map. Returns the figure."""
        p = self.profile()
        return plots.heatmap(p.data["heatmap"], p.heatmap, ax, colorbar)
