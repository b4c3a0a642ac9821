//! `jacobi:`: a Jacobi-like iterative application on a line of ranks. Each iteration: a
//! compute phase (`compute` of CPU time), the halo exchange with the neighbours (rank r − 1
//! and r + 1 where they exist: an MPI_Irecv from each, an MPI_Isend of `halo` bytes to each,
//! MPI_Waitall) and the MPI_Allreduce of the residual; every `output_every` iterations each
//! rank appends its `output` bytes of the grid to one shared file (output step s of rank r
//! at (s × ranks + r) × output, MPI_File_write_at_all, or MPI_File_write_at with
//! mode=independent). The file is opened (created) before the first iteration and closed
//! after the last.

use crate::model::System;
use crate::mpiio::romio::{calls, Pattern, Request};
use crate::program::{IoKind, Op, Rank};

use super::{Builder, Generated, Spec, WorkloadError};

const KEYS: &[&str] = &[
    "ranks",
    "iterations",
    "compute",
    "halo",
    "output_every",
    "output",
    "mode",
    "path",
    "hint.KEY",
];

/// The most compute a run may hold: 100 years, far below u64 nanoseconds.
const MAX_COMPUTE_NS: u64 = 100 * 365 * 24 * 3600 * 1_000_000_000;

pub(super) fn generate(s: &mut Spec, system: &System) -> Result<Generated, WorkloadError> {
    let ranks = s.count("ranks", 4, 1)?;
    let iterations = s.count("iterations", 100, 1)?;
    let compute_text = s.peek("compute");
    let compute_ns = s.time("compute", 1_000_000)?;
    let halo = s.size("halo", 64 << 10, 0)?;
    let every = s.count("output_every", 10, 1)?;
    let output = s.size("output", 1 << 20, 1)?;
    let collective = s.choice("mode", &["collective", "independent"])? == "collective";
    let path = s.text("path", "/sim/pioscope-jacobi.dat");
    // Per rank and iteration: two receives, two sends, a wait, an Allreduce, an output call; a
    // collective output also exchanges with every other rank (an Isend and an Irecv each way).
    let per_iteration = if collective {
        ranks.checked_mul(2).and_then(|n| n.checked_add(7))
    } else {
        Some(7)
    };
    s.within_budget(
        "iterations",
        iterations,
        ranks
            .checked_mul(iterations)
            .and_then(|n| per_iteration.and_then(|p| n.checked_mul(p))),
    )?;
    // Simulated time is u64 nanoseconds: a century of compute is refused, not wrapped.
    if compute_ns
        .checked_mul(iterations)
        .is_none_or(|t| t > MAX_COMPUTE_NS)
    {
        return Err(WorkloadError::BadValue {
            kind: "jacobi".into(),
            key: "compute".into(),
            value: compute_text.unwrap_or_default(),
            why: "too long: compute × iterations must be at most 100 years".into(),
        });
    }
    let steps = iterations / every;
    s.within_file(
        "output",
        output,
        steps.checked_mul(ranks).and_then(|n| n.checked_mul(output)),
    )?;
    let hints = std::mem::take(&mut s.hints);
    let n = u32::try_from(ranks).map_err(|_| WorkloadError::BadValue {
        kind: "jacobi".into(),
        key: "ranks".into(),
        value: ranks.to_string(),
        why: "too many".into(),
    })?;
    std::mem::replace(s, Spec::parse("jacobi")?).finish(KEYS)?;

    let mut b = Builder::new("jacobi", system, n, &hints)?;
    let file = b.file(path);
    let func = if collective {
        calls::MPI_FILE_WRITE_AT_ALL
    } else {
        calls::MPI_FILE_WRITE_AT
    };
    let req = Request {
        func,
        file,
        kind: IoKind::Write,
    };
    b.open_all(file, true);
    for i in 1..=iterations {
        for (r, p) in b.progs.iter_mut().enumerate() {
            p.push(Op::Compute { ns: compute_ns });
            halo_exchange(p, r as Rank, n, halo);
        }
        b.allreduce(8);
        if i % every == 0 {
            let step = i / every - 1;
            let part = |r: u64| Pattern::contiguous((step * ranks + r) * output, output);
            if collective {
                let pats: Vec<Pattern> = (0..ranks).map(part).collect();
                b.collective(&req, &pats)?;
            } else {
                for r in 0..ranks {
                    b.independent(r as Rank, &req, &part(r))?;
                }
            }
        }
    }
    b.close_all(file);
    Ok(b.finish())
}

