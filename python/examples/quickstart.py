"""pioscope from Python, in notebook cells (`# %%`: Jupyter, VS Code and Spyder run them one by
one; the whole file runs as a script too). docs/PYTHON.md walks through it; tests/ runs it.

    python3 examples/quickstart.py TRACE [FIGURES_DIR]

TRACE is a trace store directory (`pioscope run -o TRACE ...`) or a Darshan log.
"""
# %% Open a trace
import sys
from pathlib import Path

import pioscope

trace = pioscope.open(sys.argv[1] if len(sys.argv) > 1 else "run1")
figures = Path(sys.argv[2]) if len(sys.argv) > 2 else Path(".")
print(trace)
print("ranks:", trace.ranks, "| events:", trace.meta["counts"]["events"])

# %% Events as a pandas DataFrame: function, layer, file path and the enclosing call resolved
ev = trace.events()
print("events read:", len(ev))
print(ev[["rank", "start_ns", "duration_ns", "layer", "func", "path", "parent_func"]]
      .head().to_string())

# %% Which calls issued the POSIX data transfers? (the parent of each pwrite/pread)
posix = trace.events(layers="posix", funcs=["pwrite", "pwrite64", "pread", "pread64"])
beneath = posix.groupby(["func", "parent_func"], observed=True).size()
for (func, parent), calls in beneath.items():
    print(f"{func} beneath {parent}: {calls}")

# %% A window of two ranks only (row groups and pages pruned by Parquet statistics)
window = trace.events(ranks=range(0, 2), time=(0, trace.meta["job"]["duration_ns"] // 2))
print("calls of ranks 0-1 in the first half:", len(window))

# %% Bytes written per file, application level (MPI-IO calls, or POSIX ones outside MPI-IO)
writes = ev[ev.func.str.contains("write") & (ev.layer.isin(["mpiio", "posix"]))]
top = writes[writes.parent_layer.isna() | (writes.parent_layer != "mpiio")]
print(top.groupby("path", observed=True)["size"].sum().sort_values(ascending=False).head(3))

# %% The report's profile as data: findings, time per rank, statistics tables
profile = trace.profile()
print("findings:", ", ".join(profile.findings.id) or "none")
print(profile.ranks[["rank", "wall_ns", "io_ns", "mpi_ns"]].to_string())
print(profile.table("layer")[["group", "operations", "bytes"]].to_string())

# %% Plots: timeline of ranks 0-3, request sizes, the I/O heat map
for name, figure in (("timeline", trace.plot_timeline(ranks=range(0, 4))),
                     ("sizes", trace.plot_sizes()),
                     ("heatmap", trace.plot_heatmap())):
    figure.savefig(figures / f"{name}.png", dpi=90)
    print(f"figure: {figures / name}.png")
