//! `hpio:`: the HPIO noncontiguous benchmark (bench/hpio.c, bench/README.md). Memory
//! contiguous; file noncontiguous: rank r's region i at (i × ranks + r) × (region_size +
//! region_space), or (file=contig) one block of region_count × region_size per rank. Each
//! iteration: barrier, open + set_view + write(_all) + sync + close, and the timing
//! Allreduce; reads the same without the sync. Iterations may compute between them, use a new
//! file each and sync and close it when the next one opens (`phases.rs`).

use crate::model::System;
use crate::mpiio::romio::{calls, Pattern, Request};
use crate::program::{IoKind, Rank};

use super::phases::{self, Phases};
use super::{Builder, Generated, Spec, WorkloadError};

const KEYS: &[&str] = &[
    "ranks",
    "region_size",
    "region_count",
    "region_space",
    "mode",
    "op",
    "file",
    "iterations",
    "path",
    "hint.KEY",
    phases::KEYS[0],
    phases::KEYS[1],
    phases::KEYS[2],
];

pub(super) fn generate(s: &mut Spec, system: &System) -> Result<Generated, WorkloadError> {
    let ranks = s.count("ranks", 4, 1)?;
    let size = s.size("region_size", 32, 1)?;
    let count = s.count("region_count", 32768, 1)?;
    let space = s.size("region_space", 128, 0)?;
    let mode = s.choice("mode", &["independent", "collective"])?;
    let op = s.choice("op", &["write", "read", "both"])?;
    let layout = s.choice("file", &["noncontig", "contig"])?;
    let iterations = s.count("iterations", 1, 1)?;
    let path = s.text("path", "/sim/pioscope-hpio.dat");
    let phases = Phases::parse(s, iterations)?;
    s.within_budget("iterations", iterations, ranks.checked_mul(iterations))?;
    // Every rank's regions, holes included, lie below ranks × region_count × period.
    let end = size
        .checked_add(space)
        .and_then(|period| period.checked_mul(count))
        .and_then(|n| n.checked_mul(ranks));
    s.within_file("region_count", count, end)?;
    let hints = std::mem::take(&mut s.hints);
    let ranks32 = u32::try_from(ranks).map_err(|_| WorkloadError::BadValue {
        kind: "hpio".into(),
        key: "ranks".into(),
        value: ranks.to_string(),
        why: "too many".into(),
    })?;
    std::mem::replace(s, Spec::parse("hpio")?).finish(KEYS)?;

    let mut b = Builder::new("hpio", system, ranks32, &hints)?;
    let files: Vec<u32> = (0..phases.files(iterations))
        .map(|it| b.file(phases.path(&path, it)))
        .collect();
    let period = size + space;
    let pattern = |r: u64| match layout {
        "contig" => Pattern::contiguous(r * count * size, count * size),
        _ => Pattern::vector(r * period, count, size, ranks * period),
    };
    let patterns: Vec<Pattern> = (0..ranks).map(pattern).collect();
    let collective = mode == "collective";
    let disp = |r: Rank| match layout {
        "contig" => u64::from(r) * count * size,
        _ => u64::from(r) * period,
    };
    // The end of a file's phase: the sync of what was written, the close.
    let finish = |b: &mut Builder, file: u32, written: bool| {
        if written {
            b.sync_all(file);
        }
        b.close_all(file);
    };
    // A file left open by close=deferred (and whether it was written): finished when the next
    // phase opens its file, the last at the end.
    let mut open: Option<(u32, bool)> = None;
    let mut phase =
        |b: &mut Builder, kind: IoKind, file: u32, create: bool| -> Result<(), WorkloadError> {
            b.barrier();
            if let Some((prev, written)) = open.take() {
                finish(b, prev, written);
            }
            b.open_all(file, create);
            b.set_view_all(file, disp);
            let func = match (kind, collective) {
                (IoKind::Write, true) => calls::MPI_FILE_WRITE_ALL,
                (IoKind::Write, false) => calls::MPI_FILE_WRITE,
                (IoKind::Read, true) => calls::MPI_FILE_READ_ALL,
                (IoKind::Read, false) => calls::MPI_FILE_READ,
            };
            let req = Request { func, file, kind };
            if collective {
                b.collective(&req, &patterns)?;
            } else {
                for (r, p) in patterns.iter().enumerate() {
                    b.independent(r as Rank, &req, p)?;
                }
            }
            let written = kind == IoKind::Write;
            if phases.deferred_close {
                open = Some((file, written));
            } else {
                finish(b, file, written);
            }
            b.allreduce(8);
            Ok(())
        };
    if op == "read" {
        // bench/hpio writes each file once, untimed, before timing the reads.
        for &file in &files {
            phase(&mut b, IoKind::Write, file, true)?;
        }
    }
    for it in 0..iterations {
        if it > 0 {
            b.compute(phases.compute_ns);
        }
        let file = files[phases.file_index(it)];
        let create = it == 0 || phases.new_file_per_iteration;
        match op {
            "write" => phase(&mut b, IoKind::Write, file, create)?,
            "read" => phase(&mut b, IoKind::Read, file, false)?,
            _ => {
                phase(&mut b, IoKind::Write, file, create)?;
                phase(&mut b, IoKind::Read, file, false)?;
            }
        }
    }
    if let Some((file, written)) = open {
        finish(&mut b, file, written);
    }
    Ok(b.finish())
}
