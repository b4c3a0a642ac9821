//! `ior:`: an IOR-like pattern. Each rank moves `segments` × `block` bytes in `transfer`-sized
//! calls (MPI_File_write_at / read_at, or the `_all` forms with collective=true). Shared file,
//! sequential: rank r's block of segment s at (s × ranks + r) × block; strided: the transfers
//! of all ranks interleave, transfer t of rank r at (t × ranks + r) × transfer; per-process
//! files: segment s at s × block of the rank's own file. Iterations may compute between them,
//! write a new file each and close it at once or when the next one opens (`phases.rs`).

use crate::model::System;
use crate::mpiio::romio::{self, calls, Pattern, Request};
use crate::program::{IoKind, Rank};

use super::phases::{self, Phases};
use super::{Builder, Generated, Spec, WorkloadError};

const KEYS: &[&str] = &[
    "ranks",
    "block",
    "transfer",
    "segments",
    "pattern",
    "file",
    "op",
    "collective",
    "fsync",
    "iterations",
    "path",
    "hint.KEY",
    phases::KEYS[0],
    phases::KEYS[1],
    phases::KEYS[2],
];

pub(super) fn generate(s: &mut Spec, system: &System) -> Result<Generated, WorkloadError> {
    let ranks = s.count("ranks", 4, 1)?;
    let block = s.size("block", 1 << 20, 1)?;
    let transfer_text = s.peek("transfer");
    let transfer = s.size("transfer", 256 << 10, 1)?;
    let segments = s.count("segments", 1, 1)?;
    let pattern = s.choice("pattern", &["sequential", "strided"])?;
    let shared = s.choice("file", &["shared", "per-process"])? == "shared";
    let op = s.choice("op", &["write", "read"])?;
    let collective = s.choice("collective", &["false", "true"])? == "true";
    let fsync = s.choice("fsync", &["false", "true"])? == "true";
    let iterations = s.count("iterations", 1, 1)?;
    let path = s.text("path", "/sim/ior.dat");
    let phases = Phases::parse(s, iterations)?;
    if block % transfer != 0 {
        return Err(WorkloadError::BadValue {
            kind: "ior".into(),
            key: "transfer".into(),
            value: transfer_text.unwrap_or_else(|| transfer.to_string()),
            why: format!("must divide block ({block})"),
        });
    }
    // Per transfer a call; a collective call also exchanges with every other rank (an Isend
    // and an Irecv each way).
    let per_call = if collective {
        ranks.checked_mul(2).and_then(|n| n.checked_add(1))
    } else {
        Some(1)
    };
    s.within_budget(
        "segments",
        segments,
        ranks
            .checked_mul(segments)
            .and_then(|n| n.checked_mul(block / transfer))
            .and_then(|n| n.checked_mul(iterations))
            .and_then(|n| per_call.and_then(|p| n.checked_mul(p))),
    )?;
    // The last byte of any offset below: segments × ranks × block (per-process files: less).
    s.within_file(
        "block",
        block,
        segments
            .checked_mul(ranks)
            .and_then(|n| n.checked_mul(block)),
    )?;
    if collective && !shared {
        return Err(WorkloadError::BadValue {
            kind: "ior".into(),
            key: "collective".into(),
            value: "true".into(),
            why: "collective calls need file=shared".into(),
        });
    }
    let hints = std::mem::take(&mut s.hints);
    let ranks32 = u32::try_from(ranks).map_err(|_| WorkloadError::BadValue {
        kind: "ior".into(),
        key: "ranks".into(),
        value: ranks.to_string(),
        why: "too many".into(),
    })?;
    std::mem::replace(s, Spec::parse("ior")?).finish(KEYS)?;

    let mut b = Builder::new("ior", system, ranks32, &hints)?;
    // The files of each iteration: one shared file, or one per rank.
    let file_sets: Vec<Vec<u32>> = (0..phases.files(iterations))
        .map(|it| {
            let path = phases.path(&path, it);
            if shared {
                vec![b.file(path)]
            } else {
                (0..ranks)
                    .map(|r| b.file(format!("{path}.{r:08}")))
                    .collect()
            }
        })
        .collect();
    let per_block = block / transfer;
    let calls_per_rank = segments * per_block;
    let offset = |r: u64, k: u64| -> u64 {
        let (seg, t) = (k / per_block, k % per_block);
        match (shared, pattern) {
            (false, _) => seg * block + t * transfer,
            (true, "sequential") => (seg * ranks + r) * block + t * transfer,
            (true, _) => (k * ranks + r) * transfer,
        }
    };
    let kind = if op == "write" {
        IoKind::Write
    } else {
        IoKind::Read
    };
    let func = match (kind, collective) {
        (IoKind::Write, true) => calls::MPI_FILE_WRITE_AT_ALL,
        (IoKind::Write, false) => calls::MPI_FILE_WRITE_AT,
        (IoKind::Read, true) => calls::MPI_FILE_READ_AT_ALL,
        (IoKind::Read, false) => calls::MPI_FILE_READ_AT,
    };
    // The optional sync and the close of one iteration's files.
    let finish = |b: &mut Builder, files: &[u32]| {
        let sync = fsync && kind == IoKind::Write;
        if shared {
            if sync {
                b.sync_all(files[0]);
            }
            b.close_all(files[0]);
        } else {
            for (r, p) in b.progs.iter_mut().enumerate() {
                if sync {
                    romio::sync(p, files[r], false, None);
                }
                romio::close(p, files[r], false, None);
            }
        }
    };
    // Files left open by close=deferred, finished when the next ones are opened.
    let mut open: Option<&[u32]> = None;
    for it in 0..iterations {
        if it > 0 {
            b.compute(phases.compute_ns);
        }
        let files = &file_sets[phases.file_index(it)];
        let create = kind == IoKind::Write && (it == 0 || phases.new_file_per_iteration);
        b.barrier();
        if let Some(prev) = open.take() {
            finish(&mut b, prev);
        }
        if shared {
            b.open_all(files[0], create);
        } else {
            let hints = b.hints.clone();
            for (r, p) in b.progs.iter_mut().enumerate() {
                romio::open(p, r as Rank, files[r], create, false, None, &hints);
            }
        }
        for k in 0..calls_per_rank {
            if collective {
                let pats: Vec<Pattern> = (0..ranks)
                    .map(|r| Pattern::contiguous(offset(r, k), transfer))
                    .collect();
                let req = Request {
                    func,
                    file: files[0],
                    kind,
                };
                b.collective(&req, &pats)?;
            } else {
                for r in 0..ranks {
                    let file = if shared { files[0] } else { files[r as usize] };
                    let req = Request { func, file, kind };
                    b.independent(
                        r as Rank,
                        &req,
                        &Pattern::contiguous(offset(r, k), transfer),
                    )?;
                }
            }
        }
        if phases.deferred_close {
            open = Some(files);
        } else {
            finish(&mut b, files);
        }
        b.allreduce(8);
    }
    if let Some(prev) = open {
        finish(&mut b, prev);
    }
    Ok(b.finish())
}
