//! ROMIO's collective two-phase I/O (`ADIOI_GEN_WriteStridedColl` / `ReadStridedColl`):
//! aggregator choice, file domains, `cb_buffer_size` cycles, the all-to-all exchange and
//! read-modify-write of windows with holes, compiled into every rank's `Op`s.
//!
//! Per call, on every rank: the start/end offsets are gathered (Allgather); if collective
//! buffering applies, counts go around (Alltoall), each rank sends each aggregator the
//! offset/length list of its pieces in that aggregator's domain (Isend/Irecv, 16 bytes per
//! piece), the cycle count is agreed (Allreduce), then for each cycle: an Alltoall of sizes,
//! the data messages (Irecv/Isend/Waitall) and the aggregator's access of its window. The small
//! collectives are modelled as barriers (a log-depth tree of small messages in the engine).

use crate::model::{AggregatorPlacement, FileDomain, Toggle};
use crate::program::{IoKind, Op, Rank};

use super::calls::{self, file_call, wrap};
use super::{data_call, independent_body, Hints, Pattern, Request};

/// The aggregators, in file-domain order: at most `cb_per_node` per node (0 = all ranks of
/// the node), at most `cb_nodes` in all (0 = no limit), picked node by node (blocked: the
/// first ranks of a node before the next node) or round-robin across nodes (one per node in
/// turn). Nodes are taken in the order of their lowest rank.
pub fn aggregators(node_of: &[u32], hints: &Hints) -> Vec<Rank> {
    // Ranks of each node, nodes in order of first appearance.
    let mut order: Vec<u32> = Vec::new();
    let mut members: std::collections::HashMap<u32, Vec<Rank>> = Default::default();
    for (r, &n) in node_of.iter().enumerate() {
        let e = members.entry(n).or_default();
        if e.is_empty() {
            order.push(n);
        }
        e.push(r as Rank);
    }
    let per = |n: u32| {
        let m = members[&n].len();
        if hints.cb_per_node == 0 {
            m
        } else {
            m.min(hints.cb_per_node as usize)
        }
    };
    let mut out = Vec::new();
    match hints.aggregator_placement {
        AggregatorPlacement::Blocked => {
            for &n in &order {
                out.extend_from_slice(&members[&n][..per(n)]);
            }
        }
        AggregatorPlacement::RoundRobin => {
            let most = order.iter().map(|&n| per(n)).max().unwrap_or(0);
            for j in 0..most {
                for &n in &order {
                    if j < per(n) {
                        out.push(members[&n][j]);
                    }
                }
            }
        }
    }
    if hints.cb_nodes > 0 {
        out.truncate(hints.cb_nodes as usize);
    }
    out
}

/// File domains of `aggs` aggregators over the accessed range [lo, hi): per aggregator its
/// ranges. Even: equal contiguous pieces of ceil((hi − lo) / aggs) bytes (ROMIO's generic
/// `ADIOI_Calc_file_domains`). Stripe-aligned (ROMIO's Lustre driver): whole stripes, stripe
/// s to aggregator s mod aggs, clipped to [lo, hi).
pub fn file_domains(lo: u64, hi: u64, aggs: usize, hints: &Hints) -> Vec<Vec<(u64, u64)>> {
    let mut out = vec![Vec::new(); aggs];
    if hi <= lo || aggs == 0 {
        return out;
    }
    match hints.file_domain {
        FileDomain::Even => {
            let fd = (hi - lo).div_ceil(aggs as u64);
            for (i, d) in out.iter_mut().enumerate() {
                let s = lo + i as u64 * fd;
                let e = (s + fd).min(hi);
                if s < e {
                    d.push((s, e - s));
                }
            }
        }
        FileDomain::StripeAligned => {
            let ss = hints.stripe_size.max(1);
            for s in lo / ss..hi.div_ceil(ss) {
                let a = (s * ss).max(lo);
                let b = ((s + 1) * ss).min(hi);
                out[(s % aggs as u64) as usize].push((a, b - a));
            }
        }
    }
    out
}

/// One two-phase plan: who aggregates, their domains and, per aggregator, the ranges of each
/// cycle's window.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// Aggregator ranks, in domain order.
    pub aggregators: Vec<Rank>,
    /// Domain ranges per aggregator.
    pub domains: Vec<Vec<(u64, u64)>>,
    /// Per aggregator, per cycle: the ranges of the window.
    pub windows: Vec<Vec<Vec<(u64, u64)>>>,
}

