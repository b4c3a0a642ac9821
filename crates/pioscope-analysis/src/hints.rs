//! MPI-IO hints and view values in force at a time, from settings.parquet: for a rank, a file
//! and a key, the latest row at or before the time (docs/FORMAT.md, settings.parquet). Indexed
//! once per pass (`pass::Context::hints`) for every analysis and rule; a lookup allocates
//! nothing.

use std::str::FromStr;

use pioscope_trace::store::SettingRow;
use rustc_hash::FxHashMap;

/// ROMIO's collective buffer size per aggregator.
pub const CB_BUFFER_SIZE: &str = "cb_buffer_size";
/// Number of aggregators ROMIO uses.
pub const CB_NODES: &str = "cb_nodes";
/// Stripe size (Lustre, GPFS, PVFS drivers report it).
pub const STRIPING_UNIT: &str = "striping_unit";
/// Bytes of data in one filetype of the view.
pub const VIEW_FILETYPE_SIZE: &str = "view.filetype_size";
/// Extent of one filetype of the view (larger than its size: holes, noncontiguous in file).
pub const VIEW_FILETYPE_EXTENT: &str = "view.filetype_extent";

/// HDF5 file: the driver of its file access list (`mpio`, `sec2`, ...).
pub const H5_DRIVER: &str = "h5.driver";
/// HDF5 file: `H5Pset_alignment`'s alignment (1: none).
pub const H5_ALIGNMENT: &str = "h5.alignment";
/// HDF5 file: `H5Pset_alignment`'s threshold (objects this large or larger are aligned).
pub const H5_ALIGNMENT_THRESHOLD: &str = "h5.alignment_threshold";
/// HDF5 dataset: its dimensions (`64x512`).
pub const H5_DIMS: &str = "h5.dims";
/// HDF5 dataset: bytes of one element.
pub const H5_TYPE_SIZE: &str = "h5.type_size";
/// HDF5 dataset: its layout (`contiguous`, `chunked`, ...).
pub const H5_LAYOUT: &str = "h5.layout";
/// HDF5 dataset: its chunk's dimensions (chunked layout only).
pub const H5_CHUNK: &str = "h5.chunk";

/// Settings by (rank, file, key number), each a time-sorted list of values.
#[derive(Debug, Default)]
pub struct Hints {
    keys: FxHashMap<String, u32>,
    values: FxHashMap<(i32, i32, u32), Vec<(i64, String)>>,
}

impl Hints {
    /// Indexes the rows that name a file.
    pub fn new(settings: &[SettingRow]) -> Hints {
        let mut h = Hints::default();
        for s in settings {
            let Some(file) = s.file_id else { continue };
            let n = h.keys.len() as u32;
            let k = *h.keys.entry(s.key.clone()).or_insert(n);
            h.values
                .entry((s.rank, file, k))
                .or_default()
                .push((s.time_ns, s.value.clone()));
        }
        for v in h.values.values_mut() {
            v.sort_by_key(|(t, _)| *t);
        }
        h
    }

    fn rows(&self, rank: i32, file: i32, key: &str) -> Option<&[(i64, String)]> {
        let k = *self.keys.get(key)?;
        self.values.get(&(rank, file, k)).map(Vec::as_slice)
    }

    /// The value of `key` for `rank` and `file` at time `t` (the latest row at or before t).
    pub fn get(&self, rank: i32, file: i32, key: &str, t: i64) -> Option<&str> {
        let v = self.rows(rank, file, key)?;
        let i = v.partition_point(|(time, _)| *time <= t);
        (i > 0).then(|| v[i - 1].1.as_str())
    }

    /// The values of `key` for `rank` and `file`, parsed once, for a visitor that asks at
    /// every record: `timeline(..).at(t)` is `at(.., t)` without finding and parsing the
    /// value each time.
    pub fn timeline<T: FromStr>(&self, rank: i32, file: i32, key: &str) -> Timeline<T> {
        let rows = self.rows(rank, file, key).unwrap_or_default();
        Timeline(
            (rows.iter())
                .map(|(t, v)| (*t, v.trim().parse().ok()))
                .collect(),
        )
    }

    /// `get` parsed: a number such as cb_buffer_size.
    pub fn at<T: FromStr>(&self, rank: i32, file: i32, key: &str, t: i64) -> Option<T> {
        self.get(rank, file, key, t)?.trim().parse().ok()
    }

    /// Any value of `key` recorded for `file` (the lowest rank's first), for per-file facts
    /// such as the stripe size.
    pub fn any(&self, file: i32, key: &str) -> Option<&str> {
        let k = *self.keys.get(key)?;
        self.values
            .iter()
            .filter(|((_, f, kk), _)| *f == file && *kk == k)
            .min_by_key(|((r, _, _), _)| *r)
            .and_then(|(_, v)| v.first().map(|(_, x)| x.as_str()))
    }