/// Rank r's halo exchange with r − 1 and r + 1 (those that exist): receives posted first.
fn halo_exchange(p: &mut Vec<Op>, r: Rank, n: u32, bytes: u64) {
    let neighbours: Vec<Rank> = [r.checked_sub(1), Some(r + 1).filter(|&x| x < n)]
        .into_iter()
        .flatten()
        .collect();
    let mut slot = 0;
    for &from in &neighbours {
        calls::irecv(p, from, bytes, slot);
        slot += 1;
    }
    for &to in &neighbours {
        calls::isend(p, to, bytes, slot);
        slot += 1;
    }
    calls::waitall(p, (0..slot).collect());
}

#[cfg(test)]
mod tests {
    use crate::mpiio::romio::calls::*;
    use crate::mpiio::romio::tests_support::{io_ops, system};
    use crate::mpiio::workload::generate;
    use crate::program::{IoKind, Op};

    /// What a program does, one line per op that is not a call bracket.
    fn ops(p: &[Op]) -> Vec<String> {
        let mut depth = 0;
        p.iter()
            .filter_map(|op| match op {
                Op::Begin(c) => {
                    depth += 1;
                    (depth == 1).then(|| format!("{}", c.func))
                }
                Op::End => {
                    depth -= 1;
                    None
                }
                Op::Compute { ns } => Some(format!("compute {ns}")),
                Op::Isend { to, bytes, slot } => Some(format!("send {to} {bytes} #{slot}")),
                Op::Irecv { from, bytes, slot } => Some(format!("recv {from} {bytes} #{slot}")),
                Op::WaitAll { slots } => Some(format!("wait {slots:?}")),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn three_ranks_four_iterations_output_every_two() {
        let g = generate(
            "jacobi:ranks=3,iterations=4,compute=2ms,halo=1K,output_every=2,output=4K,\
             mode=independent",
            &system(),
        )
        .unwrap();
        let p = &g.job.programs;
        // The middle rank exchanges with both neighbours.
        let iteration = |out: bool| {
            let mut v: Vec<String> = [
                "compute 2000000",
                &MPI_IRECV.to_string(),
                "recv 0 1024 #0",
                &MPI_IRECV.to_string(),
                "recv 2 1024 #1",
                &MPI_ISEND.to_string(),
                "send 0 1024 #2",
                &MPI_ISEND.to_string(),
                "send 2 1024 #3",
                &MPI_WAITALL.to_string(),
                "wait [0, 1, 2, 3]",
                &MPI_ALLREDUCE.to_string(),
            ]
            .map(String::from)
            .to_vec();
            if out {
                v.push(MPI_FILE_WRITE_AT.to_string());
            }
            v
        };
        let mut want = vec![MPI_FILE_OPEN.to_string()];
        for i in 1..=4 {
            want.extend(iteration(i % 2 == 0));
        }
        want.push(MPI_FILE_CLOSE.to_string());
        assert_eq!(ops(&p[1]), want);
        // Output steps 0 and 1, appended: rank 1 at (0 × 3 + 1) and (1 × 3 + 1) × 4 KiB.
        assert_eq!(
            io_ops(&p[1]),
            vec![(IoKind::Write, 4096, 4096), (IoKind::Write, 4 * 4096, 4096)]
        );
        // The first rank has one neighbour.
        let halo: Vec<String> = ops(&p[0])
            .into_iter()
            .filter(|l| l.starts_with("send") || l.starts_with("recv") || l.starts_with("wait"))
            .take(3)
            .collect();
        assert_eq!(halo, ["recv 1 1024 #0", "send 1 1024 #1", "wait [0, 1]"]);
        assert_eq!(g.bytes_written, 2 * 3 * 4096);
    }

    #[test]
    fn collective_output_and_bad_compute() {
        let g = generate("jacobi:ranks=2,iterations=3,output_every=3", &system()).unwrap();
        let writes = ops(&g.job.programs[0])
            .iter()
            .filter(|l| **l == MPI_FILE_WRITE_AT_ALL.to_string())
            .count();
        assert_eq!(writes, 1);
        let e = generate("jacobi:compute=soon", &system()).unwrap_err();
        assert!(
            e.to_string().contains("compute=\"soon\": not a duration"),
            "{e}"
        );
        let e = generate("jacobi:compute=1e12s,iterations=10", &system()).unwrap_err();
        assert!(e.to_string().contains("too long"), "{e}");
    }
}