impl Plan {
    /// Cycles every rank goes through (ROMIO's `ntimes`, the maximum over aggregators).
    pub fn cycles(&self) -> usize {
        self.windows.iter().map(Vec::len).max().unwrap_or(0)
    }
}

/// Plans two-phase for these accesses; None when nobody accesses anything.
///
/// Even domains: an aggregator's cycles run over the data actually in its domain, [first
/// accessed byte, last accessed byte] (ROMIO's st_loc..end_loc), in windows of
/// `cb_buffer_size`: ceil(span / cb_buffer_size) cycles. Stripe-aligned: the buffer holds
/// max(1, cb_buffer_size / stripe) whole stripes; cycles = ceil(stripes owned / that).
pub fn plan(patterns: &[Pattern], node_of: &[u32], hints: &Hints) -> Option<Plan> {
    let lo = patterns
        .iter()
        .filter_map(|p| p.extent())
        .map(|e| e.0)
        .min()?;
    let hi = patterns
        .iter()
        .filter_map(|p| p.extent())
        .map(|e| e.1)
        .max()?;
    let aggregators = aggregators(node_of, hints);
    let domains = file_domains(lo, hi, aggregators.len(), hints);
    let cb = hints.cb_buffer_size.max(1);
    let windows = domains
        .iter()
        .map(|dom| match hints.file_domain {
            FileDomain::Even => {
                let Some(&(d0, dl)) = dom.first() else {
                    return Vec::new();
                };
                let spans = patterns.iter().filter_map(|p| p.span_in(d0, d0 + dl));
                let (s, e) = spans.fold((u64::MAX, 0), |(s, e), (a, b)| (s.min(a), e.max(b)));
                if s >= e {
                    return Vec::new();
                }
                (0..(e - s).div_ceil(cb))
                    .map(|m| {
                        let a = s + m * cb;
                        vec![(a, (a + cb).min(e) - a)]
                    })
                    .collect()
            }
            FileDomain::StripeAligned => {
                let per = (cb / hints.stripe_size.max(1)).max(1) as usize;
                dom.chunks(per).map(<[(u64, u64)]>::to_vec).collect()
            }
        })
        .collect();
    Some(Plan {
        aggregators,
        domains,
        windows,
    })
}

/// True when some rank's range starts before the previous rank's ends (ROMIO's interleave
/// test, ranks in order, ranks without data skipped).
pub fn interleaved(patterns: &[Pattern]) -> bool {
    let mut prev_end: Option<u64> = None;
    for p in patterns {
        if let Some((s, e)) = p.extent() {
            if prev_end.is_some_and(|pe| s < pe) {
                return true;
            }
            prev_end = Some(e);
        }
    }
    false
}

/// One side of a cycle's exchange on one rank.
#[derive(Default, Clone)]
struct Exchange {
    recvs: Vec<(Rank, u64)>,
    sends: Vec<(Rank, u64)>,
}

/// Compiles one collective data call of every rank (`patterns[r]` = rank r's bytes) into
/// per-rank op lists, each wrapped in the call's `Begin`/`End` with `instance` and
/// `observed[r]` (when given).
pub fn collective(
    req: &Request,
    patterns: &[Pattern],
    node_of: &[u32],
    hints: &Hints,
    instance: u32,
    observed: &[Option<i64>],
) -> Vec<Vec<Op>> {
    let mut progs = vec![Vec::new(); patterns.len()];
    collective_into(
        &mut progs, req, patterns, node_of, hints, instance, observed,
    );
    progs
}

