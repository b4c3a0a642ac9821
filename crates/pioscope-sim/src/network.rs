//! Flow-level network sharing: links with capacities, flows crossing up to three of them, and
//! max-min fair rates by progressive filling.
//!
//! Rates are recomputed only for the connected component of flows that share a link (directly
//! or through other flows) with a flow that started or finished, and only when simulated time
//! is about to advance: all the flows an all-to-all starts at one instant cost one
//! recomputation, not one each. A flow whose rate did not change keeps its completion event;
//! one whose rate changed gets a new generation, which invalidates the event already queued.
//!
//! Progressive filling: every unfrozen flow's rate rises together; the first constraint to
//! saturate (the link with the smallest remaining capacity per unfrozen flow, or a flow's own
//! cap) freezes its flows at that level. A min-heap of link shares with lazy entries (a link's
//! share only grows as flows freeze elsewhere, so a stale entry is merely early: it is
//! refreshed when popped) makes one recomputation O(flows + links log links).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Index of a link.
pub type LinkId = u32;
/// Index of a flow (reused once the flow finished).
pub type FlowId = u32;

const NOT_QUEUED: u32 = u32::MAX;

/// Most links one flow crosses (source NIC up, destination NIC down, the switch).
pub const MAX_LINKS: usize = 3;

#[derive(Clone, Debug)]
struct Link {
    capacity: f64,
    flows: Vec<FlowId>,
    // Scratch for one recomputation.
    mark: u32,
    rem: f64,
    unfrozen: u32,
    ver: u32,
}

#[derive(Clone, Debug)]
struct Flow {
    links: [LinkId; MAX_LINKS],
    /// Position of this flow in each of its links' `flows`.
    pos: [u32; MAX_LINKS],
    nlinks: u8,
    /// The flow's own rate ceiling (bytes/s; infinity = none).
    cap: f64,
    /// Bytes left at `last_ns`.
    remaining: f64,
    rate: f64,
    last_ns: u64,
    finish_ns: u64,
    gen: u32,
    live: bool,
    /// Position in the completion heap (NOT_QUEUED before its first rate).
    hpos: u32,
    token: u64,
    // Scratch for one recomputation.
    mark: u32,
    frozen: bool,
    new_rate: f64,
}

/// A rescheduled flow: its completion event is now `finish_ns`, valid while `gen` is current.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reschedule {
    /// The flow.
    pub flow: FlowId,
    /// Its generation (pass to [`FlowNet::is_current`] when the event fires).
    pub gen: u32,
    /// When it completes at its new rate.
    pub finish_ns: u64,
}

/// Heap entry of one recomputation: a link's fair share or a flow's cap.
#[derive(Clone, Copy, Debug)]
struct Entry {
    value: f64,
    is_flow: bool,
    id: u32,
    ver: u32,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    /// Reversed, so that `BinaryHeap` pops the smallest value first (ties: links before
    /// flows, lower ids first — deterministic).
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .value
            .total_cmp(&self.value)
            .then(other.is_flow.cmp(&self.is_flow))
            .then(other.id.cmp(&self.id))
    }
}

/// The flows and links of one simulation.
#[derive(Debug, Default)]
pub struct FlowNet {
    links: Vec<Link>,
    flows: Vec<Flow>,
    free: Vec<FlowId>,
    /// Links a flow started or finished on since the last `settle`.
    dirty: Vec<LinkId>,
    epoch: u32,
    // Scratch, kept to avoid allocating per recomputation.
    stack: Vec<LinkId>,
    comp_links: Vec<LinkId>,
    comp_flows: Vec<FlowId>,
    heap: BinaryHeap<Entry>,
    /// Live flows with a rate, as a binary min-heap on (finish_ns, flow id) with each flow's
    /// position kept in the flow: a rate change moves the flow in place, so no stale
    /// completion piles up however often a large component is recomputed.
    done: Vec<FlowId>,
    /// Recomputations done (a figure for benchmarks).
    pub recomputations: u64,
}

impl FlowNet {
    /// An empty network.
    pub fn new() -> FlowNet {
        FlowNet::default()
    }

    /// Adds a link of `capacity` bytes/s.
    pub fn add_link(&mut self, capacity: f64) -> LinkId {
        self.links.push(Link { capacity, flows: Vec::new(), mark: 0, rem: 0.0, unfrozen: 0, ver: 0 });
        (self.links.len() - 1) as LinkId
    }

