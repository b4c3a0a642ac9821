//! The Darshan panel's answer (`/api/darshan`): for a store imported from a Darshan log, what
//! its counters say per rank and per file (the ranks and files with the most I/O time), and
//! its HEATMAP module as a grid of bytes per rank bin and time bin. A log without DXT has no
//! events to draw on the timeline: this is what the page shows of it instead.

use pioscope_analysis::darshan::{loads, summarize, Load};
use pioscope_analysis::heatmap::{MAX_COLUMNS, MAX_ROWS};
use pioscope_trace::store::{DarshanHeatmapRow, StoreError};
use serde_json::{json, Value};

use crate::model::TraceView;

/// Ranks and files listed at most (those with the most I/O time).
pub const TOP: usize = 50;

/// The answer; `{"imported": false}` for a store not imported from Darshan.
pub fn darshan(view: &TraceView) -> Result<Value, StoreError> {
    let trace = &view.trace;
    let Some(summary) = summarize(trace)? else {
        return Ok(json!({"imported": false}));
    };
    let loads = loads(trace)?;
    let listed = |v: &[Load], name: &dyn Fn(i32) -> Value| -> Value {
        json!({
            "count": v.len(),
            "top": v.iter().take(TOP).map(|l| json!({
                "key": l.key, "name": name(l.key), "io_ns": l.io_ns, "bytes": l.bytes, "with": l.with,
            })).collect::<Vec<_>>(),
        })
    };
    let path = |f: i32| {
        trace
            .files
            .get(f as usize)
            .map_or(Value::Null, |r| json!(r.path))
    };
    let ranks = trace.meta.job.ranks.max(1);
    Ok(json!({
        "imported": true,
        "has_dxt_events": summary.has_dxt_events,
        "modules": summary.modules,
        "ranks": listed(&loads.ranks, &|r| json!(format!("rank {r}"))),
        "files": listed(&loads.files, &path),
        "heatmaps": grids(&trace.darshan_heatmap()?, ranks, trace.meta.job.duration_ns),
    }))
}

/// One grid per module of the HEATMAP rows (given by module, rank, bin): rows of `per_row`
/// consecutive ranks (at most `MAX_ROWS`), columns of `per_column` consecutive bins (at most
/// `MAX_COLUMNS`) over the job's `duration_ns` (bins past it included), each cell the bytes
/// read and written.
fn grids(rows: &[DarshanHeatmapRow], ranks: u32, duration_ns: i64) -> Vec<Value> {
    let mut out = Vec::new();
    for module in rows.chunk_by(|a, b| a.module == b.module) {
        let width = module[0].width_ns.max(1);
        let in_job = (duration_ns.max(0) as u64).div_ceil(width as u64) as usize;
        let bins = (module.iter().map(|r| r.bin).max().unwrap_or(0) as usize + 1).max(in_job);
        let per_column = bins.div_ceil(MAX_COLUMNS);
        let columns = bins.div_ceil(per_column);
        let top_rank = module.iter().map(|r| r.rank).max().unwrap_or(0) as u32;
        let units = ranks.max(top_rank + 1) as usize;
        let per_row = units.div_ceil(MAX_ROWS);
        let grid_rows = units.div_ceil(per_row);
        let mut bytes = vec![vec![0i64; columns]; grid_rows];
        let (mut read, mut written) = (0i64, 0i64);
        for r in module {
            let cell =
                &mut bytes[r.rank.max(0) as usize / per_row][r.bin.max(0) as usize / per_column];
            *cell = cell.saturating_add(r.read_bytes.saturating_add(r.write_bytes));
            read = read.saturating_add(r.read_bytes);
            written = written.saturating_add(r.write_bytes);
        }
        let max = bytes.iter().flatten().copied().max().unwrap_or(0);
        out.push(json!({
            "module": module[0].module,
            "units": units,
            "per_row": per_row,
            "rows": grid_rows,
            "columns": columns,
            "bin_ns": module[0].width_ns.saturating_mul(per_column as i64),
            "bytes": bytes,
            "max_bytes": max,
            "read_bytes": read,
            "write_bytes": written,
        }));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(module: &str, rank: i32, bin: i32, write_bytes: i64) -> DarshanHeatmapRow {
        DarshanHeatmapRow {
            module: module.into(),
            rank,
            bin,
            start_ns: bin as i64 * 1_000_000_000,
            width_ns: 1_000_000_000,
            read_bytes: 0,
            write_bytes,
        }
    }

    #[test]
    fn grids_bin_ranks_and_bins_within_the_bounds() {
        // 1000 ranks -> 5 per row (200 rows); 1000 bins -> 3 per column (334 columns).
        let rows = vec![
            row("POSIX", 0, 0, 10),
            row("POSIX", 4, 2, 5),
            row("POSIX", 999, 999, 7),
            row("STDIO", 1, 0, 1),
        ];
        let g = grids(&rows, 1000, 10_000_000_000);
        assert_eq!(g.len(), 2);
        let posix = &g[0];
        assert_eq!(
            (posix["per_row"].as_u64(), posix["rows"].as_u64()),
            (Some(5), Some(200))
        );
        assert_eq!(posix["columns"].as_u64(), Some(334));
        assert_eq!(posix["bin_ns"].as_i64(), Some(3_000_000_000));
        assert_eq!(posix["bytes"][0][0].as_i64(), Some(15));
        assert_eq!(posix["bytes"][199][333].as_i64(), Some(7));
        assert_eq!(
            (posix["max_bytes"].as_i64(), posix["write_bytes"].as_i64()),
            (Some(15), Some(22))
        );
        // The job's 10 s: ten bins of STDIO's one second though only its first has I/O.
        assert_eq!(
            (g[1]["module"].as_str(), g[1]["columns"].as_u64()),
            (Some("STDIO"), Some(10))
        );
    }
}