/// As [`collective`], appending to every rank's program in place (no second copy of the
/// ops: a 10,000-rank exchange is tens of millions of them).
pub fn collective_into(
    progs: &mut [Vec<Op>],
    req: &Request,
    patterns: &[Pattern],
    node_of: &[u32],
    hints: &Hints,
    instance: u32,
    observed: &[Option<i64>],
) {
    let n = patterns.len();
    for (r, p) in progs.iter_mut().enumerate() {
        let mut c = data_call(req, &patterns[r], true, Some(instance));
        c.observed_id = observed.get(r).copied().flatten();
        p.push(Op::Begin(Box::new(c)));
        if hints.call_overhead_ns > 0 {
            p.push(Op::Compute {
                ns: hints.call_overhead_ns,
            });
        }
        calls::small_collective(p, calls::MPI_ALLGATHER, 16);
    }
    let toggle = match req.kind {
        IoKind::Write => hints.cb_write,
        IoKind::Read => hints.cb_read,
    };
    let two_phase = match toggle {
        Toggle::Enable => true,
        Toggle::Disable => false,
        Toggle::Automatic => interleaved(patterns),
    };
    let plan = if two_phase {
        plan(patterns, node_of, hints)
    } else {
        None
    };
    let Some(plan) = plan else {
        for (p, pat) in progs.iter_mut().zip(patterns) {
            independent_body(p, req, pat, hints);
            p.push(Op::End);
        }
        return;
    };

    // The offset/length lists: 16 bytes per piece a rank has in an aggregator's domain.
    for p in progs.iter_mut() {
        calls::small_collective(p, calls::MPI_ALLTOALL, 4 * n as u64);
    }
    let mut ex = vec![Exchange::default(); n];
    for (a, dom) in plan.domains.iter().enumerate() {
        let agg = plan.aggregators[a];
        for (r, pat) in patterns.iter().enumerate() {
            let pieces: u64 = dom.iter().map(|&(o, l)| pat.pieces_in(o, o + l)).sum();
            if pieces > 0 {
                ex[agg as usize].recvs.push((r as Rank, 16 * pieces));
                ex[r].sends.push((agg, 16 * pieces));
            }
        }
    }
    for (p, e) in progs.iter_mut().zip(&ex) {
        emit_exchange(p, e, 0);
        calls::small_collective(p, calls::MPI_ALLREDUCE, 8);
    }

    let cycles = plan.cycles();
    // Per cycle, per rank: (pre ops, wait ops, post ops); with overlap the exchange of cycle
    // m+1 is posted before the write of cycle m and waited for after it.
    let overlap = hints.overlap_exchange && req.kind == IoKind::Write;
    let mut staged: Vec<Option<Vec<Stage>>> = vec![None; 2];
    for m in 0..=cycles {
        let cur = if m < cycles {
            Some(cycle_stages(
                req,
                patterns,
                &plan,
                hints,
                m,
                n,
                (m % 2) as u32,
            ))
        } else {
            None
        };
        if !overlap {
            if let Some(st) = cur {
                for (p, s) in progs.iter_mut().zip(st) {
                    p.extend(s.pre);
                    p.extend(s.wait);
                    p.extend(s.post);
                }
            }
            continue;
        }
        // Overlap: at step m, post cycle m's exchange, then do cycle m−1's write, then wait
        // for cycle m's messages.
        let prev = staged[(m + 1) % 2].take();
        match (prev, cur) {
            (None, Some(st)) => {
                for (p, s) in progs.iter_mut().zip(st.iter()) {
                    p.extend(s.pre.iter().cloned());
                    p.extend(s.wait.iter().cloned());
                }
                staged[m % 2] = Some(st);
            }
            (Some(pv), Some(st)) => {
                for ((p, s), q) in progs.iter_mut().zip(st.iter()).zip(pv) {
                    p.extend(s.pre.iter().cloned());
                    p.extend(q.post);
                    p.extend(s.wait.iter().cloned());
                }
                staged[m % 2] = Some(st);
            }
            (Some(pv), None) => {
                for (p, q) in progs.iter_mut().zip(pv) {
                    p.extend(q.post);
                }
            }
            (None, None) => {}
        }
    }
    for p in progs.iter_mut() {
        p.push(Op::End);
    }
}

/// One rank's share of one cycle.
#[derive(Clone, Default)]
struct Stage {
    /// Alltoall, the aggregator's read (read-modify-write, or the read phase), message starts.
    pre: Vec<Op>,
    /// The Waitall.
    wait: Vec<Op>,
    /// The aggregator's write.
    post: Vec<Op>,
    /// Datatype processing of the aggregator before its sends (reads), ns.
    pack_ns: u64,
    /// Datatype processing of the aggregator after its Waitall (writes), ns.
    unpack_ns: u64,
}

