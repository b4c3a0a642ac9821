//! `comm:`: MPI communication patterns without I/O, `iterations` times `size`-byte messages
//! as MPI_Isend / MPI_Irecv / MPI_Waitall (what the engine runs a blocking send or receive
//! as): `ping-pong` between ranks 0 and 1, `sendrecv` between pairs (0, 1), (2, 3), ...,
//! `ring` (each rank to the next, from the previous), `root` (every rank to rank 0, then rank 0
//! back to every rank) and `allgather` (an MPI_Allgather of `size` bytes per rank, carried as
//! MPICH's ring algorithm for large messages does: ranks − 1 steps, each passing `size` bytes
//! to the next rank).

use crate::model::System;
use crate::mpiio::romio::calls;
use crate::program::{Op, Rank};

use super::{Builder, Generated, Spec, WorkloadError};

const KEYS: &[&str] = &["ranks", "pattern", "size", "iterations"];

const PATTERNS: &[&str] = &["ping-pong", "sendrecv", "ring", "root", "allgather"];

pub(super) fn generate(s: &mut Spec, system: &System) -> Result<Generated, WorkloadError> {
    let ranks = s.count("ranks", 2, 2)?;
    let pattern = s.choice("pattern", PATTERNS)?;
    let size = s.size("size", 1 << 20, 0)?;
    let iterations = s.count("iterations", 1, 1)?;
    // root and allgather make ranks messages per rank and iteration (rank 0, every rank).
    let per_rank = if matches!(pattern, "root" | "allgather") {
        ranks
    } else {
        1
    };
    s.within_budget(
        "iterations",
        iterations,
        ranks
            .checked_mul(per_rank)
            .and_then(|n| n.checked_mul(iterations))
            .and_then(|n| n.checked_mul(4)),
    )?;
    let hints = std::mem::take(&mut s.hints);
    let n = u32::try_from(ranks).map_err(|_| WorkloadError::BadValue {
        kind: "comm".into(),
        key: "ranks".into(),
        value: ranks.to_string(),
        why: "too many".into(),
    })?;
    std::mem::replace(s, Spec::parse("comm")?).finish(KEYS)?;

    let mut b = Builder::new("comm", system, n, &hints)?;
    for _ in 0..iterations {
        for (r, p) in b.progs.iter_mut().enumerate() {
            let r = r as Rank;
            match pattern {
                "ping-pong" => ping_pong(p, r, size),
                "sendrecv" if r ^ 1 < n => exchange(p, r ^ 1, r ^ 1, size),
                "sendrecv" => {}
                "ring" => exchange(p, (r + n - 1) % n, (r + 1) % n, size),
                "root" => root(p, r, n, size),
                _ => allgather(p, r, n, size),
            }
        }
    }
    Ok(b.finish())
}

/// Rank 0 sends and then receives, rank 1 receives and then sends back; the others idle.
fn ping_pong(p: &mut Vec<Op>, r: Rank, size: u64) {
    let send = |p: &mut Vec<Op>, to| {
        calls::isend(p, to, size, 0);
        calls::waitall(p, vec![0]);
    };
    let recv = |p: &mut Vec<Op>, from| {
        calls::irecv(p, from, size, 0);
        calls::waitall(p, vec![0]);
    };
    match r {
        0 => {
            send(p, 1);
            recv(p, 1);
        }
        1 => {
            recv(p, 0);
            send(p, 0);
        }
        _ => {}
    }
}

/// Receives from `from` and sends to `to` at once (MPI_Sendrecv's pattern).
fn exchange(p: &mut Vec<Op>, from: Rank, to: Rank, size: u64) {
    calls::irecv(p, from, size, 0);
    calls::isend(p, to, size, 1);
    calls::waitall(p, vec![0, 1]);
}

/// Every other rank sends to rank 0, which receives them all and then sends to each.
fn root(p: &mut Vec<Op>, r: Rank, n: u32, size: u64) {
    if r == 0 {
        for peer in 1..n {
            calls::irecv(p, peer, size, peer - 1);
        }
        calls::waitall(p, (0..n - 1).collect());
        for peer in 1..n {
            calls::isend(p, peer, size, peer - 1);
        }
        calls::waitall(p, (0..n - 1).collect());
    } else {
        calls::isend(p, 0, size, 0);
        calls::waitall(p, vec![0]);
        calls::irecv(p, 0, size, 0);
        calls::waitall(p, vec![0]);
    }
}