    /// Starts a flow of `bytes` over `links` (at most [`MAX_LINKS`]) at `now`, its rate capped
    /// at `cap` (infinity = no cap of its own). Its rate and completion come from the next
    /// [`settle`](Self::settle). `token` is the caller's, returned by [`finish`](Self::finish).
    pub fn start(&mut self, now: u64, links: &[LinkId], bytes: u64, cap: f64, token: u64) -> FlowId {
        debug_assert!(!links.is_empty() && links.len() <= MAX_LINKS);
        let mut l = [0; MAX_LINKS];
        l[..links.len()].copy_from_slice(links);
        let flow = Flow {
            links: l,
            pos: [0; MAX_LINKS],
            nlinks: links.len() as u8,
            cap,
            remaining: bytes as f64,
            rate: 0.0,
            last_ns: now,
            finish_ns: u64::MAX,
            gen: 0,
            live: true,
            hpos: NOT_QUEUED,
            token,
            mark: 0,
            frozen: false,
            new_rate: 0.0,
        };
        let id = match self.free.pop() {
            Some(id) => {
                let gen = self.flows[id as usize].gen.wrapping_add(1);
                self.flows[id as usize] = Flow { gen, ..flow };
                id
            }
            None => {
                self.flows.push(flow);
                (self.flows.len() - 1) as FlowId
            }
        };
        for (i, &l) in links.iter().enumerate() {
            let link = &mut self.links[l as usize];
            self.flows[id as usize].pos[i] = link.flows.len() as u32;
            link.flows.push(id);
            self.dirty.push(l);
        }
        id
    }

    /// Whether a completion event for (`flow`, `gen`) is still the flow's current one.
    pub fn is_current(&self, flow: FlowId, gen: u32) -> bool {
        self.flows.get(flow as usize).is_some_and(|f| f.live && f.gen == gen)
    }

    /// When the next flow completes, if any has a rate.
    pub fn next_finish(&self) -> Option<u64> {
        self.done.first().map(|&f| self.flows[f as usize].finish_ns)
    }

    /// The flow completing next (ties: lowest id), if any has a rate.
    pub fn next_flow(&self) -> Option<FlowId> {
        self.done.first().copied()
    }

    /// Removes a flow (at its completion); returns its token.
    pub fn finish(&mut self, id: FlowId) -> u64 {
        self.heap_remove(id);
        let f = &mut self.flows[id as usize];
        f.live = false;
        f.gen = f.gen.wrapping_add(1);
        let (links, pos, n, token) = (f.links, f.pos, f.nlinks as usize, f.token);
        for i in 0..n {
            let link = &mut self.links[links[i] as usize];
            let p = pos[i] as usize;
            link.flows.swap_remove(p);
            if p < link.flows.len() {
                let moved = link.flows[p] as usize;
                let m = &mut self.flows[moved];
                for j in 0..m.nlinks as usize {
                    if m.links[j] == links[i] {
                        m.pos[j] = p as u32;
                    }
                }
            }
            self.dirty.push(links[i]);
        }
        self.free.push(id);
        token
    }

    /// Whether flows started or finished since the last `settle`.
    pub fn needs_settle(&self) -> bool {
        !self.dirty.is_empty()
    }

    /// Live flows.
    pub fn live_flows(&self) -> usize {
        self.flows.len() - self.free.len()
    }