fn cycle_stages(
    req: &Request,
    patterns: &[Pattern],
    plan: &Plan,
    hints: &Hints,
    m: usize,
    n: usize,
    bank: u32,
) -> Vec<Stage> {
    let mut ex = vec![Exchange::default(); n];
    let mut stages = vec![Stage::default(); n];
    for st in stages.iter_mut() {
        calls::small_collective(&mut st.pre, calls::MPI_ALLTOALL, 4 * n as u64);
    }
    let file = req.file;
    for (a, wins) in plan.windows.iter().enumerate() {
        let Some(win) = wins.get(m) else { continue };
        let agg = plan.aggregators[a];
        // Who has how much in this window; the data span and holes of each range.
        let mut ios: Vec<(u64, u64, bool)> = Vec::with_capacity(win.len());
        let mut per_rank = vec![0u64; n];
        // Contiguous pieces the aggregator unpacks (writes) or packs (reads) this cycle.
        let mut pieces = 0u64;
        for &(o, l) in win {
            let (mut s, mut e, mut total) = (u64::MAX, 0u64, 0u64);
            for (r, pat) in patterns.iter().enumerate() {
                let b = pat.bytes_in(o, o + l);
                if b == 0 {
                    continue;
                }
                if hints.exchange_piece_ns > 0 {
                    pieces += pat.pieces_in(o, o + l);
                }
                per_rank[r] += b;
                total += b;
                if let Some((x, y)) = pat.span_in(o, o + l) {
                    s = s.min(x);
                    e = e.max(y);
                }
            }
            if s < e {
                ios.push((s, e - s, total < e - s));
            }
        }
        for (r, &b) in per_rank.iter().enumerate() {
            if b == 0 {
                continue;
            }
            match req.kind {
                IoKind::Write => {
                    ex[agg as usize].recvs.push((r as Rank, b));
                    ex[r].sends.push((agg, b));
                }
                IoKind::Read => {
                    ex[r].recvs.push((agg, b));
                    ex[agg as usize].sends.push((r as Rank, b));
                }
            }
        }
        let st = &mut stages[agg as usize];
        let datatype_ns = pieces * hints.exchange_piece_ns;
        if datatype_ns > 0 {
            // MPI's datatype processing on the aggregator: unpacking the received pieces into
            // the collective buffer after the Waitall (writes), packing them before the sends
            // (reads, after the read below is queued in `pre`).
            match req.kind {
                IoKind::Write => st.unpack_ns += datatype_ns,
                IoKind::Read => st.pack_ns += datatype_ns,
            }
        }
        for &(o, l, holes) in &ios {
            let io = |kind: IoKind| {
                let func = match kind {
                    IoKind::Read => calls::POSIX_PREAD,
                    IoKind::Write => calls::POSIX_PWRITE,
                };
                (
                    file_call(func, file, Some(o), l),
                    Op::Io {
                        file,
                        kind,
                        offset: o,
                        bytes: l,
                    },
                )
            };
            match req.kind {
                IoKind::Write => {
                    if holes {
                        let (c, op) = io(IoKind::Read);
                        wrap(&mut st.pre, c, [op]);
                    }
                    let (c, op) = io(IoKind::Write);
                    wrap(&mut st.post, c, [op]);
                }
                IoKind::Read => {
                    let (c, op) = io(IoKind::Read);
                    wrap(&mut st.pre, c, [op]);
                }
            }
        }
    }
    for (st, e) in stages.iter_mut().zip(&ex) {
        if st.pack_ns > 0 {
            st.pre.push(Op::Compute { ns: st.pack_ns });
        }
        let slots = post_messages(&mut st.pre, e, bank);
        calls::waitall(&mut st.wait, slots);
        if st.unpack_ns > 0 {
            st.wait.push(Op::Compute { ns: st.unpack_ns });
        }
    }
    stages
}

/// Irecvs then Isends on slots of `bank` (slot = 2·i + bank, so two cycles in flight never
/// share a slot); returns the slots to wait for.
fn post_messages(p: &mut Vec<Op>, e: &Exchange, bank: u32) -> Vec<u32> {
    let mut slots = Vec::with_capacity(e.recvs.len() + e.sends.len());
    let mut i = 0u32;
    for &(from, bytes) in &e.recvs {
        let s = 2 * i + bank;
        calls::irecv(p, from, bytes, s);
        slots.push(s);
        i += 1;
    }
    for &(to, bytes) in &e.sends {
        let s = 2 * i + bank;
        calls::isend(p, to, bytes, s);
        slots.push(s);
        i += 1;
    }
    slots
}