/// One MPI_Allgather call holding the ring's n − 1 steps (inside the library: no calls of
/// their own in the trace).
fn allgather(p: &mut Vec<Op>, r: Rank, n: u32, size: u64) {
    let (from, to) = ((r + n - 1) % n, (r + 1) % n);
    let steps = (1..n).flat_map(|_| {
        [
            Op::Irecv {
                from,
                bytes: size,
                slot: 0,
            },
            Op::Isend {
                to,
                bytes: size,
                slot: 1,
            },
            Op::WaitAll { slots: vec![0, 1] },
        ]
    });
    calls::wrap(p, calls::mpi_collective(calls::MPI_ALLGATHER, size), steps);
}

#[cfg(test)]
mod tests {
    use crate::mpiio::romio::tests_support::system;
    use crate::mpiio::workload::generate;
    use crate::program::Op;

    /// The point-to-point ops of a program: ("send"|"recv", peer, bytes), "wait" with its slots.
    fn messages(p: &[Op]) -> Vec<String> {
        p.iter()
            .filter_map(|op| match op {
                Op::Isend { to, bytes, slot } => Some(format!("send {to} {bytes} #{slot}")),
                Op::Irecv { from, bytes, slot } => Some(format!("recv {from} {bytes} #{slot}")),
                Op::WaitAll { slots } => Some(format!("wait {slots:?}")),
                _ => None,
            })
            .collect()
    }

    fn progs(spec: &str) -> Vec<Vec<String>> {
        let g = generate(spec, &system()).unwrap();
        g.job.programs.iter().map(|p| messages(p)).collect()
    }

    #[test]
    fn ping_pong_between_ranks_0_and_1() {
        let p = progs("comm:pattern=ping-pong,ranks=3,size=4K,iterations=2");
        let once = ["send 1 4096 #0", "wait [0]", "recv 1 4096 #0", "wait [0]"];
        assert_eq!(p[0], [once, once].concat());
        let once = ["recv 0 4096 #0", "wait [0]", "send 0 4096 #0", "wait [0]"];
        assert_eq!(p[1], [once, once].concat());
        assert!(p[2].is_empty());
    }

    #[test]
    fn sendrecv_pairs_and_ring_neighbours() {
        let p = progs("comm:pattern=sendrecv,ranks=3,size=8");
        assert_eq!(p[0], ["recv 1 8 #0", "send 1 8 #1", "wait [0, 1]"]);
        assert_eq!(p[1], ["recv 0 8 #0", "send 0 8 #1", "wait [0, 1]"]);
        assert!(p[2].is_empty(), "the odd rank out has no partner");
        let p = progs("comm:pattern=ring,ranks=3,size=8");
        assert_eq!(p[0], ["recv 2 8 #0", "send 1 8 #1", "wait [0, 1]"]);
        assert_eq!(p[2], ["recv 1 8 #0", "send 0 8 #1", "wait [0, 1]"]);
    }

    #[test]
    fn root_gathers_then_sends_back() {
        let p = progs("comm:pattern=root,ranks=3,size=8");
        assert_eq!(
            p[0],
            [
                "recv 1 8 #0",
                "recv 2 8 #1",
                "wait [0, 1]",
                "send 1 8 #0",
                "send 2 8 #1",
                "wait [0, 1]"
            ]
        );
        assert_eq!(p[2], ["send 0 8 #0", "wait [0]", "recv 0 8 #0", "wait [0]"]);
    }

    #[test]
    fn allgather_is_one_call_of_ring_steps() {
        let g = generate("comm:pattern=allgather,ranks=3,size=8", &system()).unwrap();
        let p = &g.job.programs[1];
        let step = ["recv 0 8 #0", "send 2 8 #1", "wait [0, 1]"];
        assert_eq!(messages(p), [step, step].concat());
        // One MPI_Allgather call around them.
        assert!(matches!(&p[0], Op::Begin(c)
            if c.func == crate::mpiio::romio::calls::MPI_ALLGATHER && c.size == 8));
        assert_eq!(p.iter().filter(|o| matches!(o, Op::Begin(_))).count(), 1);
    }

    #[test]
    fn a_single_rank_is_refused() {
        let e = generate("comm:ranks=1", &system()).unwrap_err();
        assert!(e.to_string().contains("must be at least 2"), "{e}");
    }
}