    /// Recomputes the rates of the flows connected to the links touched since the last call,
    /// at time `now`, and appends to `out` every flow whose completion time changed.
    pub fn settle(&mut self, now: u64, out: &mut Vec<Reschedule>) {
        if self.dirty.is_empty() {
            return;
        }
        self.recomputations += 1;
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            // Marks from 2^32 recomputations ago could collide: clear them.
            self.links.iter_mut().for_each(|l| l.mark = 0);
            self.flows.iter_mut().for_each(|f| f.mark = 0);
            self.epoch = 1;
        }
        let epoch = self.epoch;
        self.collect_component(epoch);
        self.fill();
        // Apply: advance and reschedule only the flows whose rate changed.
        for k in 0..self.comp_flows.len() {
            let id = self.comp_flows[k];
            let f = &mut self.flows[id as usize];
            let rate = f.new_rate.max(1.0);
            if rate == f.rate {
                continue;
            }
            if f.rate > 0.0 {
                let elapsed = now.saturating_sub(f.last_ns) as f64 * 1e-9;
                f.remaining = (f.remaining - f.rate * elapsed).max(0.0);
            }
            f.last_ns = now;
            f.rate = rate;
            f.gen = f.gen.wrapping_add(1);
            // + 0.5 then truncate: round() for a non-negative value, without the libm call.
            f.finish_ns = now + (f.remaining * 1e9 / rate + 0.5) as u64;
            out.push(Reschedule { flow: id, gen: f.gen, finish_ns: f.finish_ns });
            self.heap_update(id);
        }
    }

    fn key(&self, f: FlowId) -> (u64, FlowId) {
        (self.flows[f as usize].finish_ns, f)
    }

    fn heap_set(&mut self, i: usize, f: FlowId) {
        self.done[i] = f;
        self.flows[f as usize].hpos = i as u32;
    }

    /// Puts flow `f` (new finish time) in its place in the completion heap.
    fn heap_update(&mut self, f: FlowId) {
        let mut i = match self.flows[f as usize].hpos {
            NOT_QUEUED => {
                self.done.push(f);
                self.done.len() - 1
            }
            p => p as usize,
        };
        let k = self.key(f);
        // Up.
        while i > 0 {
            let parent = (i - 1) / 2;
            let pf = self.done[parent];
            if self.key(pf) <= k {
                break;
            }
            self.heap_set(i, pf);
            i = parent;
        }
        // Down.
        loop {
            let l = 2 * i + 1;
            if l >= self.done.len() {
                break;
            }
            let r = l + 1;
            let c = if r < self.done.len() && self.key(self.done[r]) < self.key(self.done[l]) { r } else { l };
            let cf = self.done[c];
            if self.key(cf) >= k {
                break;
            }
            self.heap_set(i, cf);
            i = c;
        }
        self.heap_set(i, f);
    }

    /// Takes flow `f` out of the completion heap.
    fn heap_remove(&mut self, f: FlowId) {
        let p = self.flows[f as usize].hpos;
        if p == NOT_QUEUED {
            return;
        }
        self.flows[f as usize].hpos = NOT_QUEUED;
        let last = self.done.pop().expect("heap holds f");
        if last != f {
            self.heap_set(p as usize, last);
            self.heap_update(last);
        }
    }

    /// Fills `comp_links`/`comp_flows` with everything reachable from the dirty links.
    fn collect_component(&mut self, epoch: u32) {
        self.comp_links.clear();
        self.comp_flows.clear();
        self.stack.clear();
        for &l in &self.dirty {
            let link = &mut self.links[l as usize];
            if link.mark != epoch {
                link.mark = epoch;
                self.stack.push(l);
            }
        }
        self.dirty.clear();
        while let Some(l) = self.stack.pop() {
            self.comp_links.push(l);
            let n = self.links[l as usize].flows.len();
            for k in 0..n {
                let fid = self.links[l as usize].flows[k];
                let f = &mut self.flows[fid as usize];
                if f.mark == epoch {
                    continue;
                }
                f.mark = epoch;
                f.frozen = false;
                self.comp_flows.push(fid);
                let (fl, nl) = (f.links, f.nlinks as usize);
                for &other in &fl[..nl] {
                    let link = &mut self.links[other as usize];
                    if link.mark != epoch {
                        link.mark = epoch;
                        self.stack.push(other);
                    }
                }
            }
        }
    }

    /// Progressive filling over the collected component: sets every flow's `new_rate`.
    fn fill(&mut self) {
        self.heap.clear();
        for &l in &self.comp_links {
            let link = &mut self.links[l as usize];
            link.rem = link.capacity;
            link.unfrozen = link.flows.len() as u32;
            link.ver = 0;
            if link.unfrozen > 0 {
                self.heap.push(Entry {
                    value: link.rem / link.unfrozen as f64,
                    is_flow: false,
                    id: l,
                    ver: 0,
                });
            }
        }
        for &f in &self.comp_flows {
            let cap = self.flows[f as usize].cap;
            if cap.is_finite() {
                self.heap.push(Entry { value: cap, is_flow: true, id: f, ver: 0 });
            }
        }
        while let Some(e) = self.heap.pop() {
            if e.is_flow {
                if self.flows[e.id as usize].frozen {
                    continue;
                }
                self.freeze(e.id, e.value);
            } else {
                let link = &self.links[e.id as usize];
                if link.unfrozen == 0 {
                    continue;
                }
                if link.ver != e.ver {
                    // Stale: flows froze elsewhere since, so its share grew. Queue the current
                    // share (freeze does not, so a link is re-queued once per pop, not once
                    // per flow frozen on it).
                    self.heap.push(Entry {
                        value: link.rem / link.unfrozen as f64,
                        is_flow: false,
                        id: e.id,
                        ver: link.ver,
                    });
                    continue;
                }
                let share = e.value;
                for k in 0..self.links[e.id as usize].flows.len() {
                    let fid = self.links[e.id as usize].flows[k];
                    if !self.flows[fid as usize].frozen {
                        self.freeze(fid, share);
                    }
                }
            }
        }
    }

    /// Freezes flow `fid` at `rate`, taking it off every link. The links' heap entries become
    /// stale (lower than their share now) and are refreshed when popped.
    fn freeze(&mut self, fid: FlowId, rate: f64) {
        let f = &mut self.flows[fid as usize];
        f.frozen = true;
        f.new_rate = rate;
        let (fl, nl) = (f.links, f.nlinks as usize);
        for &l in &fl[..nl] {
            let link = &mut self.links[l as usize];
            link.rem = (link.rem - rate).max(0.0);
            link.unfrozen -= 1;
            link.ver += 1;
        }
    }

    /// Current rate of a flow (bytes/s), for tests.
    pub fn rate(&self, flow: FlowId) -> f64 {
        self.flows[flow as usize].rate
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settle(net: &mut FlowNet, now: u64) -> Vec<Reschedule> {
        let mut out = Vec::new();
        net.settle(now, &mut out);
        // The order is deterministic but follows the component walk: sort for the asserts.
        out.sort_by_key(|r| r.flow);
        out
    }

    #[test]
    fn one_flow_takes_the_link() {
        let mut net = FlowNet::new();
        let a = net.add_link(1e9);
        let b = net.add_link(1e9);
        let f = net.start(0, &[a, b], 1_000_000, f64::INFINITY, 7);
        let r = settle(&mut net, 0);
        assert_eq!(r, vec![Reschedule { flow: f, gen: 1, finish_ns: 1_000_000 }]);
        assert_eq!(net.finish(f), 7);
    }

    #[test]
    fn n_flows_share_equally_and_finish_together() {
        let mut net = FlowNet::new();
        let down = net.add_link(1e9);
        let flows: Vec<FlowId> = (0..4)
            .map(|_| {
                let up = net.add_link(1e9);
                net.start(0, &[up, down], 1_000_000, f64::INFINITY, 0)
            })
            .collect();
        let r = settle(&mut net, 0);
        assert_eq!(r.len(), 4);
        for (x, f) in r.iter().zip(&flows) {
            assert_eq!(x.flow, *f);
            assert_eq!(x.finish_ns, 4_000_000);
            assert_eq!(net.rate(*f), 2.5e8);
        }
    }

    #[test]
    fn classic_max_min_bottleneck_elsewhere() {
        // Link A (10 MB/s) carries flows 1, 2, 3; flow 3 also crosses link B (2 MB/s).
        // Max-min: flow 3 gets 2, flows 1 and 2 split the remaining 8: 4 each.
        let mut net = FlowNet::new();
        let a = net.add_link(10e6);
        let b = net.add_link(2e6);
        let f1 = net.start(0, &[a], 4_000_000, f64::INFINITY, 1);
        let f2 = net.start(0, &[a], 4_000_000, f64::INFINITY, 2);
        let f3 = net.start(0, &[a, b], 4_000_000, f64::INFINITY, 3);
        let r = settle(&mut net, 0);
        assert_eq!((net.rate(f1), net.rate(f2), net.rate(f3)), (4e6, 4e6, 2e6));
        let fin: Vec<u64> = r.iter().map(|x| x.finish_ns).collect();
        assert_eq!(fin, vec![1_000_000_000, 1_000_000_000, 2_000_000_000]);
        // When flows 1 and 2 finish at 1 s, flow 3 (2 MB left) is still held at 2 MB/s by B:
        // its rate does not change and its event stays.
        net.finish(f1);
        net.finish(f2);
        assert!(settle(&mut net, 1_000_000_000).is_empty());
        assert!(net.is_current(f3, 1));
    }

    #[test]
    fn a_finishing_flow_speeds_up_the_others() {
        // Two flows share 1 MB/s; the first has 1 MB, the second 3 MB. Both go at 0.5 MB/s
        // until 2 s, then the second has 2 MB left at 1 MB/s: done at 4 s.
        let mut net = FlowNet::new();
        let a = net.add_link(1e6);
        let f1 = net.start(0, &[a], 1_000_000, f64::INFINITY, 1);
        let f2 = net.start(0, &[a], 3_000_000, f64::INFINITY, 2);
        let r = settle(&mut net, 0);
        assert_eq!(r[0].finish_ns, 2_000_000_000);
        assert_eq!(r[1].finish_ns, 6_000_000_000);
        net.finish(f1);
        let r = settle(&mut net, 2_000_000_000);
        assert_eq!(r, vec![Reschedule { flow: f2, gen: 2, finish_ns: 4_000_000_000 }]);
        assert!(!net.is_current(f2, 1));
    }

    #[test]
    fn flow_cap_leaves_its_share_to_others() {
        let mut net = FlowNet::new();
        let a = net.add_link(9e6);
        let f1 = net.start(0, &[a], 1, 1e6, 1);
        let f2 = net.start(0, &[a], 1, f64::INFINITY, 2);
        settle(&mut net, 0);
        assert_eq!((net.rate(f1), net.rate(f2)), (1e6, 8e6));
    }

    #[test]
    fn untouched_components_are_not_recomputed() {
        let mut net = FlowNet::new();
        let a = net.add_link(1e6);
        let b = net.add_link(1e6);
        let f1 = net.start(0, &[a], 1_000_000, f64::INFINITY, 1);
        settle(&mut net, 0);
        let f2 = net.start(10, &[b], 1_000_000, f64::INFINITY, 2);
        let r = settle(&mut net, 10);
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].flow, f2);
        assert!(net.is_current(f1, 1));
    }
}
