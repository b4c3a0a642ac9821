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
//!
//! Dense exchanges (ranks × aggregators above `aggregate_exchange_above`, no overlap) become
//! one `MPI_Alltoallv` call per rank holding an aggregated `Op::Exchange` (per-rank byte and
//! message totals) instead of a message per pair: 10,000 ranks with 5,000 aggregators are
//! 50 million messages per cycle. Both forms come from the same window scan, which visits only
//! the ranks that can have data in a window: windows in file order take them from a calendar
//! of where each rank's data resumes ([`Calendar`]), other windows find them through the
//! extents sorted by start ([`Extents`]); no allocation per pair.

use crate::model::{AggregatorPlacement, FileDomain, Toggle};
use crate::program::{IoKind, Op, Rank, Traffic};

use super::calendar::Calendar;
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
        if hints.mpiio.cb_per_node == 0 {
            m
        } else {
            m.min(hints.mpiio.cb_per_node as usize)
        }
    };
    let mut out = Vec::new();
    match hints.mpiio.aggregator_placement {
        AggregatorPlacement::Blocked => {
            for &n in &order {
                out.extend_from_slice(&members[&n][..per(n)]);
            }
        }
        AggregatorPlacement::RoundRobin => {
            let most = order.iter().map(|&n| per(n)).max().unwrap_or(0);
            for j in 0..most {
                for &n in &order {
                    if let Some(&r) = members[&n][..per(n)].get(j) {
                        out.push(r);
                    }
                }
            }
        }
    }
    if hints.mpiio.cb_nodes > 0 {
        out.truncate(hints.mpiio.cb_nodes as usize);
    }
    out
}

