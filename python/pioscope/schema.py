"""The names of the trace store's files and columns this package reads (docs/FORMAT.md).

A mirror of the Rust owner, crates/pioscope-trace/src/store/schema.rs (its `pub mod`s are the
classes here), with the file names and format constants beside it; tests/test_python_api.py
proves the two agree, so a rename there fails a test here rather than a user's notebook.
"""

# meta.json `format`, and the newest store `version` this package reads (newer ones are refused).
FORMAT_NAME = "pioscope-trace"
FORMAT_VERSION = 1

META_FILE = "meta.json"
EVENTS_FILE = "events.parquet"
FILES_FILE = "files.parquet"
SETTINGS_FILE = "settings.parquet"
MESSAGES_FILE = "messages.parquet"
COUNTERS_FILE = "counters.parquet"
DARSHAN_FILE = "darshan.parquet"


# The layers whose calls name a file and move its bytes (crates/pioscope-trace/src/functions.rs
# `Layer::is_file_layer`): the request sizes worth a histogram.
FILE_LAYERS = ("posix", "stdio", "mpiio", "hdf5", "pnetcdf")


class events:
    """Columns of events.parquet."""
    ID = "id"
    RANK = "rank"
    PROCESS = "process"
    THREAD = "thread"
    START_NS = "start_ns"
    DURATION_NS = "duration_ns"
    LAYER = "layer"
    FUNC = "func"
    DEPTH = "depth"
    PARENT = "parent"
    FILE_ID = "file_id"


class files:
    """Columns of files.parquet."""
    FILE_ID = "file_id"
    PATH = "path"


class counters:
    """Columns of counters.parquet, in order (an empty table of them stands for a store
    without one)."""
    TIME_NS = "time_ns"
    INTERVAL_NS = "interval_ns"
    HOST = "host"
    PROCESS = "process"
    COUNTER = "counter"
    VALUE = "value"
    ALL = (TIME_NS, INTERVAL_NS, HOST, PROCESS, COUNTER, VALUE)


class added:
    """Columns the API adds to the events it returns (not in the store)."""
    PATH = "path"
    PARENT_FUNC = "parent_func"
    PARENT_LAYER = "parent_layer"
