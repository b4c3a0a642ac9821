"""Opening a Darshan log: `pioscope import darshan` makes a trace store of it once, in a cache
keyed by the log's content (a log imported again, under any name, is not read again), or where
the caller asks.
"""
import hashlib
import os
from pathlib import Path
from typing import Optional

from . import binary, schema

# Overrides the cache folder (default: $XDG_CACHE_HOME/pioscope/darshan, ~/.cache/...).
CACHE_ENV = "PIOSCOPE_CACHE"


def cache_dir() -> Path:
    """Where imported logs are kept."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "pioscope" / "darshan"


def _digest(log: Path) -> str:
    h = hashlib.sha256()
    with open(log, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()[:32]


def store_of(log: Path, store: Optional[Path] = None) -> Path:
    """The trace store of Darshan log `log`: `store` if given (imported unless it already is a
    trace), else the cache's, imported on first use."""
    if store is None:
        store = cache_dir() / f"{log.stem}-{_digest(log)}"
    if (store / schema.META_FILE).is_file():
        return store
    store.parent.mkdir(parents=True, exist_ok=True)
    try:
        binary.import_darshan(log, store)
    except binary.PioscopeError:
        # Another process importing the same log at once won the rename: use its store.
        if (store / schema.META_FILE).is_file():
            return store
        raise
    return store
