//! `mpi-io-test:`: PVFS2's mpi-io-test as bench/mpi-io-test.c runs it. Each rank writes then
//! reads back `blocks` blocks of `block_size` bytes of one shared file, blocks dealt
//! round-robin (rank r's k-th block at (k × ranks + r) × block_size), one MPI_File_write_at /
//! read_at (`_all` with collective=true) per block, each after an MPI_Barrier. Per iteration:
//! open (with MPI_MODE_CREATE, as the benchmark opens it every time), the write phase
//! (barrier, the blocks, MPI_File_sync, the timing Allreduce), the read phase (barrier, the
//! blocks, the timing Allreduce), close, and the Allreduce summing wrong bytes (verify=true).
//! At the end an MPI_Barrier and, unless keep=true, rank 0's MPI_File_delete.

use crate::model::System;
use crate::mpiio::romio::{self, calls, Pattern, Request};
use crate::program::{IoKind, Rank};

use super::{Builder, Generated, Spec, WorkloadError};

const KEYS: &[&str] = &[
    "ranks",
    "blocks",
    "block_size",
    "collective",
    "iterations",
    "verify",
    "keep",
    "path",
    "hint.KEY",
];

pub(super) fn generate(s: &mut Spec, system: &System) -> Result<Generated, WorkloadError> {
    let ranks = s.count("ranks", 4, 1)?;
    let blocks = s.count("blocks", 16, 1)?;
    let block_size = s.size("block_size", 64 << 10, 1)?;
    let collective = s.choice("collective", &["false", "true"])? == "true";
    let iterations = s.count("iterations", 3, 1)?;
    let verify = s.choice("verify", &["true", "false"])? == "true";
    let keep = s.choice("keep", &["false", "true"])? == "true";
    let path = s.text("path", "/sim/pioscope-mpi-io-test.dat");
    // Per rank, block and iteration: a barrier and a call, written and read; a collective call
    // also exchanges with every other rank (an Isend and an Irecv each way).
    let per_block = if collective {
        ranks.checked_mul(2).and_then(|n| n.checked_add(4))
    } else {
        Some(4)
    };
    s.within_budget(
        "blocks",
        blocks,
        ranks
            .checked_mul(blocks)
            .and_then(|n| n.checked_mul(iterations))
            .and_then(|n| per_block.and_then(|p| n.checked_mul(p))),
    )?;
    s.within_file(
        "blocks",
        blocks,
        blocks
            .checked_mul(ranks)
            .and_then(|n| n.checked_mul(block_size)),
    )?;
    let hints = std::mem::take(&mut s.hints);
    let ranks32 = u32::try_from(ranks).map_err(|_| WorkloadError::BadValue {
        kind: "mpi-io-test".into(),
        key: "ranks".into(),
        value: ranks.to_string(),
        why: "too many".into(),
    })?;
    std::mem::replace(s, Spec::parse("mpi-io-test")?).finish(KEYS)?;

    let mut b = Builder::new("mpi-io-test", system, ranks32, &hints)?;
    let file = b.file(path);
    let block = |r: u64, k: u64| Pattern::contiguous((k * ranks + r) * block_size, block_size);
    let phase = |b: &mut Builder, kind: IoKind| -> Result<(), WorkloadError> {
        let func = match (kind, collective) {
            (IoKind::Write, true) => calls::MPI_FILE_WRITE_AT_ALL,
            (IoKind::Write, false) => calls::MPI_FILE_WRITE_AT,
            (IoKind::Read, true) => calls::MPI_FILE_READ_AT_ALL,
            (IoKind::Read, false) => calls::MPI_FILE_READ_AT,
        };
        let req = Request { func, file, kind };
        b.barrier();
        for k in 0..blocks {
            b.barrier();
            if collective {
                let pats: Vec<Pattern> = (0..ranks).map(|r| block(r, k)).collect();
                b.collective(&req, &pats)?;
            } else {
                for r in 0..ranks {
                    b.independent(r as Rank, &req, &block(r, k))?;
                }
            }
        }
        if kind == IoKind::Write {
            b.sync_all(file);
        }
        // bench_max_over_ranks: the phase's time is the slowest rank's.
        b.allreduce(8);
        Ok(())
    };
    for _ in 0..iterations {
        b.open_all(file, true);
        phase(&mut b, IoKind::Write)?;
        phase(&mut b, IoKind::Read)?;
        b.close_all(file);
        if verify {
            b.allreduce(8);
        }
    }
    b.barrier();
    if !keep {
        romio::delete(&mut b.progs[0], file);
    }
    Ok(b.finish())
}

#[cfg(test)]
mod tests {
    use crate::mpiio::romio::calls::*;
    use crate::mpiio::romio::tests_support::{io_ops, system};
    use crate::mpiio::workload::generate;
    use crate::program::{IoKind, Op};

    /// The top-level calls of a program, by function id.
    fn top_calls(p: &[Op]) -> Vec<u16> {
        let mut depth = 0;
        let mut out = Vec::new();
        for op in p {
            match op {
                Op::Begin(c) => {
                    if depth == 0 {
                        out.push(c.func);
                    }
                    depth += 1;
                }
                Op::End => depth -= 1,
                _ => {}
            }
        }
        out
    }

    #[test]
    fn two_ranks_two_blocks_one_iteration() {
        let g = generate(
            "mpi-io-test:ranks=2,blocks=2,block_size=4K,iterations=1",
            &system(),
        )
        .unwrap();
        let p = &g.job.programs;
        // Rank 1's blocks: 1 and 3 of the file, written then read.
        assert_eq!(
            io_ops(&p[1]),
            vec![
                (IoKind::Write, 4096, 4096),
                (IoKind::Write, 3 * 4096, 4096),
                (IoKind::Read, 4096, 4096),
                (IoKind::Read, 3 * 4096, 4096),
            ]
        );
        let phase = |io| vec![MPI_BARRIER, MPI_BARRIER, io, MPI_BARRIER, io];
        let mut want = vec![MPI_FILE_OPEN];
        want.extend(phase(MPI_FILE_WRITE_AT));
        want.extend([MPI_FILE_SYNC, MPI_ALLREDUCE]);
        want.extend(phase(MPI_FILE_READ_AT));
        want.extend([MPI_ALLREDUCE, MPI_FILE_CLOSE, MPI_ALLREDUCE, MPI_BARRIER]);
        assert_eq!(top_calls(&p[1]), want);
        // Rank 0 deletes the file at the end.
        want.push(MPI_FILE_DELETE);
        assert_eq!(top_calls(&p[0]), want);
        assert_eq!((g.bytes_written, g.bytes_read), (4 * 4096, 4 * 4096));
    }

    #[test]
    fn collective_keep_no_verify() {
        let g = generate(
            "mpi-io-test:ranks=2,blocks=1,block_size=1K,iterations=2,collective=true,\
             keep=true,verify=false",
            &system(),
        )
        .unwrap();
        let calls = top_calls(&g.job.programs[0]);
        assert_eq!(
            calls
                .iter()
                .filter(|&&f| f == MPI_FILE_WRITE_AT_ALL)
                .count(),
            2
        );
        assert_eq!(
            calls.iter().filter(|&&f| f == MPI_FILE_READ_AT_ALL).count(),
            2
        );
        assert!(!calls.contains(&MPI_FILE_DELETE));
        // Two timing Allreduces per iteration, none for verifying.
        assert_eq!(calls.iter().filter(|&&f| f == MPI_ALLREDUCE).count(), 4);
    }
}
