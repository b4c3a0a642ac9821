//! The rank and world-size facts of a raw file, checked against how many raw files there are.
//!
//! A raw file's job facts are text the traced job wrote; a damaged or hostile file can claim a
//! world size of 10^9, and the store's per-rank tables (`meta.json` hosts, and everything later
//! commands size by `job.ranks`) would then be allocated for ranks that do not exist. A job
//! writes one raw file per process, so a world many times larger than the raw files given is
//! not a trace that lost some files but a wrong fact: it is ignored and said in the partial
//! reasons.

use crate::raw::RawFile;

/// Ranks one raw file may stand for: a merge of N raw files accepts a world of up to
/// N × this many ranks (files of most ranks lost), and no rank number at or above it.
pub const RANKS_PER_RAW_FILE: u32 = 1024;

/// The largest world size believed for a merge of `raw_files` raw files.
pub fn plausible_world(raw_files: usize) -> u32 {
    u32::try_from(raw_files.max(1))
        .unwrap_or(u32::MAX)
        .saturating_mul(RANKS_PER_RAW_FILE)
}

/// The rank of `raw`'s `rank` fact (-1 without one); a rank at or above `limit` is taken as
/// no rank, with the reason pushed to `doubts`.
pub fn rank(raw: &RawFile, limit: u32, doubts: &mut Vec<String>) -> i32 {
    let Some(rank) = raw
        .job_fact("rank")
        .and_then(|r| r.trim().parse::<i32>().ok())
    else {
        return -1;
    };
    if i64::from(rank) >= i64::from(limit) {
        doubts.push(format!(
            "raw file {}: rank fact {rank} is implausible for the raw files given \
             (limit {limit}), taken as no rank",
            raw.file_name()
        ));
        return -1;
    }
    rank
}

/// The world size of `raw`'s `size` fact, if it has one below `limit`; a larger one is
/// ignored, with the reason pushed to `doubts`.
pub fn world_size(raw: &RawFile, limit: u32, doubts: &mut Vec<String>) -> Option<u32> {
    let size = raw.job_fact("size")?.trim().parse::<u32>().ok()?;
    if size > limit {
        doubts.push(format!(
            "raw file {}: world size fact {size} is implausible for the raw files given \
             (limit {limit}), ignored",
            raw.file_name()
        ));
        return None;
    }
    Some(size)
}
