//! Line tracks: aggregate I/O throughput (bytes/s of data operations per bucket) for the whole
//! job, and per storage server row when there are any, from the level-of-detail index.

use pioscope_trace::store::StoreError;
use serde_json::{json, Value};

use crate::model::TraceView;
use crate::window::{level_for, read_lod};

/// Points per track at most (dense runs of zero buckets are kept, up to this).
pub const MAX_POINTS: usize = 8_192;

/// The counters answer.
pub fn counters(view: &TraceView, t0: i64, t1: i64, px: i64) -> Result<Value, StoreError> {
    let Some(lod) = &view.lod else {
        return Ok(json!({"tracks": []}));
    };
    let ns_per_px = ((t1 - t0) / px.max(1)).max(1);
    let level = level_for(view, ns_per_px).unwrap_or(0);
    let width = lod.meta.width(level);
    let app: Vec<u32> = view
        .rows
        .iter()
        .filter(|r| r.kind == "process")
        .map(|r| r.row)
        .collect();
    let servers: Vec<u32> = view
        .rows
        .iter()
        .filter(|r| r.kind == "server")
        .map(|r| r.row)
        .collect();
    let first = t0.div_euclid(width);
    let last = (t1 - 1).div_euclid(width);
    let n = (last - first + 1).max(0) as usize;
    let track = |name: String, sums: Vec<f64>| {
        let points: Vec<Value> = sums
            .iter()
            .enumerate()
            .map(|(i, b)| json!([(first + i as i64) * width, (b * 1e9 / width as f64).round()]))
            .collect();
        json!({"name": name, "unit": "B/s", "bucket_ns": width, "points": points})
    };
    let mut tracks = Vec::new();
    if n <= MAX_POINTS {
        let mut job = vec![0.0; n];
        for row in read_lod(view, level, &app, t0, t1)? {
            for b in row {
                if let Some(s) = job.get_mut((b.index - first) as usize) {
                    *s += b.bytes;
                }
            }
        }
        tracks.push(track("I/O throughput".to_string(), job));
        let per_server = read_lod(view, level, &servers, t0, t1)?;
        for (k, row) in per_server.into_iter().enumerate() {
            let mut sums = vec![0.0; n];
            for b in row {
                if let Some(s) = sums.get_mut((b.index - first) as usize) {
                    *s += b.bytes;
                }
            }
            let label = view
                .rows
                .get(servers[k] as usize)
                .map_or_else(String::new, |r| r.label.clone());
            tracks.push(track(format!("{label} throughput"), sums));
        }
    }
    Ok(json!({"tracks": tracks, "level": level}))
}