    /// The lowest-numbered file with a value of `key`, and that value (the lowest rank's
    /// first), for a job-wide line such as the report's MPI-IO one.
    pub fn first_file_with(&self, key: &str) -> Option<(i32, &str)> {
        let k = *self.keys.get(key)?;
        self.values
            .iter()
            .filter(|((_, _, kk), _)| *kk == k)
            .min_by_key(|((r, f, _), _)| (*f, *r))
            .and_then(|((_, f, _), v)| v.first().map(|(_, x)| (*f, x.as_str())))
    }

    /// The file view in force, if its filetype's size and extent are both known.
    pub fn view(&self, rank: i32, file: i32, t: i64) -> Option<View> {
        Some(View {
            size: self.at(rank, file, VIEW_FILETYPE_SIZE, t)?,
            extent: self.at(rank, file, VIEW_FILETYPE_EXTENT, t)?,
        })
    }

    /// Whether the view in force is noncontiguous in the file, if known.
    pub fn noncontiguous_view(&self, rank: i32, file: i32, t: i64) -> Option<bool> {
        self.view(rank, file, t).map(|v| v.noncontiguous())
    }
}

/// A file view's filetype: the bytes it holds and the bytes it spans in the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct View {
    /// `view.filetype_size`.
    pub size: u64,
    /// `view.filetype_extent`.
    pub extent: u64,
}

impl View {
    /// Noncontiguous in the file: the filetype holds less than it spans.
    pub fn noncontiguous(&self) -> bool {
        self.size < self.extent
    }

    /// The share of its span the filetype holds (None for an empty span).
    pub fn density(&self) -> Option<f64> {
        (self.extent > 0).then(|| self.size as f64 / self.extent as f64)
    }
}

/// One key's values for one rank and file, parsed: (time, value, None where it did not
/// parse), time-sorted. See [`Hints::timeline`].
#[derive(Debug)]
pub struct Timeline<T>(Vec<(i64, Option<T>)>);

impl<T: Copy> Timeline<T> {
    /// The value at time `t` (the latest row at or before t), as [`Hints::at`].
    pub fn at(&self, t: i64) -> Option<T> {
        let i = self.0.partition_point(|(time, _)| *time <= t);
        i.checked_sub(1).and_then(|i| self.0[i].1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(rank: i32, t: i64, key: &str, value: &str) -> SettingRow {
        SettingRow {
            rank,
            process: rank,
            time_ns: t,
            file_id: Some(7),
            func: "MPI_File_open".into(),
            key: key.into(),
            value: value.into(),
        }
    }

    #[test]
    fn latest_value_at_or_before() {
        let h = Hints::new(&[
            row(0, 100, CB_BUFFER_SIZE, "16777216"),
            row(0, 500, CB_BUFFER_SIZE, "4194304"),
            row(1, 100, CB_BUFFER_SIZE, "1024"),
            row(0, 100, "romio_cb_write", "enable"),
            row(0, 100, VIEW_FILETYPE_SIZE, "32"),
            row(0, 100, VIEW_FILETYPE_EXTENT, "128"),
            row(0, 500, VIEW_FILETYPE_SIZE, "1"),
            row(0, 500, VIEW_FILETYPE_EXTENT, "1"),
        ]);
        assert_eq!(h.at::<u64>(0, 7, CB_BUFFER_SIZE, 99), None);
        assert_eq!(h.at(0, 7, CB_BUFFER_SIZE, 100), Some(16_777_216));
        assert_eq!(h.at(0, 7, CB_BUFFER_SIZE, 499), Some(16_777_216));
        assert_eq!(h.at(0, 7, CB_BUFFER_SIZE, 10_000), Some(4_194_304));
        assert_eq!(h.at(1, 7, CB_BUFFER_SIZE, 10_000), Some(1024));
        assert_eq!(h.at::<u64>(0, 8, CB_BUFFER_SIZE, 10_000), None);
        assert_eq!(h.get(0, 7, "romio_cb_write", 10_000), Some("enable"));
        assert_eq!(h.at::<u64>(0, 7, "romio_cb_write", 10_000), None);
        assert_eq!(h.any(7, CB_BUFFER_SIZE), Some("16777216"));
        assert_eq!(h.noncontiguous_view(0, 7, 100), Some(true));
        assert_eq!(h.noncontiguous_view(0, 7, 500), Some(false));
        assert_eq!(h.noncontiguous_view(1, 7, 500), None);
        let buffer = h.timeline::<u64>(0, 7, CB_BUFFER_SIZE);
        for t in [99, 100, 499, 500, 10_000] {
            assert_eq!(buffer.at(t), h.at(0, 7, CB_BUFFER_SIZE, t), "at {t}");
        }
        assert_eq!(h.timeline::<u64>(0, 7, "romio_cb_write").at(10_000), None);
        assert_eq!(h.timeline::<u64>(0, 8, CB_BUFFER_SIZE).at(10_000), None);
    }
}