/// The aggregators ROMIO's Lustre driver writes with (`ADIOI_LUSTRE_Get_striping_info`):
/// of the n candidates, the first stripe_count × min(n / stripe_count, co) when n ≥
/// stripe_count, else the largest divisor of stripe_count not above n (found as ROMIO does),
/// so every OST is written by at most `co` clients and extent locks do not conflict. With
/// blocked placement the kept aggregators are the first node's ranks: they share its link.
/// `lustre_co_ratio` 0, or even file domains (not the Lustre driver): all candidates.
pub fn lustre_write_aggregators(mut aggs: Vec<Rank>, hints: &Hints) -> Vec<Rank> {
    let co = hints.mpiio.lustre_co_ratio as usize;
    if co == 0 || hints.mpiio.file_domain != FileDomain::StripeAligned {
        return aggs;
    }
    let stripes = match hints.stripe_count {
        0 => hints.targets,
        c => c,
    }
    .max(1) as usize;
    let n = aggs.len();
    let keep = if n >= stripes {
        stripes * (n / stripes).min(co)
    } else {
        let mut keep = 1;
        let mut divisor = 2;
        while stripes >= divisor * divisor {
            if stripes % divisor == 0 {
                if stripes / divisor <= n {
                    keep = stripes / divisor;
                    break;
                } else if divisor <= n {
                    keep = divisor;
                }
            }
            divisor += 1;
        }
        keep
    };
    aggs.truncate(keep);
    aggs
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
    match hints.mpiio.file_domain {
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

/// The (offset, length) ranges of one cycle's window.
type Ranges = Vec<(u64, u64)>;

/// An aggregator's access of one range of its window: offset, length, and whether the data has
/// holes (then a write reads the range first: read-modify-write).
type Access = (u64, u64, bool);

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
    let ext = Extents::new(patterns);
    let mut scan = WindowScan::new(patterns.len(), false);
    plan_with(
        patterns,
        &ext,
        aggregators(node_of, hints),
        hints,
        &mut scan,
        &mut |_, _, _| {},
    )
}

/// As [`plan`], with the aggregators given; `on_domain(a, scan, windows)` sees each
/// aggregator's offset/length lists (`WindowScan::lists` of its domain), which the same pass
/// over the ranks yields as the data span the cycles need, and the windows of its cycles.
fn plan_with(
    patterns: &[Pattern],
    ext: &Extents,
    aggregators: Vec<Rank>,
    hints: &Hints,
    scan: &mut WindowScan,
    on_domain: &mut dyn FnMut(usize, &WindowScan, &[Ranges]),
) -> Option<Plan> {
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
    let domains = file_domains(lo, hi, aggregators.len(), hints);
    let windows = domains
        .iter()
        .enumerate()
        .map(|(a, dom)| {
            scan.lists(ext, patterns, dom);
            let windows = cycle_windows(dom, scan.span, hints);
            on_domain(a, scan, &windows);
            windows
        })
        .collect();
    Some(Plan {
        aggregators,
        domains,
        windows,
    })
}

/// The ranges of each cycle's window in domain `dom` whose data spans [s, e).
///
/// Even domains: the cycles run over the data actually in the domain (ROMIO's
/// st_loc..end_loc) in windows of `cb_buffer_size`. Stripe-aligned: the buffer holds
/// max(1, cb_buffer_size / stripe) whole stripes of the domain.
fn cycle_windows(dom: &[(u64, u64)], (s, e): (u64, u64), hints: &Hints) -> Vec<Ranges> {
    let cb = hints.mpiio.cb_buffer_size.max(1);
    match hints.mpiio.file_domain {
        FileDomain::Even => {
            // An even domain is one range: (s, e) is the span of the data in it.
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
    }
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

/// The ranks in order of the first byte they access, to find those whose accesses can meet a
/// range without looking at every rank: an extent [s, e) meets [a, b) only if s < b and
/// e > a, and e ≤ s + longest, so only ranks with a − longest < s < b need a look. Dense
/// patterns (HPIO: every rank spans the file) still look at every rank; block patterns look
/// at a few.
struct Extents {
    /// (first byte, rank) of the ranks that access something, sorted.
    by_start: Vec<(u64, Rank)>,
    /// End of each rank's extent (0 when it accesses nothing).
    end: Vec<u64>,
    /// The longest extent.
    longest: u64,
    /// The end of the last extent.
    hi: u64,
}

impl Extents {
    fn new(patterns: &[Pattern]) -> Extents {
        let mut by_start = Vec::with_capacity(patterns.len());
        let mut end = vec![0; patterns.len()];
        let mut longest = 0;
        for (r, p) in patterns.iter().enumerate() {
            if let Some((s, e)) = p.extent() {
                by_start.push((s, r as Rank));
                end[r] = e;
                longest = longest.max(e - s);
            }
        }
        by_start.sort_unstable();
        let hi = end.iter().copied().max().unwrap_or(0);
        Extents {
            by_start,
            end,
            longest,
            hi,
        }
    }

    /// The ranks whose extent meets [a, b), in order of their first byte.
    fn meeting(&self, a: u64, b: u64) -> impl Iterator<Item = Rank> + '_ {
        let lo = self
            .by_start
            .partition_point(|x| x.0.saturating_add(self.longest) <= a);
        let hi = self.by_start.partition_point(|x| x.0 < b).max(lo);
        self.by_start[lo..hi]
            .iter()
            .filter(move |x| self.end[x.1 as usize] > a)
            .map(|x| x.1)
    }
}

/// What `pat` has inside [a, b): `bytes_in`, `pieces_in` and `span_in` at once, and where its
/// data resumes after the window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct InWindow {
    bytes: u64,
    pieces: u64,
    span: Option<(u64, u64)>,
    /// The first accessed byte at or after b (`Pattern::next_at_or_after`; u64::MAX: none):
    /// [b, resume) holds nothing of the rank, which lets the next windows skip it.
    resume: u64,
}

impl InWindow {
    const EMPTY: InWindow = InWindow {
        bytes: 0,
        pieces: 0,
        span: None,
        resume: u64::MAX,
    };
}

/// [`InWindow`] of `pat` in [a, b). For a vector (the dense case: every HPIO rank meets every
/// window) one division per end instead of six in all: the build of a 10,000-rank collective
/// does this tens of millions of times.
#[inline(never)]
fn in_window(pat: &Pattern, a: u64, b: u64) -> InWindow {
    let Pattern::Vector {
        offset,
        count,
        len,
        stride,
    } = *pat
    else {
        let resume = pat.next_at_or_after(b).unwrap_or(u64::MAX);
        let bytes = pat.bytes_in(a, b);
        if bytes == 0 {
            return InWindow {
                resume,
                ..InWindow::EMPTY
            };
        }
        return InWindow {
            bytes,
            pieces: pat.pieces_in(a, b),
            span: pat.span_in(a, b),
            resume,
        };
    };
    if b <= offset {
        return InWindow {
            resume: offset,
            ..InWindow::EMPTY
        };
    }
    // Upper end: bytes below b, the last piece starting before b, where the span ends and
    // where the data resumes.
    let x = b - offset;
    let k = x / stride;
    let (below_b, last, end, resume) = if k >= count {
        let last = count - 1;
        (count * len, last, offset + last * stride + len, u64::MAX)
    } else {
        let rem = x - k * stride;
        // Piece k holds b (rem < len), or the data resumes at piece k + 1.
        let resume = if rem < len {
            b
        } else if k + 1 < count {
            offset + (k + 1) * stride
        } else {
            u64::MAX
        };
        if rem > 0 {
            (
                k * len + rem.min(len),
                k,
                (offset + k * stride + len).min(b),
                resume,
            )
        } else {
            // b is the first byte of piece k (k ≥ 1 as b > offset).
            (k * len, k - 1, offset + (k - 1) * stride + len, resume)
        }
    };
    if b <= a {
        return InWindow {
            resume,
            ..InWindow::EMPTY
        };
    }
    // Lower end: bytes below a, the first piece ending after a and where the span starts.
    let (below_a, first, start) = if a <= offset {
        (0, 0, offset)
    } else {
        let x = a - offset;
        let q = x / stride;
        if q >= count {
            return InWindow {
                resume,
                ..InWindow::EMPTY
            };
        }
        let rem = x - q * stride;
        if rem < len {
            (q * len + rem, q, a)
        } else {
            (q * len + len, q + 1, offset + (q + 1) * stride)
        }
    };
    if below_b <= below_a || last < first {
        return InWindow {
            resume,
            ..InWindow::EMPTY
        };
    }
    InWindow {
        bytes: below_b - below_a,
        pieces: last - first + 1,
        span: Some((start, end)),
        resume,
    }
}

/// Who has how much in one aggregator's window (or domain): buffers reused from window to
/// window, cleared through the list of ranks touched, so a scan allocates nothing per pair.
struct WindowScan {
    /// (rank, amount) of the ranks with data in the window, in rank order after a scan: bytes
    /// (offset lists: 16 bytes per piece).
    pairs: Vec<(Rank, u64)>,
    /// Per rank: the amount so far, for windows of several ranges (stripe-aligned domains),
    /// where a rank can meet several; 0 outside `touched`.
    amount: Vec<u64>,
    touched: Vec<Rank>,
    /// Per rank: a range [from, to) known to hold none of its data (from earlier windows'
    /// `InWindow::resume`). Windows come in file order, so in a dense pattern most ranks meet
    /// the next window inside that range and are skipped without a query.
    empty: Vec<(u64, u64)>,
    /// The ranks by `empty[r].1`, for one-range windows in file order.
    calendar: Calendar,
    /// The ranks the calendar gives for the current range.
    due: Vec<Rank>,
    /// Per range of the window: the data span and whether it has holes.
    ios: Vec<Access>,
    /// Contiguous pieces in the window (counted when asked).
    pieces: u64,
    /// `pairs` went in out of rank order (sort it after the scan).
    unsorted: bool,
    /// `pairs` wanted in rank order (message lists); false when they are only summed (the
    /// aggregated exchange's totals, the plan alone), which saves sorting them.
    ordered: bool,
    /// Whether `lists` of a one-range domain also finds what a window holding all the
    /// domain's data holds (`bytes`, `ios`, `pieces`, as `data` of that window would).
    domain_data: bool,
    /// (rank, bytes) of the ranks with data in the domain, from `lists` with `domain_data`.
    bytes: Vec<(Rank, u64)>,
    /// [first, end) of the data in the ranges of the last `lists` scan (empty: s ≥ e).
    span: (u64, u64),
}

impl WindowScan {
    fn new(n: usize, ordered: bool) -> WindowScan {
        WindowScan {
            pairs: Vec::new(),
            amount: vec![0; n],
            touched: Vec::new(),
            empty: vec![(0, 0); n],
            calendar: Calendar::default(),
            due: Vec::new(),
            ios: Vec::new(),
            pieces: 0,
            unsorted: false,
            ordered,
            domain_data: false,
            bytes: Vec::new(),
            span: (u64::MAX, 0),
        }
    }

    fn clear(&mut self) {
        self.pairs.clear();
        self.bytes.clear();
        self.ios.clear();
        self.pieces = 0;
        self.unsorted = false;
    }

    /// What rank `r` (pattern `pat`) has in [a, b): nothing at once when an earlier query
    /// showed [a, b) holds none of its data. Inlined: the skip is a load and two comparisons
    /// in the scan's loop, the query a call.
    #[inline(always)]
    fn query(&mut self, r: Rank, pat: &Pattern, a: u64, b: u64) -> InWindow {
        let empty = &mut self.empty[r as usize];
        if empty.0 <= a && b <= empty.1 {
            return InWindow::EMPTY;
        }
        let w = in_window(pat, a, b);
        *empty = (b, w.resume);
        w
    }

    /// Calls `f` with what each rank that can have data in [a, b) has there (`query`). With
    /// `sweep` (a one-range window) from the calendar: every rank it leaves out resumes at or
    /// after b and knew [a, b) empty, the rest come in rank order. Else through the extents,
    /// after which the calendar's keys are stale. A range before the last one (a new pass)
    /// rebuilds the calendar: a rank whose empty range starts after a is due at once.
    fn visit(
        &mut self,
        ext: &Extents,
        patterns: &[Pattern],
        (a, b): (u64, u64),
        sweep: bool,
        mut f: impl FnMut(&mut WindowScan, Rank, InWindow),
    ) {
        if !sweep {
            self.calendar.invalidate();
            for r in ext.meeting(a, b) {
                let w = self.query(r, &patterns[r as usize], a, b);
                f(self, r, w);
            }
            return;
        }
        if !self.calendar.ready(a) {
            let empty = &self.empty;
            let keys = ext.by_start.iter().map(|&(_, r)| {
                let (from, to) = empty[r as usize];
                (if from <= a { to } else { 0 }, r)
            });
            self.calendar.reset((a, b), ext.hi, keys);
        }
        let mut due = std::mem::take(&mut self.due);
        self.calendar.due(b, &mut due, self.ordered);
        for &r in &due {
            let w = self.query(r, &patterns[r as usize], a, b);
            self.calendar.push(self.empty[r as usize].1, r);
            f(self, r, w);
        }
        self.due = due;
    }

    /// `x` more for rank `r`. One range: a rank meets it once, so the pair goes straight to
    /// the list (the dense case: no per-rank table to fill and clear); several: summed first.
    fn add(&mut self, r: Rank, x: u64, one_range: bool) {
        if one_range {
            self.unsorted |= self.pairs.last().is_some_and(|&(l, _)| l > r);
            self.pairs.push((r, x));
            return;
        }
        let a = &mut self.amount[r as usize];
        if *a == 0 {
            self.touched.push(r);
        }
        *a += x;
    }

    /// `pairs` complete, and in rank order when `ordered` (they usually come in it: extents
    /// sorted by start).
    fn finish(&mut self) {
        if !self.touched.is_empty() {
            if self.ordered {
                self.touched.sort_unstable();
            }
            for &r in &self.touched {
                self.pairs
                    .push((r, std::mem::take(&mut self.amount[r as usize])));
            }
            self.touched.clear();
        } else if self.unsorted && self.ordered {
            self.pairs.sort_unstable();
        }
    }

    /// The data of every rank in the window's ranges: bytes per rank, the span and holes of
    /// each range, and (with `count_pieces`) the contiguous pieces.
    fn data(
        &mut self,
        ext: &Extents,
        patterns: &[Pattern],
        win: &[(u64, u64)],
        count_pieces: bool,
    ) {
        self.clear();
        let one = win.len() == 1;
        for &(o, l) in win {
            let (mut s, mut e, mut total) = (u64::MAX, 0u64, 0u64);
            self.visit(ext, patterns, (o, o + l), one, |scan, r, w| {
                if w.bytes == 0 {
                    return;
                }
                if count_pieces {
                    scan.pieces += w.pieces;
                }
                scan.add(r, w.bytes, one);
                total += w.bytes;
                if let Some((x, y)) = w.span {
                    s = s.min(x);
                    e = e.max(y);
                }
            });
            if s < e {
                self.ios.push((s, e - s, total < e - s));
            }
        }
        self.finish();
    }

    /// The offset/length lists for one aggregator's domain: 16 bytes per piece per rank; and
    /// the span of the data in the domain. With `domain_data` and a one-range domain, also
    /// what `data` of a window holding all the domain's data finds (the same ranks with the
    /// same bytes, pieces and span: `bytes`, `ios` and `pieces`), from the same queries.
    fn lists(&mut self, ext: &Extents, patterns: &[Pattern], dom: &[(u64, u64)]) {
        self.clear();
        let one = dom.len() == 1;
        let keep = self.domain_data && one;
        let (mut s, mut e, mut total) = (u64::MAX, 0, 0);
        for &(o, l) in dom {
            self.visit(ext, patterns, (o, o + l), one, |scan, r, w| {
                if w.pieces > 0 {
                    scan.add(r, 16 * w.pieces, one);
                }
                if keep && w.bytes > 0 {
                    scan.bytes.push((r, w.bytes));
                    scan.pieces += w.pieces;
                    total += w.bytes;
                }
                if let Some((x, y)) = w.span {
                    s = s.min(x);
                    e = e.max(y);
                }
            });
        }
        if keep && s < e {
            self.ios.push((s, e - s, total < e - s));
        }
        self.span = (s, e);
        self.finish();
    }
}

/// One side of a cycle's exchange on one rank.
#[derive(Default, Clone)]
struct Exchange {
    recvs: Vec<(Rank, u64)>,
    sends: Vec<(Rank, u64)>,
}

/// The messages of one exchange: per rank, as lists for Isend/Irecv, or as totals for one
/// aggregated `Op::Exchange` per rank.
enum Sides {
    Messages(Vec<Exchange>),
    Totals(Vec<Traffic>),
}

impl Sides {
    fn new(n: usize, aggregate: bool) -> Sides {
        if aggregate {
            Sides::Totals(vec![Traffic::default(); n])
        } else {
            Sides::Messages(vec![Exchange::default(); n])
        }
    }

    /// The messages between aggregator `agg` and every rank of `pairs` (rank, bytes each): into
    /// the aggregator (`to_agg`, writes and offset lists) or out of it (reads). Message lists
    /// go in the order of `pairs`; totals add the aggregator's side up once.
    fn window(&mut self, node_of: &[u32], agg: Rank, pairs: &[(Rank, u64)], to_agg: bool) {
        match self {
            Sides::Messages(ex) => {
                for &(r, b) in pairs {
                    let (from, to) = if to_agg { (r, agg) } else { (agg, r) };
                    ex[to as usize].recvs.push((from, b));
                    ex[from as usize].sends.push((to, b));
                }
            }
            Sides::Totals(t) => {
                let home = node_of.get(agg as usize);
                let mut a = Traffic::default();
                for &(r, b) in pairs {
                    let x = &mut t[r as usize];
                    x.largest = x.largest.max(b);
                    a.largest = a.largest.max(b);
                    let local = node_of.get(r as usize) == home;
                    match (local, to_agg) {
                        (true, true) => {
                            x.local_out_bytes += b;
                            x.local_out_msgs += 1;
                            a.local_in_bytes += b;
                        }
                        (true, false) => {
                            x.local_in_bytes += b;
                            a.local_out_bytes += b;
                            a.local_out_msgs += 1;
                        }
                        (false, true) => {
                            x.out_bytes += b;
                            x.out_msgs += 1;
                            a.in_bytes += b;
                            a.in_msgs += 1;
                        }
                        (false, false) => {
                            x.in_bytes += b;
                            x.in_msgs += 1;
                            a.out_bytes += b;
                            a.out_msgs += 1;
                        }
                    }
                }
                let y = &mut t[agg as usize];
                y.out_bytes += a.out_bytes;
                y.out_msgs += a.out_msgs;
                y.in_bytes += a.in_bytes;
                y.in_msgs += a.in_msgs;
                y.local_out_bytes += a.local_out_bytes;
                y.local_out_msgs += a.local_out_msgs;
                y.local_in_bytes += a.local_in_bytes;
                y.largest = y.largest.max(a.largest);
            }
        }
    }

    /// Rank `r`'s side into `start` (message starts) and `wait` (the Waitall, or the
    /// aggregated exchange's call), message slots of `bank`.
    fn emit(&mut self, r: usize, start: &mut Vec<Op>, wait: &mut Vec<Op>, bank: u32) {
        match self {
            Sides::Messages(ex) => {
                let slots = post_messages(start, &ex[r], bank);
                calls::waitall(wait, slots);
            }
            Sides::Totals(t) => {
                let t = std::mem::take(&mut t[r]);
                let c = calls::mpi_collective(calls::MPI_ALLTOALLV, t.total_bytes());
                wrap(wait, c, [Op::Exchange(Box::new(t))]);
            }
        }
    }
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
        if hints.mpiio.call_overhead_ns > 0 {
            p.push(Op::Compute {
                ns: hints.mpiio.call_overhead_ns,
            });
        }
        calls::small_collective(p, calls::MPI_ALLGATHER, 16);
    }
    let toggle = match req.kind {
        IoKind::Write => hints.mpiio.cb_write,
        IoKind::Read => hints.mpiio.cb_read,
    };
    let two_phase = match toggle {
        Toggle::Enable => true,
        Toggle::Disable => false,
        Toggle::Automatic => interleaved(patterns),
    };
    let ext = Extents::new(patterns);
    let aggs = match req.kind {
        IoKind::Write => lustre_write_aggregators(aggregators(node_of, hints), hints),
        // The Lustre driver reads through ROMIO's generic two-phase code.
        IoKind::Read => aggregators(node_of, hints),
    };
    // Per cycle, per rank: (pre ops, wait ops, post ops); with overlap the exchange of cycle
    // m+1 is posted before the write of cycle m and waited for after it.
    let overlap = hints.mpiio.overlap_exchange && req.kind == IoKind::Write;
    // Dense exchanges in aggregate (overlap needs the messages' slots: it keeps them).
    let aggregate = !overlap
        && hints.mpiio.aggregate_exchange_above > 0
        && (n as u64).saturating_mul(aggs.len() as u64) > hints.mpiio.aggregate_exchange_above;
    // The aggregated exchange only sums each rank's pairs: no need to have them in order.
    let mut scan = WindowScan::new(n, !aggregate);
    scan.domain_data = aggregate;
    // The offset/length lists: 16 bytes per piece a rank has in an aggregator's domain
    // (gathered while planning, sent after the Alltoall of counts).
    let mut sides = Sides::new(n, aggregate);
    let mut first = aggregate.then(|| FirstCycle {
        sides: Sides::new(n, true),
        found: vec![None; aggs.len()],
    });
    let to_agg = req.kind == IoKind::Write;
    let plan = if two_phase {
        let agg_ranks = aggs.clone();
        plan_with(
            patterns,
            &ext,
            aggs,
            hints,
            &mut scan,
            &mut |a, scan, windows| {
                sides.window(node_of, agg_ranks[a], &scan.pairs, true);
                if let Some(f) = &mut first {
                    if let Some(io) = whole_window(scan, windows) {
                        f.sides.window(node_of, agg_ranks[a], &scan.bytes, to_agg);
                        f.found[a] = Some((io, scan.pieces));
                    }
                }
            },
        )
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

    for p in progs.iter_mut() {
        calls::small_collective(p, calls::MPI_ALLTOALL, 4 * n as u64);
    }
    for (r, p) in progs.iter_mut().enumerate() {
        let mut wait = Vec::new();
        sides.emit(r, p, &mut wait, 0);
        p.append(&mut wait);
        calls::small_collective(p, calls::MPI_ALLREDUCE, 8);
    }

    let cycles = plan.cycles();
    let mut staged: Vec<Option<Vec<Stage>>> = vec![None; 2];
    for m in 0..=cycles {
        let cur = if m < cycles {
            Some(cycle_stages(
                req,
                patterns,
                &ext,
                &mut scan,
                &plan,
                node_of,
                hints,
                (m, n, (m % 2) as u32),
                aggregate,
                if m == 0 { first.take() } else { None },
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

/// Cycle 0 of the domains whose only window is one range holding all their data (every
/// domain when `cb_buffer_size` covers its data): what the domain's scan found there, so the
/// cycle does not scan those windows again. Aggregated exchanges only, whose totals do not
/// depend on the order the aggregators' windows are added in.
struct FirstCycle {
    /// The exchange of those windows.
    sides: Sides,
    /// Per aggregator: its window's access (offset, length, holes) and contiguous pieces.
    found: Vec<Option<(Access, u64)>>,
}

/// The access of a domain's only cycle, when its window is one range holding all the data the
/// domain's scan found (`WindowScan::lists` with `domain_data`): `data` of that window would
/// find the same ranks, bytes, pieces and span (the window lies in the domain).
fn whole_window(scan: &WindowScan, windows: &[Ranges]) -> Option<Access> {
    let ([io], [w]) = (&scan.ios[..], windows) else {
        return None;
    };
    let [(o, l)] = w[..] else {
        return None;
    };
    let (s, e) = scan.span;
    (o <= s && e <= o + l).then_some(*io)
}

/// The stages of cycle `m` (of `n` ranks, message slots of `bank`) on every rank; `first`:
/// what planning found of cycle 0.
#[allow(clippy::too_many_arguments)]
fn cycle_stages(
    req: &Request,
    patterns: &[Pattern],
    ext: &Extents,
    scan: &mut WindowScan,
    plan: &Plan,
    node_of: &[u32],
    hints: &Hints,
    (m, n, bank): (usize, usize, u32),
    aggregate: bool,
    first: Option<FirstCycle>,
) -> Vec<Stage> {
    let (mut sides, found) = match first {
        Some(f) => (f.sides, f.found),
        None => (Sides::new(n, aggregate), Vec::new()),
    };
    let mut stages = vec![Stage::default(); n];
    for st in stages.iter_mut() {
        calls::small_collective(&mut st.pre, calls::MPI_ALLTOALL, 4 * n as u64);
    }
    let file = req.file;
    for (a, wins) in plan.windows.iter().enumerate() {
        let Some(win) = wins.get(m) else { continue };
        let agg = plan.aggregators[a];
        // Who has how much in this window; the data span and holes of each range; the
        // contiguous pieces the aggregator unpacks (writes) or packs (reads) this cycle.
        let reused = found.get(a).copied().flatten();
        let (ios, pieces) = match &reused {
            Some((io, pieces)) => (std::slice::from_ref(io), *pieces),
            None => {
                scan.data(ext, patterns, win, hints.mpiio.exchange_piece_ns > 0);
                sides.window(node_of, agg, &scan.pairs, req.kind == IoKind::Write);
                (&scan.ios[..], scan.pieces)
            }
        };
        let st = &mut stages[agg as usize];
        if m == 0 && hints.fresh_memory_bandwidth > 0.0 {
            // ROMIO allocates the collective buffer at every call: the first window fills
            // fresh pages (later cycles reuse them).
            let span: u64 = win.iter().map(|w| w.1).sum();
            let ns = crate::engine::storage::disk::transfer_ns(span, hints.fresh_memory_bandwidth);
            st.pre.push(Op::Compute {
                ns: ns.round() as u64,
            });
        }
        let datatype_ns = pieces * hints.mpiio.exchange_piece_ns;
        if datatype_ns > 0 {
            // MPI's datatype processing on the aggregator: unpacking the received pieces into
            // the collective buffer after the Waitall (writes), packing them before the sends
            // (reads, after the read below is queued in `pre`).
            match req.kind {
                IoKind::Write => st.unpack_ns += datatype_ns,
                IoKind::Read => st.pack_ns += datatype_ns,
            }
        }
        for &(o, l, holes) in ios {
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
    for (r, st) in stages.iter_mut().enumerate() {
        if st.pack_ns > 0 {
            st.pre.push(Op::Compute { ns: st.pack_ns });
        }
        sides.emit(r, &mut st.pre, &mut st.wait, bank);
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

#[cfg(test)]
mod tests {
    use super::super::tests_support::{io_ops, system};
    use super::*;
    use crate::model::Placement;
    use crate::mpiio::romio::rank_nodes;

    fn hpio(ranks: u64, size: u64, space: u64, count: u64) -> Vec<Pattern> {
        (0..ranks)
            .map(|r| Pattern::vector(r * (size + space), count, size, ranks * (size + space)))
            .collect()
    }

    /// The fused window query agrees with the three separate ones.
    #[test]
    fn in_window_matches_the_pattern_queries() {
        let pats = [
            Pattern::vector(160, 1024, 32, 640),
            Pattern::vector(0, 3, 10, 25),
            Pattern::Runs(super::super::Runs::new(vec![(5, 10), (40, 3)])),
        ];
        for pat in &pats {
            let (_, hi) = pat.extent().unwrap();
            let probes: Vec<u64> = (0..hi + 50)
                .step_by((hi as usize / 300).max(1))
                .chain([0, 159, 160, 191, 192, 799, 800, 831, 832, hi, hi + 1])
                .collect();
            for &a in &probes {
                for &b in &probes {
                    let resume = pat.next_at_or_after(b).unwrap_or(u64::MAX);
                    let want = match pat.bytes_in(a, b) {
                        0 => InWindow {
                            resume,
                            ..InWindow::EMPTY
                        },
                        x => InWindow {
                            bytes: x,
                            pieces: pat.pieces_in(a, b),
                            span: pat.span_in(a, b),
                            resume,
                        },
                    };
                    assert_eq!(in_window(pat, a, b), want, "{pat:?} [{a}, {b})");
                }
            }
        }
    }

    /// Seven HPIO ranks (32 B regions, 128 B apart, 50 each), a rank of two runs, one of none.
    fn mixed_patterns() -> Vec<Pattern> {
        let mut pats = hpio(7, 32, 128, 50);
        pats.push(Pattern::Runs(super::super::Runs::new(vec![
            (5, 10),
            (4000, 300),
        ])));
        pats.push(Pattern::empty());
        pats
    }

    /// A scan that skips ranks through the empty ranges of earlier windows finds what a fresh
    /// scan of each window finds, windows in file order or not; a scan whose pairs need no
    /// order (`ordered` false) finds the same pairs.
    #[test]
    fn skipped_ranks_change_no_window() {
        for ordered in [true, false] {
            skipped_ranks_change_no_window_when(ordered);
        }
    }

    fn skipped_ranks_change_no_window_when(ordered: bool) {
        let pats = mixed_patterns();
        let ext = Extents::new(&pats);
        let mut scan = WindowScan::new(pats.len(), ordered);
        let end = 7 * 160 * 50;
        let mut windows: Vec<Vec<(u64, u64)>> = Vec::new();
        for w in [100u64, 1000, 3000, 9000] {
            windows.extend((0..end).step_by(w as usize).map(|a| vec![(a, w)]));
        }
        windows.push(vec![(170, 400), (5000, 2000), (30000, 50)]);
        windows.push(vec![(0, end)]);
        // The pairs as found when ordered; sorted otherwise.
        let in_rank_order = |scan: &WindowScan| {
            let mut p = scan.pairs.clone();
            if !ordered {
                p.sort_unstable();
            }
            p
        };
        let data = |scan: &mut WindowScan, win: &[(u64, u64)]| {
            let mut fresh = WindowScan::new(pats.len(), true);
            scan.data(&ext, &pats, win, true);
            fresh.data(&ext, &pats, win, true);
            assert_eq!(
                (&in_rank_order(scan), &scan.ios, scan.pieces),
                (&fresh.pairs, &fresh.ios, fresh.pieces),
                "{win:?}"
            );
        };
        let lists = |scan: &mut WindowScan, win: &[(u64, u64)]| {
            let mut fresh = WindowScan::new(pats.len(), true);
            scan.lists(&ext, &pats, win);
            fresh.lists(&ext, &pats, win);
            assert_eq!(
                (&in_rank_order(scan), scan.span),
                (&fresh.pairs, fresh.span),
                "{win:?}"
            );
        };
        // Both scans of each window (every window starts a new pass of the calendar), then
        // each kind alone (consecutive windows in file order: one pass per window size).
        for win in &windows {
            data(&mut scan, win);
            lists(&mut scan, win);
        }
        let (mut only_data, mut only_lists) = (
            WindowScan::new(pats.len(), ordered),
            WindowScan::new(pats.len(), ordered),
        );
        for win in &windows {
            data(&mut only_data, win);
            lists(&mut only_lists, win);
        }
    }

    /// A domain whose only window is one range holding all its data (`whole_window`): the
    /// domain's scan finds what a scan of that window finds (ranks and bytes, access, pieces),
    /// which cycle 0 of an aggregated exchange takes instead of scanning again; a domain of
    /// several windows is not taken.
    #[test]
    fn domain_scan_finds_what_its_whole_window_holds() {
        let pats = mixed_patterns();
        let ext = Extents::new(&pats);
        let mut h = Hints::from_system(&system());
        h.stripe_size = 1000;
        for (fd, cb, aggs, reused) in [
            (FileDomain::Even, 1 << 20, 3, 3),
            (FileDomain::Even, 4000, 3, 0),
            (FileDomain::Even, 4000, 20, 20),
            (FileDomain::StripeAligned, 1 << 20, 60, 56),
            (FileDomain::StripeAligned, 1 << 20, 20, 0),
        ] {
            h.mpiio.file_domain = fd;
            h.mpiio.cb_buffer_size = cb;
            let mut scan = WindowScan::new(pats.len(), false);
            scan.domain_data = true;
            let mut found = 0;
            plan_with(
                &pats,
                &ext,
                (0..aggs).collect(),
                &h,
                &mut scan,
                &mut |_, scan, windows| {
                    let Some(io) = whole_window(scan, windows) else {
                        return;
                    };
                    found += 1;
                    let mut fresh = WindowScan::new(pats.len(), true);
                    fresh.data(&ext, &pats, &windows[0], true);
                    let mut bytes = scan.bytes.clone();
                    bytes.sort_unstable();
                    assert_eq!(
                        (bytes, vec![io], scan.pieces),
                        (fresh.pairs, fresh.ios, fresh.pieces),
                        "{fd:?} {windows:?}"
                    );
                },
            );
            assert_eq!(found, reused, "{fd:?} cb {cb} aggregators {aggs}");
        }
    }

    /// Per segment between barriers of one rank's program: (bytes sent, messages sent, bytes
    /// received, messages received) to and from other nodes, then the same on its own node;
    /// from Isend/Irecv (message path) or Exchange (aggregated path).
    fn segments(p: &[Op], me: usize, nodes: &[u32]) -> Vec<[u64; 8]> {
        let mut out = vec![[0u64; 8]];
        for o in p {
            let cur = out.last_mut().unwrap();
            match o {
                Op::Barrier => out.push([0; 8]),
                Op::Isend { to, bytes, .. } => {
                    let k = if nodes[*to as usize] == nodes[me] {
                        4
                    } else {
                        0
                    };
                    cur[k] += bytes;
                    cur[k + 1] += 1;
                }
                Op::Irecv { from, bytes, .. } => {
                    let k = if nodes[*from as usize] == nodes[me] {
                        6
                    } else {
                        2
                    };
                    cur[k] += bytes;
                    cur[k + 1] += 1;
                }
                Op::Exchange(t) => {
                    cur[0] += t.out_bytes;
                    cur[1] += t.out_msgs;
                    cur[2] += t.in_bytes;
                    cur[3] += t.in_msgs;
                    cur[4] += t.local_out_bytes;
                    cur[5] += t.local_out_msgs;
                    cur[6] += t.local_in_bytes;
                    // Messages received on the node = messages sent on it (summed below).
                }
                _ => {}
            }
        }
        out
    }

    /// Every op but the exchange's: Isend, Irecv, WaitAll and Exchange, each alone in its call
    /// (Begin, op, End), go with their call.
    fn without_exchange(p: &[Op]) -> Vec<Op> {
        let mut out: Vec<Op> = Vec::new();
        let mut skip_end = false;
        for o in p {
            match o {
                Op::Isend { .. } | Op::Irecv { .. } | Op::WaitAll { .. } | Op::Exchange(_) => {
                    assert!(matches!(out.pop(), Some(Op::Begin(_))));
                    skip_end = true;
                }
                Op::End if skip_end => skip_end = false,
                _ => out.push(o.clone()),
            }
        }
        out
    }

    /// Issue 4: dense exchanges are aggregated with the bytes and counts of the messages they
    /// replace; the rest of the ops is the message path's.
    #[test]
    fn aggregated_exchange_carries_the_message_paths_totals() {
        let sys = system(); // 4 nodes × 4 ranks: 4 aggregators, 12 ranks on other nodes each
        let nodes = rank_nodes(&sys, 16).unwrap();
        let mut h = Hints::from_system(&sys);
        h.mpiio.cb_buffer_size = 64 << 10;
        h.mpiio.exchange_piece_ns = 3;
        let pats = hpio(16, 32, 128, 1024);
        for kind in [IoKind::Write, IoKind::Read] {
            let func = match kind {
                IoKind::Write => calls::MPI_FILE_WRITE_ALL,
                IoKind::Read => calls::MPI_FILE_READ_ALL,
            };
            let req = Request {
                func,
                file: 0,
                kind,
            };
            h.mpiio.aggregate_exchange_above = 0;
            let msgs = collective(&req, &pats, &nodes, &h, 1, &[]);
            assert!(msgs.iter().flatten().all(|o| !matches!(o, Op::Exchange(_))));
            // 16 ranks × 4 aggregators = 64 pairs > 63: aggregated; > 64: not.
            h.mpiio.aggregate_exchange_above = 64;
            assert_eq!(collective(&req, &pats, &nodes, &h, 1, &[]), msgs);
            h.mpiio.aggregate_exchange_above = 63;
            let agg = collective(&req, &pats, &nodes, &h, 1, &[]);
            let exchanges: Vec<usize> = agg
                .iter()
                .map(|p| p.iter().filter(|o| matches!(o, Op::Exchange(_))).count())
                .collect();
            let cycles = plan(&pats, &nodes, &h).unwrap().cycles();
            assert!(cycles > 1);
            assert_eq!(exchanges, vec![1 + cycles; 16], "{kind:?}");
            for (r, (m, a)) in msgs.iter().zip(&agg).enumerate() {
                assert!(!a.iter().any(|o| matches!(
                    o,
                    Op::Isend { .. } | Op::Irecv { .. } | Op::WaitAll { .. }
                )));
                let (mut sm, mut sa) = (segments(m, r, &nodes), segments(a, r, &nodes));
                assert_eq!(sm.len(), sa.len(), "rank {r}");
                for x in sm.iter_mut() {
                    x[7] = 0; // the aggregated side does not count messages received on the node
                }
                for x in sa.iter_mut() {
                    x[7] = 0;
                }
                assert_eq!(sm, sa, "rank {r} {kind:?}");
                assert_eq!(
                    without_exchange(m),
                    without_exchange(a),
                    "rank {r} {kind:?}"
                );
                let b = a.iter().filter(|o| matches!(o, Op::Begin(_))).count();
                let e = a.iter().filter(|o| matches!(o, Op::End)).count();
                assert_eq!(b, e);
            }
            // The aggregated call: MPI_Alltoallv of the bytes sent + received; largest message.
            let data = |p: &[Op]| -> Vec<(u64, u64)> {
                p.windows(2)
                    .filter_map(|w| match (&w[0], &w[1]) {
                        (Op::Begin(c), Op::Exchange(t)) if c.func == calls::MPI_ALLTOALLV => {
                            Some((c.size, t.largest))
                        }
                        _ => None,
                    })
                    .collect()
            };
            let message_bytes = |p: &[Op]| -> Vec<u64> {
                p.iter()
                    .filter_map(|o| match o {
                        Op::Isend { bytes, .. } | Op::Irecv { bytes, .. } => Some(*bytes),
                        _ => None,
                    })
                    .collect()
            };
            let sent_recv = |p: &[Op]| -> u64 { message_bytes(p).iter().sum() };
            let biggest = |p: &[Op]| -> u64 { message_bytes(p).into_iter().max().unwrap_or(0) };
            for r in 0..16 {
                let d = data(&agg[r]);
                assert_eq!(d.iter().map(|x| x.0).sum::<u64>(), sent_recv(&msgs[r]));
                assert_eq!(d.iter().map(|x| x.1).max().unwrap(), biggest(&msgs[r]));
            }
            // Both run; the aggregated exchanges stand for the same messages.
            let run = |programs: Vec<Vec<Op>>| {
                let job = crate::program::Job {
                    programs,
                    files: vec!["/f".into()],
                    description: String::new(),
                };
                crate::engine::run(&sys, &job, 1, &mut crate::engine::testutil::Log::default())
                    .unwrap()
            };
            let (sm, sa) = (run(msgs), run(agg));
            assert_eq!(
                (sa.messages, sa.exchanges),
                (sm.messages, 1 + cycles as u64)
            );
            assert_eq!(sm.exchanges, 0);
        }
        // Overlap keeps the messages.
        h.mpiio.overlap_exchange = true;
        let req = Request {
            func: calls::MPI_FILE_WRITE_ALL,
            file: 0,
            kind: IoKind::Write,
        };
        let ov = collective(&req, &pats, &nodes, &h, 1, &[]);
        assert!(ov.iter().flatten().all(|o| !matches!(o, Op::Exchange(_))));
    }

    /// The window scan finds the ranks through their sorted extents: ranks out of file order,
    /// blocks (few ranks per window) and stripe-aligned windows of many ranges give the
    /// messages of the all-pairs definition, in rank order.
    #[test]
    fn window_scan_matches_all_pairs() {
        let sys = system();
        let nodes = rank_nodes(&sys, 16).unwrap();
        // Rank r writes block 15 − r (file order reversed), with a hole in its middle.
        let pats: Vec<Pattern> = (0..16u64)
            .map(|r| {
                Pattern::Runs(super::super::Runs::new(vec![
                    ((15 - r) * 1000, 300),
                    ((15 - r) * 1000 + 600, 500),
                ]))
            })
            .collect();
        for fd in [FileDomain::Even, FileDomain::StripeAligned] {
            let mut h = Hints::from_system(&sys);
            h.mpiio.cb_write = Toggle::Enable;
            h.mpiio.file_domain = fd;
            h.stripe_size = 700;
            h.mpiio.cb_buffer_size = 1400;
            h.mpiio.aggregate_exchange_above = 0;
            let req = Request {
                func: calls::MPI_FILE_WRITE_ALL,
                file: 0,
                kind: IoKind::Write,
            };
            let progs = collective(&req, &pats, &nodes, &h, 1, &[]);
            let p = plan(&pats, &nodes, &h).unwrap();
            // Expected: per cycle, per aggregator, per rank in rank order, bytes in the window.
            let mut want: Vec<Vec<(Rank, u64)>> = vec![Vec::new(); 16];
            for m in 0..p.cycles() {
                for (a, wins) in p.windows.iter().enumerate() {
                    let Some(win) = wins.get(m) else { continue };
                    for (r, pat) in pats.iter().enumerate() {
                        let b: u64 = win.iter().map(|&(o, l)| pat.bytes_in(o, o + l)).sum();
                        if b > 0 {
                            want[r].push((p.aggregators[a], b));
                        }
                    }
                }
            }
            for r in 0..16 {
                // Data sends: those after the offset-list exchange's Allreduce.
                let after = progs[r]
                    .iter()
                    .position(|o| matches!(o, Op::Begin(c) if c.func == calls::MPI_ALLREDUCE))
                    .unwrap();
                let sends: Vec<(Rank, u64)> = progs[r][after..]
                    .iter()
                    .filter_map(|o| match o {
                        Op::Isend { to, bytes, .. } => Some((*to, *bytes)),
                        _ => None,
                    })
                    .collect();
                assert_eq!(sends, want[r], "{fd:?} rank {r}");
            }
        }
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
            h.mpiio.cb_buffer_size = cb;
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
        h.mpiio.cb_buffer_size = 4 << 20;
        assert_eq!(plan(&pats, &nodes, &h).unwrap().cycles(), 5);
        h.mpiio.cb_buffer_size = 16 << 20;
        assert_eq!(plan(&pats, &nodes, &h).unwrap().cycles(), 2);
        h.mpiio.cb_per_node = 0; // "*:*": every rank aggregates, 5 MiB each
        assert_eq!(plan(&pats, &nodes, &h).unwrap().cycles(), 1);
        h.mpiio.cb_buffer_size = 1 << 20;
        assert_eq!(plan(&pats, &nodes, &h).unwrap().cycles(), 5);
    }

    #[test]
    fn stripe_aligned_cycles() {
        let sys = system();
        let mut h = Hints::from_system(&sys);
        h.mpiio.file_domain = FileDomain::StripeAligned;
        h.stripe_size = 1 << 20;
        h.mpiio.cb_buffer_size = 4 << 20;
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
        h.mpiio.cb_buffer_size = 1000;
        assert_eq!(plan(&pats, &nodes, &h).unwrap().cycles(), 32);
    }

    /// Issue 4: aggregator choice for blocked and round-robin placement and cb_per_node.
    #[test]
    fn aggregator_choice() {
        let sys = system(); // 4 nodes × 4 ranks, block placement
        let nodes = rank_nodes(&sys, 16).unwrap();
        let mut h = Hints::from_system(&sys);
        assert_eq!(aggregators(&nodes, &h), vec![0, 4, 8, 12]);
        h.mpiio.cb_per_node = 2;
        assert_eq!(aggregators(&nodes, &h), vec![0, 1, 4, 5, 8, 9, 12, 13]);
        h.mpiio.aggregator_placement = AggregatorPlacement::RoundRobin;
        assert_eq!(aggregators(&nodes, &h), vec![0, 4, 8, 12, 1, 5, 9, 13]);
        h.mpiio.cb_nodes = 3;
        assert_eq!(aggregators(&nodes, &h), vec![0, 4, 8]);
        h.mpiio.aggregator_placement = AggregatorPlacement::Blocked;
        assert_eq!(aggregators(&nodes, &h), vec![0, 1, 4]);
        h.mpiio.cb_nodes = 0;
        h.mpiio.cb_per_node = 0;
        assert_eq!(aggregators(&nodes, &h).len(), 16);
        // Round-robin rank placement: node of rank r is r mod 4.
        let mut sys2 = sys.clone();
        sys2.nodes.placement = Placement::RoundRobin;
        let nodes = rank_nodes(&sys2, 8).unwrap();
        let mut h = Hints::from_system(&sys2);
        h.mpiio.cb_per_node = 2;
        assert_eq!(aggregators(&nodes, &h), vec![0, 4, 1, 5, 2, 6, 3, 7]);
        h.mpiio.aggregator_placement = AggregatorPlacement::RoundRobin;
        assert_eq!(aggregators(&nodes, &h), vec![0, 1, 2, 3, 4, 5, 6, 7]);
    }

    /// Issue 4 (accuracy): ROMIO allocates the collective buffer at every call, so the
    /// aggregator fills the first window's span of fresh memory before its first access; the
    /// later cycles reuse the pages.
    #[test]
    fn first_window_fills_fresh_memory() {
        let sys = system();
        let mut h = Hints::from_system(&sys);
        h.mpiio.call_overhead_ns = 0;
        h.mpiio.cb_buffer_size = 256 << 10;
        h.fresh_memory_bandwidth = 1e9;
        let progs = hpio4_write_all(&h);
        // 3 cycles over 655232 bytes; the first window is 256 KiB: 262144 ns at 1 GB/s.
        assert_eq!(computes(&progs[0]), vec![262_144]);
        let first_read = progs[0]
            .iter()
            .position(|o| matches!(o, Op::Io { .. }))
            .unwrap();
        assert!(matches!(
            progs[0][first_read - 2],
            Op::Compute { ns: 262_144 }
        ));
        assert!(computes(&progs[1]).is_empty());
    }

    /// The programs of an MPI_File_write_all of HPIO's pattern (4 ranks on one node, 1024
    /// regions of 32 bytes, 128 apart) under `h`.
    fn hpio4_write_all(h: &Hints) -> Vec<Vec<Op>> {
        let req = Request {
            func: calls::MPI_FILE_WRITE_ALL,
            file: 0,
            kind: IoKind::Write,
        };
        collective(&req, &hpio(4, 32, 128, 1024), &[0; 4], h, 3, &[None; 4])
    }

    /// The durations of a program's Compute ops, in order.
    fn computes(p: &[Op]) -> Vec<u64> {
        p.iter()
            .filter_map(|o| match o {
                Op::Compute { ns } => Some(*ns),
                _ => None,
            })
            .collect()
    }

    /// Issue 4 (accuracy): the aggregator pays exchange_piece_ns per piece it unpacks, after
    /// its Waitall; the other ranks pay nothing.
    #[test]
    fn exchange_pieces_cost_the_aggregator_after_the_waitall() {
        let sys = system();
        let mut h = Hints::from_system(&sys);
        h.mpiio.call_overhead_ns = 0;
        h.mpiio.exchange_piece_ns = 7;
        let progs = hpio4_write_all(&h);
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
        let io = io_ops(&progs[0]);
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
        h.mpiio.cb_write = Toggle::Enable;
        let progs = collective(&req, &pats, &nodes, &h, 1, &[]);
        assert_eq!(count_io(&progs[0], IoKind::Write), 1);
        assert_eq!(count_io(&progs[1], IoKind::Write), 0);
        assert_eq!(count_io(&progs[0], IoKind::Read), 0, "no holes, no read");
    }

    #[test]
    fn overlap_keeps_every_op() {
        let sys = system();
        let mut h = Hints::from_system(&sys);
        h.mpiio.cb_buffer_size = 64 << 10;
        let pats = hpio(4, 32, 128, 1024);
        let nodes = vec![0; 4];
        let req = Request {
            func: calls::MPI_FILE_WRITE_ALL,
            file: 0,
            kind: IoKind::Write,
        };
        let a = collective(&req, &pats, &nodes, &h, 1, &[]);
        h.mpiio.overlap_exchange = true;
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