fn emit_exchange(p: &mut Vec<Op>, e: &Exchange, bank: u32) {
    let slots = post_messages(p, e, bank);
    calls::waitall(p, slots);
}

#[cfg(test)]
mod tests {
    use super::super::tests_support::system;
    use super::*;
    use crate::model::Placement;
    use crate::romio::rank_nodes;

    fn hpio(ranks: u64, size: u64, space: u64, count: u64) -> Vec<Pattern> {
        (0..ranks)
            .map(|r| Pattern::vector(r * (size + space), count, size, ranks * (size + space)))
            .collect()
    }

    fn count_io(p: &[Op], kind: IoKind) -> usize {
        p.iter()
            .filter(|o| matches!(o, Op::Io { kind: k, .. } if *k == kind))
            .count()
    }

    /// Issue 4: the number of two-phase cycles = ceil(domain / cb_buffer_size) per aggregator.
    #[test]
    fn cycles_closed_form() {
        let sys = system();
        let mut h = Hints::from_system(&sys);
        let pats = hpio(16, 32, 128, 32768);
        let nodes = rank_nodes(&sys, 16).unwrap();
        let span: u64 = (32768 - 1) * 16 * 160 + 15 * 160 + 32; // [0, last byte of rank 15]
        for cb in [512u64 << 10, 4 << 20, 16 << 20, 64 << 20] {
            h.cb_buffer_size = cb;
            let plan = plan(&pats, &nodes, &h).unwrap();
            assert_eq!(plan.aggregators, vec![0, 4, 8, 12]);
            let fd = span.div_ceil(4);
            for (a, wins) in plan.windows.iter().enumerate() {
                // The data span in each domain: domains start and end inside regions or
                // holes; compute it from the pattern to get the exact closed form.
                let (d0, dl) = plan.domains[a][0];
                assert_eq!(dl, fd.min(span - d0));
                let s = pats
                    .iter()
                    .filter_map(|p| p.span_in(d0, d0 + dl))
                    .map(|x| x.0)
                    .min()
                    .unwrap();
                let e = pats
                    .iter()
                    .filter_map(|p| p.span_in(d0, d0 + dl))
                    .map(|x| x.1)
                    .max()
                    .unwrap();
                assert_eq!(wins.len() as u64, (e - s).div_ceil(cb), "cb {cb} agg {a}");
                let total: u64 = wins.iter().flatten().map(|w| w.1).sum();
                assert_eq!(total, e - s);
            }
        }
        // Exactly divisible: 4 ranks on one node, 1 aggregator, a 20 MiB extent with no holes
        // at its ends: 20 MiB / 4 MiB = 5 cycles, / 16 MiB = 2.
        let pats: Vec<Pattern> = (0..4u64)
            .map(|r| Pattern::contiguous(r * (5 << 20), 5 << 20))
            .collect();
        let nodes = vec![0; 4];
        h.cb_buffer_size = 4 << 20;
        assert_eq!(plan(&pats, &nodes, &h).unwrap().cycles(), 5);
        h.cb_buffer_size = 16 << 20;
        assert_eq!(plan(&pats, &nodes, &h).unwrap().cycles(), 2);
        h.cb_per_node = 0; // "*:*": every rank aggregates, 5 MiB each
        assert_eq!(plan(&pats, &nodes, &h).unwrap().cycles(), 1);
        h.cb_buffer_size = 1 << 20;
        assert_eq!(plan(&pats, &nodes, &h).unwrap().cycles(), 5);
    }

    #[test]
    fn stripe_aligned_cycles() {
        let sys = system();
        let mut h = Hints::from_system(&sys);
        h.file_domain = FileDomain::StripeAligned;
        h.stripe_size = 1 << 20;
        h.cb_buffer_size = 4 << 20;
        // 64 MiB written by 4 ranks on 2 nodes (cb_per_node 1 → 2 aggregators): 32 stripes
        // each, 4 stripes per cycle: 8 cycles.
        let pats: Vec<Pattern> = (0..4u64)
            .map(|r| Pattern::contiguous(r * (16 << 20), 16 << 20))
            .collect();
        let nodes = vec![0, 0, 1, 1];
        let p = plan(&pats, &nodes, &h).unwrap();
        assert_eq!(p.aggregators, vec![0, 2]);
        assert_eq!(p.domains[0].len(), 32);
        assert_eq!(p.domains[0][1], (2 << 20, 1 << 20));
        assert_eq!(p.cycles(), 8);
        // cb smaller than a stripe: one stripe per cycle.
        h.cb_buffer_size = 1000;
        assert_eq!(plan(&pats, &nodes, &h).unwrap().cycles(), 32);
    }

