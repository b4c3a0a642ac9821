//! Segments of a rotating raw file (server mode, docs/SERVERS.md): a daemon's raw file is a
//! sequence of segments, each readable alone, the oldest deleted to keep the disk use under a
//! cap. The segments still on disk of one process become one process (one container); what the
//! deleted ones held is the newest segment's count, reported as a note.

use std::collections::HashMap;
use std::path::PathBuf;

use crate::raw::{read_raw_file_with, RawError, RawEvent, RawFile};

/// JOB fact naming a process's segment 0 (the same in each of its segments).
pub const FIRST_SEGMENT_FACT: &str = "first_segment";
/// JOB fact: the segment's number (0, 1, ...).
pub const SEGMENT_FACT: &str = "segment";
/// JOB facts: what rotation deleted before the segment was started (running totals).
pub const DROPPED_SEGMENTS_FACT: &str = "dropped_segments";
/// Records of the deleted segments.
pub const DROPPED_RECORDS_FACT: &str = "dropped_records";
/// Bytes of the deleted segments' files.
pub const DROPPED_BYTES_FACT: &str = "dropped_bytes";

/// Groups the raw files into processes: the segments of one process (same host, pid and
/// segment 0) in segment order, every other file alone. Groups are in the order of their first
/// file.
pub fn group(raws: &[&RawFile]) -> Vec<Vec<usize>> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut by_process: HashMap<(&str, u32, &str), usize> = HashMap::new();
    for (i, raw) in raws.iter().enumerate() {
        let Some(first) = raw.job_fact(FIRST_SEGMENT_FACT) else {
            groups.push(vec![i]);
            continue;
        };
        let key = (raw.job_fact("host").unwrap_or(""), raw.header.pid, first);
        match by_process.get(&key) {
            Some(&g) => groups[g].push(i),
            None => {
                by_process.insert(key, groups.len());
                groups.push(vec![i]);
            }
        }
    }
    for g in &mut groups {
        g.sort_by_key(|&i| segment_number(raws[i]));
    }
    groups
}

fn segment_number(raw: &RawFile) -> u64 {
    fact_u64(raw, SEGMENT_FACT)
}

fn fact_u64(raw: &RawFile, key: &str) -> u64 {
    raw.job_fact(key).and_then(|v| v.parse().ok()).unwrap_or(0)
}

/// Decodes the segments of one process (in order) as one raw file; `keep` sees every event,
/// oldest segment first, and says whether to store it in `RawFile::events` (merge's second
/// pass keeps none: it converts each event as it passes).
pub fn read_segments_with(
    paths: &[PathBuf],
    keep: &mut dyn FnMut(&RawEvent) -> bool,
) -> Result<RawFile, RawError> {
    let mut joined: Option<RawFile> = None;
    for path in paths {
        let raw = read_raw_file_with(path, keep)?;
        match &mut joined {
            Some(j) => j.append_segment(raw),
            None => joined = Some(raw),
        }
    }
    Ok(joined.expect("a process has at least one raw file"))
}

/// "`who`: N records (B bytes) dropped by rotation", when rotation deleted any of the
/// process's segments (the totals of its newest segment, the last JOB facts of the joined
/// file).
pub fn dropped_note(who: &str, raw: &RawFile) -> Option<String> {
    let segments = fact_u64(raw, DROPPED_SEGMENTS_FACT);
    (segments > 0).then(|| {
        format!(
            "{who}: {} records ({} bytes) dropped by rotation ({segments} oldest raw file segments deleted)",
            fact_u64(raw, DROPPED_RECORDS_FACT),
            fact_u64(raw, DROPPED_BYTES_FACT),
        )
    })
}
