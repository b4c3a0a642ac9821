//! Typed access to the columns of one record batch of a store table, looked up by the names in
//! `schema` (or `lod::columns`): integers of any width the store writes, booleans, and strings
//! stored as a dictionary (as written) or plain (when another tool rewrote the file). A missing
//! or mistyped column is a [`StoreError::Schema`] naming the file and the column, never a
//! silent zero.
//!
//! Every accessor holds the batch's arrays (reference-counted, so taking one copies no data)
//! and reads a row with one match on the width: no allocation per row.

use std::path::Path;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int32Type, Int64Type, UInt8Type};
use arrow_array::{
    Array, ArrayRef, BooleanArray, Float64Array, Int32Array, Int64Array, RecordBatch,
};
use arrow_array::{StringArray, UInt8Array};
use arrow_buffer::NullBuffer;

use super::schema::events as ev;
use super::StoreError;

/// The columns of one record batch, with errors naming its file.
#[derive(Clone, Copy, Debug)]
pub struct Columns<'a> {
    path: &'a Path,
    batch: &'a RecordBatch,
}

impl<'a> Columns<'a> {
    /// The columns of `batch`, read from the table at `path`.
    pub fn new(path: &'a Path, batch: &'a RecordBatch) -> Self {
        Columns { path, batch }
    }

    /// Rows in the batch.
    pub fn rows(&self) -> usize {
        self.batch.num_rows()
    }

    /// A [`StoreError::Schema`] about `column` of this table.
    pub fn error(&self, column: &str, what: String) -> StoreError {
        StoreError::Schema {
            path: self.path.to_path_buf(),
            column: column.to_string(),
            what,
        }
    }

    fn column(&self, name: &str) -> Result<&'a ArrayRef, StoreError> {
        self.batch
            .column_by_name(name)
            .ok_or_else(|| self.error(name, "missing".to_string()))
    }

    /// The integer column `name` (Int64, Int32 or UInt8, nullable or not).
    pub fn int(&self, name: &str) -> Result<IntCol, StoreError> {
        let a = self.column(name)?;
        if let Some(x) = a.as_primitive_opt::<Int64Type>() {
            Ok(IntCol::I64(x.clone()))
        } else if let Some(x) = a.as_primitive_opt::<Int32Type>() {
            Ok(IntCol::I32(x.clone()))
        } else if let Some(x) = a.as_primitive_opt::<UInt8Type>() {
            Ok(IntCol::U8(x.clone()))
        } else {
            Err(self.error(
                name,
                format!("expected an integer column, found {}", a.data_type()),
            ))
        }
    }

    /// The string column `name`: dictionary-encoded or plain.
    pub fn str(&self, name: &str) -> Result<StrCol, StoreError> {
        let a = self.column(name)?;
        if let Some(d) = a.as_dictionary_opt::<Int32Type>() {
            if let Some(values) = d.values().as_string_opt::<i32>() {
                return Ok(StrCol {
                    keys: Some(d.keys().clone()),
                    values: values.clone(),
                });
            }
        } else if let Some(s) = a.as_string_opt::<i32>() {
            return Ok(StrCol {
                keys: None,
                values: s.clone(),
            });
        }
        Err(self.error(
            name,
            format!("expected a string column, found {}", a.data_type()),
        ))
    }

    /// The Float64 column `name` (nulls read as NaN).
    pub fn float(&self, name: &str) -> Result<Float64Array, StoreError> {
        let a = self.column(name)?;
        match a.as_primitive_opt::<Float64Type>() {
            Some(x) => Ok(x.clone()),
            None => Err(self.error(
                name,
                format!("expected a Float64 column, found {}", a.data_type()),
            )),
        }
    }

    /// The boolean column `name`.
    pub fn bool(&self, name: &str) -> Result<BoolCol, StoreError> {
        let a = self.column(name)?;
        match a.as_boolean_opt() {
            Some(b) => Ok(BoolCol(b.clone())),
            None => Err(self.error(
                name,
                format!("expected a boolean column, found {}", a.data_type()),
            )),
        }
    }
}

/// An integer column of any width the store uses.
#[derive(Clone, Debug)]
pub enum IntCol {
    /// Int64 (ids, times, offsets, sizes).
    I64(Int64Array),
    /// Int32 (ranks, processes, file ids, MPI fields).
    I32(Int32Array),
    /// UInt8 (depth, flags).
    U8(UInt8Array),
}

impl IntCol {
    /// Row `i`, None for a null (a loop over many rows takes a [`IntView`] once instead).
    #[inline]
    pub fn get(&self, i: usize) -> Option<i64> {
        self.view().get(i)
    }

    /// Row `i`, 0 for a null (for the columns that have none).
    #[inline]
    pub fn value(&self, i: usize) -> i64 {
        self.get(i).unwrap_or(0)
    }

