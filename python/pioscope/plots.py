"""The notebook plots (matplotlib): a timeline of some ranks' calls, nested as in the viewer and
in its colours; the request-size histogram per layer and the rank-by-time I/O heat map, both
drawn from the report's profile (the binary's analysis, not a second one).
"""
from typing import Dict, Optional, Tuple

import numpy as np
import pyarrow as pa

from . import schema
from .colours import Colours

# Share of a lane's height the bars use (the rest separates lanes).
LANE_FILL = 0.8
_BINARY_UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]


def _axes(ax, height: float = 4):
    """`ax`, or the axes of a new figure `height` inches high (never pyplot's current one, so
    nothing shows twice in a notebook)."""
    if ax is not None:
        return ax
    from matplotlib.figure import Figure
    return Figure(figsize=(10, height), layout="constrained").add_subplot()


def timeline(events: pa.Table, colours: Colours, ax=None, legend: bool = True,
             time: Optional[Tuple[int, int]] = None):
    """One lane per thread of each process (ranks first), time in seconds since the job start
    (the x axis spans `time`, [t0, t1) ns, when given, else the calls);
    a call is a bar whose band narrows with its depth, so a POSIX write shows inside the MPI-IO
    call that issued it. One PolyCollection per function and depth (deeper ones drawn on top),
    in the function's shade of its layer's colour; the legend names the layers. Returns the
    figure."""
    from matplotlib.collections import PolyCollection
    from matplotlib.patches import Patch

    col = schema.events
    ev = {name: events[name].to_numpy(zero_copy_only=False)
          for name in (col.RANK, col.PROCESS, col.THREAD, col.START_NS, col.DURATION_NS,
                       col.DEPTH)}
    funcs = events[col.FUNC].to_numpy(zero_copy_only=False).astype(str)
    layers = events[col.LAYER].to_numpy(zero_copy_only=False).astype(str)
    keys = np.stack([ev[col.RANK], ev[col.PROCESS], ev[col.THREAD]], axis=1)
    lanes, lane_of = (np.unique(keys, axis=0, return_inverse=True) if len(keys)
                      else (np.empty((0, 3), int), np.empty(0, int)))
    lane_of = lane_of.reshape(-1)
    ax = _axes(ax, height=max(2.5, 1.2 + 0.3 * len(lanes)))
    band = LANE_FILL / (int(ev[col.DEPTH].max()) + 1 if len(keys) else 1)
    x0 = ev[col.START_NS] / 1e9
    x1 = (ev[col.START_NS] + ev[col.DURATION_NS]) / 1e9
    y0 = lane_of - LANE_FILL / 2 + ev[col.DEPTH] * band
    y1 = lane_of + LANE_FILL / 2
    depths = ev[col.DEPTH]
    for func, depth in dict.fromkeys(zip(funcs, depths)):
        at = (funcs == func) & (depths == depth)
        boxes = np.stack([np.stack([x0[at], y0[at]], 1), np.stack([x0[at], y1[at]], 1),
                          np.stack([x1[at], y1[at]], 1), np.stack([x1[at], y0[at]], 1)], 1)
        colour = colours.of_function(func, layers[at][0])
        # An edge of the fill colour keeps calls shorter than a pixel visible.
        ax.add_collection(PolyCollection(boxes, facecolors=[colour], edgecolors=[colour],
                                         linewidths=0.3, label=func, zorder=1 + int(depth)))
    several = {}
    for rank, process, thread in lanes:
        several[rank] = several.get(rank, 0) + 1
    ax.set_yticks(range(len(lanes)),
                  [f"r{r}" if several[r] == 1 else f"r{r} p{p} t{t}" for r, p, t in lanes])
    ax.set_ylim(len(lanes) - 0.5, -0.5)
    if time is not None:
        ax.set_xlim(time[0] / 1e9, time[1] / 1e9)
    elif len(keys):
        ax.set_xlim(x0.min(), x1.max())
    ax.set_xlabel("time since job start (s)")
    if legend and len(keys):
        handles = [Patch(color=colours.layers[layer], label=layer)
                   for layer in dict.fromkeys(layers)]
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small")
    return ax.figure


def size_label(size: int) -> str:
    """A power-of-two bin's lower bound in binary units: 0, 1 B, 4 KiB, 16 MiB."""
    if size == 0:
        return "0"
    unit = min((int(size).bit_length() - 1) // 10, len(_BINARY_UNITS) - 1)
    return f"{size >> (10 * unit)} {_BINARY_UNITS[unit]}"


def sizes(histograms: Dict[str, Dict[int, int]], colours: Colours, ax=None):
    """Data calls per request-size bin ([b, 2b)), one bar series per layer side by side, in the
    layer's colour. One bar container per layer. Returns the figure."""
    ax = _axes(ax)
    bins = sorted({b for h in histograms.values() for b in h})
    width = LANE_FILL / max(len(histograms), 1)
    for i, (layer, counts) in enumerate(histograms.items()):
        ax.bar(np.arange(len(bins)) + (i - (len(histograms) - 1) / 2) * width,
               [counts.get(b, 0) for b in bins], width, color=colours.layers[layer], label=layer)
    ax.set_xticks(range(len(bins)), [size_label(b) for b in bins], rotation=45, ha="right")
    ax.set_xlabel("request size (bin from)")
    ax.set_ylabel("data calls")
    if histograms:
        ax.legend()
    return ax.figure


def heatmap(grid: dict, busy_ns: np.ndarray, ax=None, colorbar: bool = True):
    """The report's rank-by-time heat map: per row of ranks and time bin the share of the
    ranks' time spent in I/O (outermost I/O calls). One image (and a colour bar). Returns the figure."""
    from matplotlib.ticker import MaxNLocator

    ax = _axes(ax)
    rows, per_row, units = grid["rows"], grid["per_row"], grid["units"]
    # The last row may hold fewer ranks than the others.
    ranks_in_row = np.minimum(per_row, units - np.arange(rows) * per_row).clip(min=1)
    share = busy_ns / (np.maximum(grid["bin_ns"], 1) * ranks_in_row[:, None])
    seconds = grid["columns"] * grid["bin_ns"] / 1e9
    # Rank (or process) numbers on the y axis, a row's centre at its middle rank.
    image = ax.imshow(share, aspect="auto", interpolation="nearest", cmap="viridis",
                      vmin=0, vmax=1, extent=(0, seconds, rows * per_row - 0.5, -0.5))
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("time since job start (s)")
    ax.set_ylabel(grid["unit"])
    if colorbar:
        ax.figure.colorbar(image, ax=ax, label="share of time in I/O")
    return ax.figure
