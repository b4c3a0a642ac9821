"""Reading the store's tables into Arrow with filters pushed down to Parquet (a rank or a time
window prunes row groups and pages by their statistics), resolving ids to names (file paths,
the parent call's function and layer), and handing the result over as pandas, Polars or Arrow.
"""
import numbers
from pathlib import Path
from typing import Iterable, Optional, Sequence, Tuple, Union

import numpy as np
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


# The store's string columns: dictionary-encoded (docs/FORMAT.md).
_DICTIONARY = pa.dictionary(pa.int32(), pa.string())


def _one_array(chunks: list, type_: pa.DataType) -> pa.Array:
    """Arrays or chunked arrays of `type_` as one array; dictionaries are unified, never
    decoded (a column of millions of calls has a few dozen names)."""
    column = pa.chunked_array([a for c in chunks
                               for a in (c.chunks if isinstance(c, pa.ChunkedArray) else [c])],
                              type_)
    if pa.types.is_dictionary(type_):
        column = column.unify_dictionaries()
    return column.combine_chunks()


def _positions(values: pa.Array, ids: pa.Array) -> pa.Array:
    """Where each of `values` is in `ids` (distinct), null where absent or null. By binary
    search: `ids` come in store order, already sorted, so sorting them costs one pass (pyarrow's
    hash lookup takes several times as long on millions of calls)."""
    if len(ids) == 0:
        return pa.nulls(len(values), pa.int64())
    keys = ids.to_numpy()
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    wanted = pc.fill_null(values, -1).to_numpy()
    at = np.minimum(np.searchsorted(ordered, wanted), len(ordered) - 1)
    found = (ordered[at] == wanted) & values.is_valid().to_numpy(zero_copy_only=False)
    return pa.array(order[at], mask=~found)


def add_paths(events: pa.Table, files: pa.Table) -> pa.Table:
    """`events` with the file path of each `file_id` (null where there is none), as a
    dictionary over the files' paths."""
    at = pc.index_in(events[schema.events.FILE_ID], value_set=files[schema.files.FILE_ID])
    paths = pa.DictionaryArray.from_arrays(_one_array([at], pa.int32()),
                                           _one_array([files[schema.files.PATH]], pa.string()))
    return events.append_column(schema.added.PATH, paths)


def add_parents(events: pa.Table, events_path: Path) -> pa.Table:
    """`events` with the function and layer of each call's parent (null at top level). Parents
    outside `events` (left out by a layer filter or a projection) are read by id from
    `events_path`: ids are sorted, so that read is pruned to the row groups holding them."""
    col = schema.events
    parents = _one_array([events[col.PARENT]], pa.int64())
    ids, funcs, layers = [], [], []
    if {col.ID, col.FUNC, col.LAYER} <= set(events.column_names):
        ids, funcs, layers = [events[col.ID]], [events[col.FUNC]], [events[col.LAYER]]
    at = _positions(parents, _one_array(ids, pa.int64()))
    missing = pc.unique(pc.filter(parents, pc.and_(pc.is_null(at), pc.is_valid(parents))))
    if len(missing) > 0:
        extra = read(events_path, [col.ID, col.FUNC, col.LAYER], ds.field(col.ID).isin(missing))
        ids, funcs, layers = (ids + [extra[col.ID]], funcs + [extra[col.FUNC]],
                              layers + [extra[col.LAYER]])
        at = _positions(parents, _one_array(ids, pa.int64()))
    return (events
            .append_column(schema.added.PARENT_FUNC, pc.take(_one_array(funcs, _DICTIONARY), at))
            .append_column(schema.added.PARENT_LAYER, pc.take(_one_array(layers, _DICTIONARY), at)))
