//! Line tracks: aggregate I/O throughput (bytes/s of data operations per bucket) for the whole
//! job, and per storage server row when there are any, from the level-of-detail index; then the
//! sampled counters (counters.parquet): per node CPU %, disk and network B/s and memory, per
//! traced process CPU %.

use std::collections::BTreeMap;

use pioscope_trace::store::counters::{name, NODE};
use pioscope_trace::store::{CounterRow, StoreError};
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
    tracks.extend(sampled(view, t0, t1));
    Ok(json!({"tracks": tracks, "level": level}))
}

/// What a sampled track shows: which counters it adds up, its unit, whether it is a rate.
struct Sampled {
    label: &'static str,
    counters: &'static [&'static str],
    unit: &'static str,
    rate: bool,
}

const NODE_TRACKS: [Sampled; 4] = [
    Sampled {
        label: "CPU",
        counters: &[name::CPU_USER, name::CPU_SYSTEM],
        unit: "%",
        rate: false,
    },
    Sampled {
        label: "disk",
        counters: &[name::DISK_READ_BYTES, name::DISK_WRITE_BYTES],
        unit: "B/s",
        rate: true,
    },
    Sampled {
        label: "net",
        counters: &[name::NET_RX_BYTES, name::NET_TX_BYTES],
        unit: "B/s",
        rate: true,
    },
    Sampled {
        label: "memory",
        counters: &[name::MEM_USED_BYTES],
        unit: "B",
        rate: false,
    },
];

const PROCESS_TRACK: Sampled = Sampled {
    label: "CPU",
    counters: &[name::CPU_USER, name::CPU_SYSTEM],
    unit: "%",
    rate: false,
};

/// The sampled tracks in [t0, t1): the nodes' (by host), then the processes' (by container),
/// each at most `MAX_POINTS` points (every k-th sample when there are more).
fn sampled(view: &TraceView, t0: i64, t1: i64) -> Vec<Value> {
    let mut by_owner: BTreeMap<(bool, &str, i32), Vec<&CounterRow>> = BTreeMap::new();
    for r in view
        .counters
        .iter()
        .filter(|r| r.time_ns >= t0 && r.time_ns < t1)
    {
        by_owner
            .entry((r.process != NODE, r.host.as_str(), r.process))
            .or_default()
            .push(r);
    }
    let mut tracks = Vec::new();
    for ((is_process, host, process), rows) in by_owner {
        let (owner, kinds): (String, &[Sampled]) = if is_process {
            let label = view
                .rows
                .iter()
                .find(|r| r.process == process)
                .map_or_else(|| format!("process {process}"), |r| r.label.clone());
            (label, std::slice::from_ref(&PROCESS_TRACK))
        } else {
            (host.to_string(), &NODE_TRACKS)
        };
        for k in kinds {
            let mut points: BTreeMap<i64, f64> = BTreeMap::new();
            for r in rows
                .iter()
                .filter(|r| k.counters.contains(&r.counter.as_str()))
            {
                let v = if k.rate {
                    r.value * 1e9 / r.interval_ns.max(1) as f64
                } else {
                    r.value
                };
                *points.entry(r.time_ns).or_default() += v;
            }
            if points.is_empty() {
                continue;
            }
            let step = points.len().div_ceil(MAX_POINTS).max(1);
            let points: Vec<Value> = points
                .into_iter()
                .step_by(step)
                .map(|(t, v)| json!([t, (v * 100.0).round() / 100.0]))
                .collect();
            tracks.push(json!({
                "name": format!("{owner} {}", k.label),
                "unit": k.unit,
                "sampled": true,
                "points": points,
            }));
        }
    }
    tracks
}