    /// Issue 4: aggregator choice for blocked and round-robin placement and cb_per_node.
    #[test]
    fn aggregator_choice() {
        let sys = system(); // 4 nodes × 4 ranks, block placement
        let nodes = rank_nodes(&sys, 16).unwrap();
        let mut h = Hints::from_system(&sys);
        assert_eq!(aggregators(&nodes, &h), vec![0, 4, 8, 12]);
        h.cb_per_node = 2;
        assert_eq!(aggregators(&nodes, &h), vec![0, 1, 4, 5, 8, 9, 12, 13]);
        h.aggregator_placement = AggregatorPlacement::RoundRobin;
        assert_eq!(aggregators(&nodes, &h), vec![0, 4, 8, 12, 1, 5, 9, 13]);
        h.cb_nodes = 3;
        assert_eq!(aggregators(&nodes, &h), vec![0, 4, 8]);
        h.aggregator_placement = AggregatorPlacement::Blocked;
        assert_eq!(aggregators(&nodes, &h), vec![0, 1, 4]);
        h.cb_nodes = 0;
        h.cb_per_node = 0;
        assert_eq!(aggregators(&nodes, &h).len(), 16);
        // Round-robin rank placement: node of rank r is r mod 4.
        let mut sys2 = sys.clone();
        sys2.nodes.placement = Placement::RoundRobin;
        let nodes = rank_nodes(&sys2, 8).unwrap();
        let mut h = Hints::from_system(&sys2);
        h.cb_per_node = 2;
        assert_eq!(aggregators(&nodes, &h), vec![0, 4, 1, 5, 2, 6, 3, 7]);
        h.aggregator_placement = AggregatorPlacement::RoundRobin;
        assert_eq!(aggregators(&nodes, &h), vec![0, 1, 2, 3, 4, 5, 6, 7]);
    }

    /// Issue 4 (accuracy): the aggregator pays exchange_piece_ns per piece it unpacks, after
    /// its Waitall; the other ranks pay nothing.
    #[test]
    fn exchange_pieces_cost_the_aggregator_after_the_waitall() {
        let sys = system();
        let mut h = Hints::from_system(&sys);
        h.call_overhead_ns = 0;
        h.exchange_piece_ns = 7;
        let pats = hpio(4, 32, 128, 1024);
        let req = Request {
            func: calls::MPI_FILE_WRITE_ALL,
            file: 0,
            kind: IoKind::Write,
        };
        let progs = collective(&req, &pats, &[0; 4], &h, 3, &[None; 4]);
        let computes = |p: &[Op]| -> Vec<u64> {
            p.iter()
                .filter_map(|o| match o {
                    Op::Compute { ns } => Some(*ns),
                    _ => None,
                })
                .collect()
        };
        // One cycle: 4 ranks × 1024 pieces of 32 bytes.
        assert_eq!(computes(&progs[0]), vec![4 * 1024 * 7]);
        let wait = progs[0]
            .iter()
            .rposition(|o| matches!(o, Op::WaitAll { .. }))
            .unwrap();
        // The MPI_Waitall call ends (End), then the unpack.
        assert!(matches!(progs[0][wait + 2], Op::Compute { ns: 28672 }));
        assert!(computes(&progs[1]).is_empty());
    }