    /// The column for a loop over every row of its batch ([`IntView`]).
    pub fn view(&self) -> IntView<'_> {
        let (values, nulls) = match self {
            IntCol::I64(a) => (Ints::I64(a.values()), a.nulls()),
            IntCol::I32(a) => (Ints::I32(a.values()), a.nulls()),
            IntCol::U8(a) => (Ints::U8(a.values()), a.nulls()),
        };
        IntView {
            values,
            nulls: nulls.filter(|n| n.null_count() > 0),
        }
    }
}

/// An [`IntCol`] read row after row by a loop over its whole batch: the values as a slice of
/// their stored width (nothing widened or copied) and the validity bits only when the column
/// has a null, so a row costs a load, and a bit test only in a column with nulls.
#[derive(Clone, Copy, Debug)]
pub struct IntView<'a> {
    values: Ints<'a>,
    nulls: Option<&'a NullBuffer>,
}

#[derive(Clone, Copy, Debug)]
enum Ints<'a> {
    I64(&'a [i64]),
    I32(&'a [i32]),
    U8(&'a [u8]),
}

impl IntView<'_> {
    /// Row `i`, None for a null.
    #[inline]
    pub fn get(&self, i: usize) -> Option<i64> {
        if self.nulls.is_some_and(|n| n.is_null(i)) {
            return None;
        }
        Some(match self.values {
            Ints::I64(v) => v[i],
            Ints::I32(v) => v[i] as i64,
            Ints::U8(v) => v[i] as i64,
        })
    }

    /// Row `i`, 0 for a null (for the columns that have none).
    #[inline]
    pub fn value(&self, i: usize) -> i64 {
        self.get(i).unwrap_or(0)
    }

    /// Calls `set(row, value)` for each of `rows` with the value of row `first + i` of the
    /// column for row `i` (None for a null): one loop per width, the width matched once rather
    /// than per row, and a bit test only in a column with nulls.
    #[inline]
    pub fn fill<T>(&self, first: usize, rows: &mut [T], mut set: impl FnMut(&mut T, Option<i64>)) {
        fn each<T>(
            rows: &mut [T],
            values: impl Iterator<Item = i64>,
            set: &mut impl FnMut(&mut T, Option<i64>),
        ) {
            rows.iter_mut()
                .zip(values)
                .for_each(|(r, v)| set(r, Some(v)))
        }
        match (self.values, self.nulls) {
            (Ints::I64(v), None) => each(rows, v[first..].iter().copied(), &mut set),
            (Ints::I32(v), None) => each(rows, v[first..].iter().map(|&x| x as i64), &mut set),
            (Ints::U8(v), None) => each(rows, v[first..].iter().map(|&x| x as i64), &mut set),
            (_, Some(_)) => {
                (rows.iter_mut().enumerate()).for_each(|(i, r)| set(r, self.get(first + i)))
            }
        }
    }
}

/// A boolean column.
#[derive(Clone, Debug)]
pub struct BoolCol(BooleanArray);

impl BoolCol {
    /// Row `i`, false for a null.
    #[inline]
    pub fn value(&self, i: usize) -> bool {
        // The buffers' own accessors inline; the array's are out-of-line calls per row.
        self.0.nulls().is_none_or(|n| n.is_valid(i)) && self.0.values().value(i)
    }
}

/// A string column, dictionary-encoded or plain. A row's *key* is its dictionary key, or the
/// row itself in a plain column, so that work per distinct string ([`StrCol::map_keys`]) is
/// written once for both.
#[derive(Clone, Debug)]
pub struct StrCol {
    keys: Option<Int32Array>,
    values: StringArray,
}

impl StrCol {
    /// A column of `rows` nulls (a column not read).
    pub fn null(rows: usize) -> StrCol {
        StrCol {
            keys: None,
            values: StringArray::new_null(rows),
        }
    }

    /// The key of row `i`, None for a null.
    #[inline]
    pub fn key(&self, i: usize) -> Option<usize> {
        match &self.keys {
            Some(k) => k.is_valid(i).then(|| k.value(i) as usize),
            None => self.values.is_valid(i).then_some(i),
        }
    }

    /// True when every row is null (`get` is None for each): a column not read, or a batch
    /// without a value in it.
    pub fn all_null(&self) -> bool {
        match &self.keys {
            Some(k) => k.null_count() == k.len(),
            None => self.values.null_count() == self.values.len(),
        }
    }

    /// Number of keys (dictionary size, or rows of a plain column).
    pub fn key_count(&self) -> usize {
        self.values.len()
    }

    /// The string of a key ("" for a null value).
    #[inline]
    pub fn value(&self, key: usize) -> &str {
        if self.values.is_valid(key) {
            self.values.value(key)
        } else {
            ""
        }
    }

    /// Row `i`'s string, None for a null.
    #[inline]
    pub fn get(&self, i: usize) -> Option<&str> {
        self.key(i).map(|k| self.value(k))
    }

    /// Row `i`'s string, "" for a null.
    #[inline]
    pub fn text(&self, i: usize) -> &str {
        self.get(i).unwrap_or("")
    }

    /// `f` of each key's string, computed once per key (index the result with
    /// [`StrCol::key`]).
    pub fn map_keys<T>(&self, mut f: impl FnMut(&str) -> T) -> Vec<T> {
        (0..self.key_count()).map(|k| f(self.value(k))).collect()
    }
}

/// The columns of events.parquet that place a call on its timeline row (process, thread,
/// start, duration, depth, function): what the index builder and every window, statistics
/// and details read decode.
#[derive(Clone, Debug)]
pub struct CallColumns {
    /// `process`.
    pub process: IntCol,
    /// `thread`.
    pub thread: IntCol,
    /// `start_ns`.
    pub start: IntCol,
    /// `duration_ns`.
    pub dur: IntCol,
    /// `depth`.
    pub depth: IntCol,
    /// `func`.
    pub func: StrCol,
}

impl CallColumns {
    /// The columns, for a projection.
    pub const NAMES: [&'static str; 6] = [
        ev::PROCESS,
        ev::THREAD,
        ev::START_NS,
        ev::DURATION_NS,
        ev::DEPTH,
        ev::FUNC,
    ];

    /// [`CallColumns::NAMES`] and `more`, for a projection that reads other columns too.
    pub fn names_with(more: &[&'static str]) -> Vec<&'static str> {
        [&Self::NAMES[..], more].concat()
    }

    /// The call columns of a batch of events.parquet.
    pub fn new(c: &Columns<'_>) -> Result<CallColumns, StoreError> {
        Ok(CallColumns {
            process: c.int(ev::PROCESS)?,
            thread: c.int(ev::THREAD)?,
            start: c.int(ev::START_NS)?,
            dur: c.int(ev::DURATION_NS)?,
            depth: c.int(ev::DEPTH)?,
            func: c.str(ev::FUNC)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::DictionaryArray;
    use arrow_schema::{DataType, Field, Schema};

    use super::*;

    fn batch() -> RecordBatch {
        let dict = DictionaryArray::<Int32Type>::try_new(
            Int32Array::from(vec![Some(1), None, Some(0)]),
            Arc::new(StringArray::from(vec!["a", "b"])),
        )
        .unwrap();
        let schema = Schema::new(vec![
            Field::new("n", DataType::Int32, true),
            Field::new("d", dict.data_type().clone(), true),
            Field::new("s", DataType::Utf8, true),
            Field::new("b", DataType::Boolean, false),
        ]);
        RecordBatch::try_new(
            Arc::new(schema),
            vec![
                Arc::new(Int32Array::from(vec![Some(7), None, Some(-1)])),
                Arc::new(dict),
                Arc::new(StringArray::from(vec![Some("x"), Some("y"), None])),
                Arc::new(BooleanArray::from(vec![true, false, true])),
            ],
        )
        .unwrap()
    }

    #[test]
    fn reads_every_kind_of_column() {
        let b = batch();
        let c = Columns::new(Path::new("t.parquet"), &b);
        let n = c.int("n").unwrap();
        assert_eq!(
            (n.get(0), n.get(1), n.value(1), n.value(2)),
            (Some(7), None, 0, -1)
        );
        let view = n.view();
        assert_eq!(
            (view.get(0), view.get(1), view.value(1), view.value(2)),
            (Some(7), None, 0, -1)
        );
        let mut filled = [Some(0); 3];
        view.fill(0, &mut filled, |r, v| *r = v);
        assert_eq!(filled, [Some(7), None, Some(-1)]);
        let mut from_row_1 = [Some(0); 2];
        view.fill(1, &mut from_row_1, |r, v| *r = v);
        assert_eq!(from_row_1, [None, Some(-1)]);
        // Without nulls each width has its own loop.
        for col in [
            IntCol::I64(Int64Array::from(vec![5, -6])),
            IntCol::I32(Int32Array::from(vec![5, -6])),
            IntCol::U8(UInt8Array::from(vec![5, 250])),
        ] {
            let mut filled = [None; 2];
            col.view().fill(0, &mut filled, |r, v| *r = v);
            assert_eq!(filled, [col.get(0), col.get(1)]);
            let mut last = [None];
            col.view().fill(1, &mut last, |r, v| *r = v);
            assert_eq!(last, [col.get(1)]);
            assert!(filled.iter().all(Option::is_some));
        }
        let d = c.str("d").unwrap();
        assert_eq!((d.get(0), d.get(1), d.text(2)), (Some("b"), None, "a"));
        assert_eq!(d.map_keys(str::len), vec![1, 1]);
        let s = c.str("s").unwrap();
        assert_eq!((s.key(1), s.get(1), s.get(2)), (Some(1), Some("y"), None));
        assert_eq!(s.key_count(), 3);
        assert!(c.bool("b").unwrap().value(2));
    }

    #[test]
    fn names_the_file_and_column_of_a_bad_column() {
        let b = batch();
        let c = Columns::new(Path::new("t.parquet"), &b);
        let e = c.int("s").unwrap_err().to_string();
        assert!(
            e.starts_with("t.parquet: column s: expected an integer"),
            "{e}"
        );
        let e = c.str("missing").unwrap_err().to_string();
        assert_eq!(e, "t.parquet: column missing: missing");
        assert!(c.bool("n").is_err());
    }
}
