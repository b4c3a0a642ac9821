"""Reading the store's tables into Arrow with filters pushed down to Parquet (a rank or a time
window prunes row groups and pages by their statistics), resolving ids to names (file paths,
the parent call's function and layer), and handing the result over as pandas, Polars or Arrow.
"""
import numbers
from pathlib import Path
from typing import Iterable, Optional, Sequence, Tuple, Union

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from . import schema

Backend = str  # "pandas", "polars" or "arrow"
BACKENDS = ("pandas", "polars", "arrow")

# Integer types pandas would turn into float64 when nullable: kept integers (pd.Int64 etc.).
_NULLABLE_INTS = {
    pa.int8(): pd.Int8Dtype(), pa.int16(): pd.Int16Dtype(), pa.int32(): pd.Int32Dtype(),
    pa.int64(): pd.Int64Dtype(), pa.uint8(): pd.UInt8Dtype(), pa.uint16(): pd.UInt16Dtype(),
    pa.uint32(): pd.UInt32Dtype(), pa.uint64(): pd.UInt64Dtype(),
}


def convert(table: pa.Table, backend: Backend):
    """`table` as a pandas DataFrame (nullable integers stay integers, strings of few values
    are categoricals), a Polars DataFrame, or as it is (Arrow)."""
    if backend == "arrow":
        return table
    if backend == "pandas":
        return table.to_pandas(types_mapper=_NULLABLE_INTS.get)
    if backend == "polars":
        try:
            import polars
        except ImportError as e:
            raise ImportError("backend='polars' needs Polars: pip install polars "
                              "(or ./python[polars])") from e
        return polars.from_arrow(table)
    raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, not {backend!r}")


def _one_or_many(values) -> list:
    """A name or a number alone, or several (numpy integers are numbers too)."""
    return [values] if isinstance(values, (str, numbers.Integral)) else list(values)


def events_filter(ranks: Union[None, int, range, Iterable[int]] = None,
                  time: Optional[Tuple[int, int]] = None,
                  layers: Union[None, str, Iterable[str]] = None,
                  funcs: Union[None, str, Iterable[str]] = None) -> Optional[ds.Expression]:
    """The dataset filter for events of `ranks` (a rank, a range: pushed down as bounds, or any
    ranks), overlapping `time` = [t0, t1) in ns since the job start, of `layers` and `funcs`."""
    col = schema.events
    terms = []
    if isinstance(ranks, range) and ranks.step == 1:
        terms += [ds.field(col.RANK) >= ranks.start, ds.field(col.RANK) < ranks.stop]
    elif ranks is not None:
        terms.append(ds.field(col.RANK).isin(_one_or_many(ranks)))
    if time is not None:
        t0, t1 = time
        # Calls that start before t1 and end after t0: the first bound prunes row groups.
        terms += [ds.field(col.START_NS) < t1,
                  ds.field(col.START_NS) + ds.field(col.DURATION_NS) > t0]
    if layers is not None:
        terms.append(ds.field(col.LAYER).isin(_one_or_many(layers)))
    if funcs is not None:
        terms.append(ds.field(col.FUNC).isin(_one_or_many(funcs)))
    expr = None
    for term in terms:
        expr = term if expr is None else expr & term
    return expr


def read(path: Path, columns: Optional[Sequence[str]] = None,
         filter: Optional[ds.Expression] = None) -> pa.Table:
    """A table of the store read through pyarrow's dataset (projection and pushdown)."""
    return ds.dataset(path, format="parquet").to_table(columns=columns, filter=filter)


def _flat(column, type_: pa.DataType) -> pa.Array:
    """One contiguous array of `type_` (dictionaries decoded)."""
    column = pc.cast(column, type_)
    return column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column


def add_paths(events: pa.Table, files: pa.Table) -> pa.Table:
    """`events` with the file path of each `file_id` (null where there is none)."""
    at = pc.index_in(events[schema.events.FILE_ID], value_set=files[schema.files.FILE_ID])
    paths = pc.take(files[schema.files.PATH], at)
    return events.append_column(schema.added.PATH, pc.dictionary_encode(paths))


def add_parents(events: pa.Table, events_path: Path) -> pa.Table:
    """`events` with the function and layer of each call's parent (null at top level). Parents
    outside `events` (left out by a layer filter or a projection) are read by id from
    `events_path`: ids are sorted, so that read is pruned to the row groups holding them."""
    col = schema.events
    parents = _flat(events[col.PARENT], pa.int64())
    # Start empty, so a table without parents (or without the columns) still concatenates.
    ids = [pa.array([], pa.int64())]
    funcs, layers = [pa.array([], pa.string())], [pa.array([], pa.string())]
    if {col.ID, col.FUNC, col.LAYER} <= set(events.column_names):
        ids.append(_flat(events[col.ID], pa.int64()))
        funcs.append(_flat(events[col.FUNC], pa.string()))
        layers.append(_flat(events[col.LAYER], pa.string()))
    known = pa.concat_arrays(ids)
    missing = pc.unique(pc.drop_null(pc.filter(parents, pc.invert(pc.is_in(parents, known)))))
    if len(missing) > 0:
        extra = read(events_path, [col.ID, col.FUNC, col.LAYER], ds.field(col.ID).isin(missing))
        ids.append(_flat(extra[col.ID], pa.int64()))
        funcs.append(_flat(extra[col.FUNC], pa.string()))
        layers.append(_flat(extra[col.LAYER], pa.string()))
    at = pc.index_in(parents, pa.concat_arrays(ids))
    parent_funcs = pc.take(pa.concat_arrays(funcs), at)
    parent_layers = pc.take(pa.concat_arrays(layers), at)
    return (events.append_column(schema.added.PARENT_FUNC, pc.dictionary_encode(parent_funcs))
            .append_column(schema.added.PARENT_LAYER, pc.dictionary_encode(parent_layers)))
