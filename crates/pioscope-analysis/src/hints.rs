//! MPI-IO hints and view values in force at a time, from settings.parquet: for a rank, a file
//! and a key, the latest row at or before the time (docs/FORMAT.md, settings.parquet). Only
//! numeric keys the analyses ask for are indexed, so a lookup allocates nothing.

use std::collections::HashMap;

use pioscope_trace::store::SettingRow;

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

/// Numeric settings by (rank, file, key), each a time-sorted list of values.
#[derive(Debug, Default)]
pub struct Hints {
    keys: Vec<&'static str>,
    values: HashMap<(i32, i32, usize), Vec<(i64, u64)>>,
}

impl Hints {
    /// Indexes the rows of `keys` whose value is an unsigned integer.
    pub fn new(settings: &[SettingRow], keys: &[&'static str]) -> Hints {
        let mut values: HashMap<(i32, i32, usize), Vec<(i64, u64)>> = HashMap::new();
        for s in settings {
            let (Some(file), Some(k)) = (s.file_id, keys.iter().position(|k| *k == s.key)) else {
                continue;
            };
            if let Ok(v) = s.value.trim().parse::<u64>() {
                values
                    .entry((s.rank, file, k))
                    .or_default()
                    .push((s.time_ns, v));
            }
        }
        for v in values.values_mut() {
            v.sort_by_key(|&(t, _)| t);
        }
        Hints {
            keys: keys.to_vec(),
            values,
        }
    }

    /// The value of `key` for `rank` and `file` at time `t` (the latest row at or before t).
    pub fn at(&self, rank: i32, file: i32, key: &str, t: i64) -> Option<u64> {
        let k = self.keys.iter().position(|x| *x == key)?;
        let v = self.values.get(&(rank, file, k))?;
        let i = v.partition_point(|&(time, _)| time <= t);
        (i > 0).then(|| v[i - 1].1)
    }

    /// Any value of `key` recorded for `file` (the first rank's first), for per-file facts
    /// such as the stripe size.
    pub fn any(&self, file: i32, key: &str) -> Option<u64> {
        let k = self.keys.iter().position(|x| *x == key)?;
        self.values
            .iter()
            .filter(|((_, f, kk), _)| *f == file && *kk == k)
            .min_by_key(|((r, _, _), _)| *r)
            .and_then(|(_, v)| v.first().map(|&(_, x)| x))
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
        let h = Hints::new(
            &[
                row(0, 100, CB_BUFFER_SIZE, "16777216"),
                row(0, 500, CB_BUFFER_SIZE, "4194304"),
                row(1, 100, CB_BUFFER_SIZE, "1024"),
                row(0, 100, "romio_cb_write", "enable"),
            ],
            &[CB_BUFFER_SIZE],
        );
        assert_eq!(h.at(0, 7, CB_BUFFER_SIZE, 99), None);
        assert_eq!(h.at(0, 7, CB_BUFFER_SIZE, 100), Some(16_777_216));
        assert_eq!(h.at(0, 7, CB_BUFFER_SIZE, 499), Some(16_777_216));
        assert_eq!(h.at(0, 7, CB_BUFFER_SIZE, 10_000), Some(4_194_304));
        assert_eq!(h.at(1, 7, CB_BUFFER_SIZE, 10_000), Some(1024));
        assert_eq!(h.at(0, 8, CB_BUFFER_SIZE, 10_000), None);
        assert_eq!(h.at(0, 7, "romio_cb_write", 10_000), None, "not indexed");
        assert_eq!(h.any(7, CB_BUFFER_SIZE), Some(16_777_216));
    }
}