    #[test]
    fn collective_ops_look_like_romio() {
        let sys = system();
        let h = Hints::from_system(&sys);
        let pats = hpio(4, 32, 128, 1024);
        let nodes = vec![0; 4];
        let req = Request {
            func: calls::MPI_FILE_WRITE_ALL,
            file: 0,
            kind: IoKind::Write,
        };
        let progs = collective(&req, &pats, &nodes, &h, 3, &[Some(1), None, None, None]);
        // One aggregator (rank 0), one cycle: read of the span with holes, then the write,
        // exactly the traced run (tests/data/hpio-collective): pread/pwrite 0+655232.
        let io: Vec<_> = progs[0]
            .iter()
            .filter_map(|o| match o {
                Op::Io {
                    kind,
                    offset,
                    bytes,
                    ..
                } => Some((*kind, *offset, *bytes)),
                _ => None,
            })
            .collect();
        assert_eq!(
            io,
            vec![(IoKind::Read, 0, 655232), (IoKind::Write, 0, 655232)]
        );
        for p in &progs[1..] {
            assert_eq!(count_io(p, IoKind::Write), 0);
            // Offset list and data: one Isend each to the aggregator.
            assert_eq!(
                p.iter()
                    .filter(|o| matches!(o, Op::Isend { to: 0, .. }))
                    .count(),
                2
            );
        }
        let recvs: Vec<u64> = progs[0]
            .iter()
            .filter_map(|o| match o {
                Op::Irecv { bytes, .. } => Some(*bytes),
                _ => None,
            })
            .collect();
        assert_eq!(
            recvs,
            vec![16384; 4]
                .into_iter()
                .chain(vec![32768; 4])
                .collect::<Vec<_>>()
        );
        // Barriers line up: same count on every rank.
        let barriers: Vec<usize> = progs
            .iter()
            .map(|p| p.iter().filter(|o| matches!(o, Op::Barrier)).count())
            .collect();
        assert!(barriers.iter().all(|&b| b == barriers[0]));
        // Begin/End balance.
        for p in &progs {
            let b = p.iter().filter(|o| matches!(o, Op::Begin(_))).count();
            let e = p.iter().filter(|o| matches!(o, Op::End)).count();
            assert_eq!(b, e);
        }
        assert!(
            matches!(&progs[0][0], Op::Begin(c) if c.instance == Some(3) && c.observed_id == Some(1) && c.collective)
        );
    }

    #[test]
    fn automatic_skips_two_phase_without_interleaving() {
        let sys = system();
        let mut h = Hints::from_system(&sys);
        let pats: Vec<Pattern> = (0..4u64)
            .map(|r| Pattern::contiguous(r << 20, 1 << 20))
            .collect();
        let nodes = vec![0; 4];
        let req = Request {
            func: calls::MPI_FILE_WRITE_ALL,
            file: 0,
            kind: IoKind::Write,
        };
        let progs = collective(&req, &pats, &nodes, &h, 1, &[]);
        for p in &progs {
            assert_eq!(count_io(p, IoKind::Write), 1);
            assert!(!p.iter().any(|o| matches!(o, Op::Isend { .. })));
        }
        h.cb_write = Toggle::Enable;
        let progs = collective(&req, &pats, &nodes, &h, 1, &[]);
        assert_eq!(count_io(&progs[0], IoKind::Write), 1);
        assert_eq!(count_io(&progs[1], IoKind::Write), 0);
        assert_eq!(count_io(&progs[0], IoKind::Read), 0, "no holes, no read");
    }

    #[test]
    fn overlap_keeps_every_op() {
        let sys = system();
        let mut h = Hints::from_system(&sys);
        h.cb_buffer_size = 64 << 10;
        let pats = hpio(4, 32, 128, 1024);
        let nodes = vec![0; 4];
        let req = Request {
            func: calls::MPI_FILE_WRITE_ALL,
            file: 0,
            kind: IoKind::Write,
        };
        let a = collective(&req, &pats, &nodes, &h, 1, &[]);
        h.overlap_exchange = true;
        let b = collective(&req, &pats, &nodes, &h, 1, &[]);
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x.len(), y.len());
            assert_eq!(count_io(x, IoKind::Write), count_io(y, IoKind::Write));
        }
        assert_eq!(
            count_io(&a[0], IoKind::Write),
            655232usize.div_ceil(64 << 10)
        );
        // With overlap, the second cycle's messages are posted before the first write.
        let first_write = b[0]
            .iter()
            .position(|o| {
                matches!(
                    o,
                    Op::Io {
                        kind: IoKind::Write,
                        ..
                    }
                )
            })
            .unwrap();
        let irecvs_before = b[0][..first_write]
            .iter()
            .filter(|o| matches!(o, Op::Irecv { .. }))
            .count();
        assert_eq!(irecvs_before, 4 + 4 + 4);
    }
}
