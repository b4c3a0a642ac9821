//! Flow-level network sharing: links with capacities, flows crossing up to three of them, and
//! max-min fair rates by progressive filling.
//!
//! Flows over the same links with the same cap always get the same max-min rate, so they are
//! kept together in a *bundle* (e.g. the 16 stripes a client writes to one server): the
//! bundle is one participant of the filling, weighted by its flow count, and serves its flows
//! as a processor-sharing queue with a virtual clock (bytes served per flow since the bundle
//! began). A flow ends when the clock reaches its start value plus its bytes, so a rate change
//! touches one bundle, not each of its flows: a recomputation costs O(bundles), not O(flows).
//!
//! Rates are recomputed only for the connected component of bundles that share a link
//! (directly or through other bundles) with a flow that started or finished, and only when
//! simulated time is about to advance: all the flows an all-to-all starts at one instant cost
//! one recomputation, not one each. A bundle whose rate did not change keeps its completion.
//!
//! Progressive filling: every unfrozen bundle's per-flow rate rises together; the first
//! constraint to saturate (the link with the smallest remaining capacity per unfrozen flow,
//! or a bundle's own cap) freezes its bundles at that level. A min-heap of link shares with
//! lazy entries (a link's share only grows as flows freeze elsewhere, so a stale entry is
//! merely early: it is refreshed when popped) makes one recomputation
//! O(bundles + links log links).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use rustc_hash::FxHashMap;

/// Index of a link.
pub type LinkId = u32;
/// Index of a flow (reused once the flow finished).
pub type FlowId = u32;
/// Index of a bundle (reused once its last flow finished).
type BundleId = u32;

const NOT_QUEUED: u32 = u32::MAX;

/// Most links one flow crosses (source NIC up, destination NIC down, the switch).
pub const MAX_LINKS: usize = 3;

#[derive(Clone, Debug)]
struct Link {
    capacity: f64,
    bundles: Vec<BundleId>,
    // Scratch for one recomputation.
    mark: u32,
    rem: f64,
    /// Unfrozen flows (bundles weighted by their flow count).
    unfrozen: u64,
    ver: u32,
}

/// Flows with the same links and cap: one max-min participant, a processor-sharing queue.
#[derive(Clone, Debug)]
struct Bundle {
    links: [LinkId; MAX_LINKS],
    /// Position of this bundle in each of its links' `bundles`.
    pos: [u32; MAX_LINKS],
    nlinks: u8,
    /// The per-flow rate ceiling (bytes/s; infinity = none).
    cap: f64,
    /// Live flows.
    n: u32,
    /// Members as a min-heap on (target, flow id); finished members leave lazily.
    members: BinaryHeap<Member>,
    /// Virtual clock: bytes served per flow, at `v_ns`.
    v: f64,
    v_ns: u64,
    /// Per-flow rate (0 before the first recomputation).
    rate: f64,
    /// When the head member completes (u64::MAX without a rate).
    finish_ns: u64,
    /// The head member.
    head: FlowId,
    /// Position in the completion heap.
    hpos: u32,
    // Scratch for one recomputation.
    mark: u32,
    frozen: bool,
    new_rate: f64,
}

/// A member of a bundle: done when the bundle's clock reaches `target`.
#[derive(Clone, Copy, Debug)]
struct Member {
    target: f64,
    flow: FlowId,
}

impl PartialEq for Member {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Member {}
impl PartialOrd for Member {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Member {
    /// Reversed: the heap pops the least (target, flow id) first.
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .target
            .total_cmp(&self.target)
            .then(other.flow.cmp(&self.flow))
    }
}

#[derive(Clone, Copy, Debug)]
struct Flow {
    bundle: BundleId,
    target: f64,
    gen: u32,
    live: bool,
    token: u64,
}

/// A rescheduled bundle: its next completion (flow `flow`) is now `finish_ns`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reschedule {
    /// The flow completing first in the bundle.
    pub flow: FlowId,
    /// Its generation (pass to [`FlowNet::is_current`]).
    pub gen: u32,
    /// When it completes at the new rate.
    pub finish_ns: u64,
}

/// Heap entry of one recomputation: a link's fair share or a bundle's cap.
#[derive(Clone, Copy, Debug)]
struct Entry {
    value: f64,
    is_bundle: bool,
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
    /// bundles, lower ids first — deterministic).
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .value
            .total_cmp(&self.value)
            .then(other.is_bundle.cmp(&self.is_bundle))
            .then(other.id.cmp(&self.id))
    }
}

/// Bundle identity: links, how many, the cap's bits.
type BundleKey = ([LinkId; MAX_LINKS], u8, u64);

/// The flows and links of one simulation.
#[derive(Debug, Default)]
pub struct FlowNet {
    links: Vec<Link>,
    flows: Vec<Flow>,
    free: Vec<FlowId>,
    bundles: Vec<Bundle>,
    bundle_free: Vec<BundleId>,
    by_key: FxHashMap<BundleKey, BundleId>,
    live: usize,
    /// Links a flow started or finished on since the last `settle`.
    dirty: Vec<LinkId>,
    epoch: u32,
    // Scratch, kept to avoid allocating per recomputation.
    stack: Vec<LinkId>,
    comp_links: Vec<LinkId>,
    comp_bundles: Vec<BundleId>,
    heap: BinaryHeap<Entry>,
    /// Bundles with a rate and flows, as a binary min-heap on (finish_ns, head flow id) with
    /// each bundle's position kept in the bundle: a rate change moves it in place.
    done: Vec<BundleId>,
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
        self.links.push(Link {
            capacity,
            bundles: Vec::new(),
            mark: 0,
            rem: 0.0,
            unfrozen: 0,
            ver: 0,
        });
        (self.links.len() - 1) as LinkId
    }

    /// Starts a flow of `bytes` over `links` (at most [`MAX_LINKS`]) at `now`, its rate capped
    /// at `cap` (infinity = no cap of its own). Its rate comes from the next
    /// [`settle`](Self::settle). `token` is the caller's, returned by [`finish`](Self::finish).
    pub fn start(
        &mut self,
        now: u64,
        links: &[LinkId],
        bytes: u64,
        cap: f64,
        token: u64,
    ) -> FlowId {
        debug_assert!(!links.is_empty() && links.len() <= MAX_LINKS);
        let mut l = [0; MAX_LINKS];
        l[..links.len()].copy_from_slice(links);
        let key = (l, links.len() as u8, cap.to_bits());
        let b = match self.by_key.get(&key) {
            Some(&b) => b,
            None => self.new_bundle(now, key, cap),
        };
        self.advance(b, now);
        let target = self.bundles[b as usize].v + bytes as f64;
        let flow = Flow {
            bundle: b,
            target,
            gen: 0,
            live: true,
            token,
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
        self.live += 1;
        let bd = &mut self.bundles[b as usize];
        bd.n += 1;
        bd.members.push(Member { target, flow: id });
        self.dirty.extend_from_slice(links);
        // A new head (or a bundle already moving) needs its completion placed now; its rate
        // may still change at the next settle, at this same instant.
        self.refresh(b, now);
        id
    }

    fn new_bundle(&mut self, now: u64, key: BundleKey, cap: f64) -> BundleId {
        let (links, n, _) = key;
        let bundle = Bundle {
            links,
            pos: [0; MAX_LINKS],
            nlinks: n,
            cap,
            n: 0,
            members: BinaryHeap::new(),
            v: 0.0,
            v_ns: now,
            rate: 0.0,
            finish_ns: u64::MAX,
            head: 0,
            hpos: NOT_QUEUED,
            mark: 0,
            frozen: false,
            new_rate: 0.0,
        };
        let b = match self.bundle_free.pop() {
            Some(b) => {
                // Keep the members heap's allocation.
                let members = std::mem::take(&mut self.bundles[b as usize].members);
                self.bundles[b as usize] = Bundle { members, ..bundle };
                b
            }
            None => {
                self.bundles.push(bundle);
                (self.bundles.len() - 1) as BundleId
            }
        };
        for (i, &l) in links[..n as usize].iter().enumerate() {
            let link = &mut self.links[l as usize];
            self.bundles[b as usize].pos[i] = link.bundles.len() as u32;
            link.bundles.push(b);
        }
        self.by_key.insert(key, b);
        b
    }

    /// Brings bundle `b`'s virtual clock to `now`.
    fn advance(&mut self, b: BundleId, now: u64) {
        let bd = &mut self.bundles[b as usize];
        if bd.rate > 0.0 && now > bd.v_ns {
            bd.v += bd.rate * (now - bd.v_ns) as f64 * 1e-9;
        }
        bd.v_ns = now;
    }

    /// Recomputes bundle `b`'s head and completion (its clock at `now`) and moves it in the
    /// completion heap; returns whether it has a completion.
    fn refresh(&mut self, b: BundleId, now: u64) -> bool {
        let bd = &mut self.bundles[b as usize];
        while let Some(m) = bd.members.peek() {
            if self.flows[m.flow as usize].live
                && self.flows[m.flow as usize].bundle == b
                && self.flows[m.flow as usize].target == m.target
            {
                break;
            }
            bd.members.pop();
        }
        let head = bd.members.peek().copied();
        match head {
            Some(m) if bd.rate > 0.0 => {
                let remaining = (m.target - bd.v).max(0.0);
                // + 0.5 then truncate: round() for a non-negative value, without libm.
                bd.finish_ns = now + (remaining * 1e9 / bd.rate + 0.5) as u64;
                bd.head = m.flow;
                self.heap_update(b);
                true
            }
            _ => {
                bd.finish_ns = u64::MAX;
                self.heap_remove(b);
                false
            }
        }
    }

    /// Whether a completion for (`flow`, `gen`) is still the flow's current one.
    pub fn is_current(&self, flow: FlowId, gen: u32) -> bool {
        self.flows
            .get(flow as usize)
            .is_some_and(|f| f.live && f.gen == gen)
    }

    /// When the next flow completes, if any has a rate.
    pub fn next_finish(&self) -> Option<u64> {
        self.done
            .first()
            .map(|&b| self.bundles[b as usize].finish_ns)
    }

    /// The flow completing next (ties: lowest id), if any has a rate.
    pub fn next_flow(&self) -> Option<FlowId> {
        self.done.first().map(|&b| self.bundles[b as usize].head)
    }

    /// Removes a flow at `now` (its completion); returns its token.
    pub fn finish(&mut self, now: u64, id: FlowId) -> u64 {
        let f = &mut self.flows[id as usize];
        f.live = false;
        f.gen = f.gen.wrapping_add(1);
        let (b, token) = (f.bundle, f.token);
        self.live -= 1;
        self.free.push(id);
        self.advance(b, now);
        let bd = &mut self.bundles[b as usize];
        bd.n -= 1;
        let (links, n) = (bd.links, bd.nlinks as usize);
        self.dirty.extend_from_slice(&links[..n]);
        if bd.n == 0 {
            self.remove_bundle(b);
        } else {
            self.refresh(b, now);
        }
        token
    }

    fn remove_bundle(&mut self, b: BundleId) {
        self.heap_remove(b);
        let bd = &mut self.bundles[b as usize];
        bd.members.clear();
        let (links, pos, n) = (bd.links, bd.pos, bd.nlinks as usize);
        self.by_key.remove(&(links, n as u8, bd.cap.to_bits()));
        for i in 0..n {
            let link = &mut self.links[links[i] as usize];
            let p = pos[i] as usize;
            link.bundles.swap_remove(p);
            if p < link.bundles.len() {
                let moved = &mut self.bundles[link.bundles[p] as usize];
                for j in 0..moved.nlinks as usize {
                    if moved.links[j] == links[i] {
                        moved.pos[j] = p as u32;
                    }
                }
            }
        }
        self.bundle_free.push(b);
    }

    /// Whether flows started or finished since the last `settle`.
    pub fn needs_settle(&self) -> bool {
        !self.dirty.is_empty()
    }

    /// Live flows.
    pub fn live_flows(&self) -> usize {
        self.live
    }

    /// Recomputes the rates of the bundles connected to the links touched since the last
    /// call, at time `now`, and appends every bundle whose rate changed (by its head flow).
    pub fn settle(&mut self, now: u64, out: &mut Vec<Reschedule>) {
        if self.dirty.is_empty() {
            return;
        }
        self.recomputations += 1;
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            // Marks from 2^32 recomputations ago could collide: clear them.
            self.links.iter_mut().for_each(|l| l.mark = 0);
            self.bundles.iter_mut().for_each(|b| b.mark = 0);
            self.epoch = 1;
        }
        let epoch = self.epoch;
        self.collect_component(epoch);
        self.fill();
        // Apply: advance and reschedule only the bundles whose rate changed.
        for k in 0..self.comp_bundles.len() {
            let b = self.comp_bundles[k];
            let rate = self.bundles[b as usize].new_rate.max(1.0);
            if rate == self.bundles[b as usize].rate {
                continue;
            }
            self.advance(b, now);
            self.bundles[b as usize].rate = rate;
            if self.refresh(b, now) {
                let bd = &self.bundles[b as usize];
                out.push(Reschedule {
                    flow: bd.head,
                    gen: self.flows[bd.head as usize].gen,
                    finish_ns: bd.finish_ns,
                });
            }
        }
    }

    fn key(&self, b: BundleId) -> (u64, FlowId) {
        let bd = &self.bundles[b as usize];
        (bd.finish_ns, bd.head)
    }

    fn heap_set(&mut self, i: usize, b: BundleId) {
        self.done[i] = b;
        self.bundles[b as usize].hpos = i as u32;
    }

    /// Puts bundle `b` (new finish time) in its place in the completion heap.
    fn heap_update(&mut self, b: BundleId) {
        let mut i = match self.bundles[b as usize].hpos {
            NOT_QUEUED => {
                self.done.push(b);
                self.done.len() - 1
            }
            p => p as usize,
        };
        let k = self.key(b);
        // Up.
        while i > 0 {
            let parent = (i - 1) / 2;
            let pb = self.done[parent];
            if self.key(pb) <= k {
                break;
            }
            self.heap_set(i, pb);
            i = parent;
        }
        // Down.
        loop {
            let l = 2 * i + 1;
            if l >= self.done.len() {
                break;
            }
            let r = l + 1;
            let c = if r < self.done.len() && self.key(self.done[r]) < self.key(self.done[l]) {
                r
            } else {
                l
            };
            let cb = self.done[c];
            if self.key(cb) >= k {
                break;
            }
            self.heap_set(i, cb);
            i = c;
        }
        self.heap_set(i, b);
    }

    /// Takes bundle `b` out of the completion heap.
    fn heap_remove(&mut self, b: BundleId) {
        let p = self.bundles[b as usize].hpos;
        if p == NOT_QUEUED {
            return;
        }
        self.bundles[b as usize].hpos = NOT_QUEUED;
        let last = self.done.pop().expect("heap holds b");
        if last != b {
            self.heap_set(p as usize, last);
            self.heap_update(last);
        }
    }

    /// Fills `comp_links`/`comp_bundles` with everything reachable from the dirty links.
    fn collect_component(&mut self, epoch: u32) {
        self.comp_links.clear();
        self.comp_bundles.clear();
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
            let n = self.links[l as usize].bundles.len();
            for k in 0..n {
                let bid = self.links[l as usize].bundles[k];
                let b = &mut self.bundles[bid as usize];
                if b.mark == epoch {
                    continue;
                }
                b.mark = epoch;
                b.frozen = false;
                self.comp_bundles.push(bid);
                let (bl, nl) = (b.links, b.nlinks as usize);
                for &other in &bl[..nl] {
                    let link = &mut self.links[other as usize];
                    if link.mark != epoch {
                        link.mark = epoch;
                        self.stack.push(other);
                    }
                }
            }
        }
    }

    /// Progressive filling over the collected component: sets every bundle's `new_rate`.
    fn fill(&mut self) {
        // The first entries go in as a list heapified at once (O(n), not n sifted pushes);
        // each link and bundle has one entry at a time, so the pops come in the same order.
        let mut first = std::mem::take(&mut self.heap).into_vec();
        first.clear();
        for &l in &self.comp_links {
            let mut unfrozen = 0u64;
            for &b in &self.links[l as usize].bundles {
                unfrozen += self.bundles[b as usize].n as u64;
            }
            let link = &mut self.links[l as usize];
            link.rem = link.capacity;
            link.unfrozen = unfrozen;
            link.ver = 0;
            if unfrozen > 0 {
                first.push(Entry {
                    value: link.rem / unfrozen as f64,
                    is_bundle: false,
                    id: l,
                    ver: 0,
                });
            }
        }
        for &b in &self.comp_bundles {
            let cap = self.bundles[b as usize].cap;
            if cap.is_finite() {
                first.push(Entry {
                    value: cap,
                    is_bundle: true,
                    id: b,
                    ver: 0,
                });
            }
        }
        self.heap = BinaryHeap::from(first);
        // Bundles not frozen yet: once none is left, the entries still queued change nothing
        // (every link has no unfrozen flow): in a star of thousands of clients writing to a
        // few servers, the servers' links freeze every bundle and the clients' links are not
        // popped one by one.
        let mut left = self.comp_bundles.len();
        while left > 0 {
            let Some(e) = self.heap.pop() else { break };
            if e.is_bundle {
                if self.bundles[e.id as usize].frozen {
                    continue;
                }
                self.freeze(e.id, e.value);
                left -= 1;
            } else {
                let link = &self.links[e.id as usize];
                if link.unfrozen == 0 {
                    continue;
                }
                if link.ver != e.ver {
                    // Stale: flows froze elsewhere since, so its share grew. Queue the current
                    // share (freeze does not, so a link is re-queued once per pop, not once
                    // per bundle frozen on it).
                    self.heap.push(Entry {
                        value: link.rem / link.unfrozen as f64,
                        is_bundle: false,
                        id: e.id,
                        ver: link.ver,
                    });
                    continue;
                }
                let share = e.value;
                for k in 0..self.links[e.id as usize].bundles.len() {
                    let b = self.links[e.id as usize].bundles[k];
                    if !self.bundles[b as usize].frozen {
                        self.freeze(b, share);
                        left -= 1;
                    }
                }
            }
        }
    }

    /// Freezes bundle `b` at per-flow `rate`, taking its flows off every link. The links'
    /// heap entries become stale (lower than their share now) and are refreshed when popped.
    fn freeze(&mut self, b: BundleId, rate: f64) {
        let bd = &mut self.bundles[b as usize];
        bd.frozen = true;
        bd.new_rate = rate;
        let (bl, nl, n) = (bd.links, bd.nlinks as usize, bd.n);
        for &l in &bl[..nl] {
            let link = &mut self.links[l as usize];
            link.rem = (link.rem - rate * n as f64).max(0.0);
            link.unfrozen -= n as u64;
            link.ver += 1;
        }
    }

    /// Current rate of a flow (bytes/s), for tests.
    pub fn rate(&self, flow: FlowId) -> f64 {
        self.bundles[self.flows[flow as usize].bundle as usize].rate
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
        assert_eq!(
            r,
            vec![Reschedule {
                flow: f,
                gen: 0,
                finish_ns: 1_000_000
            }]
        );
        assert_eq!(net.finish(1_000_000, f), 7);
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
        // Flows 1 and 2 share links and cap: one bundle, rescheduled once (by its head).
        let fin: Vec<(FlowId, u64)> = r.iter().map(|x| (x.flow, x.finish_ns)).collect();
        assert_eq!(fin, vec![(f1, 1_000_000_000), (f3, 2_000_000_000)]);
        // When flows 1 and 2 finish at 1 s, flow 3 (2 MB left) is still held at 2 MB/s by B:
        // its rate does not change and its completion stays.
        assert_eq!(
            (net.next_flow(), net.next_finish()),
            (Some(f1), Some(1_000_000_000))
        );
        net.finish(1_000_000_000, f1);
        assert_eq!(
            (net.next_flow(), net.next_finish()),
            (Some(f2), Some(1_000_000_000))
        );
        net.finish(1_000_000_000, f2);
        assert!(settle(&mut net, 1_000_000_000).is_empty());
        assert!(net.is_current(f3, 0));
        assert_eq!(
            (net.next_flow(), net.next_finish()),
            (Some(f3), Some(2_000_000_000))
        );
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
        assert_eq!(
            r,
            vec![Reschedule {
                flow: f1,
                gen: 0,
                finish_ns: 2_000_000_000
            }]
        );
        net.finish(2_000_000_000, f1);
        assert!(!net.is_current(f1, 0));
        let r = settle(&mut net, 2_000_000_000);
        assert_eq!(
            r,
            vec![Reschedule {
                flow: f2,
                gen: 0,
                finish_ns: 4_000_000_000
            }]
        );
        assert_eq!(net.live_flows(), 1);
    }

    /// A star: clients on their own links into one server link. A slow client link binds
    /// first, the server link's share then grows for the rest, and the fast client links,
    /// whose bundles the server link froze, set no rate (the filling stops there).
    #[test]
    fn star_with_a_slow_client() {
        let mut net = FlowNet::new();
        let server = net.add_link(3e6);
        let flows: Vec<FlowId> = [0.5e6, 10e6, 10e6, 10e6]
            .iter()
            .map(|&c| {
                let up = net.add_link(c);
                net.start(0, &[up, server], 1_000_000, f64::INFINITY, 0)
            })
            .collect();
        assert_eq!(settle(&mut net, 0).len(), 4);
        let rates: Vec<f64> = flows.iter().map(|&f| net.rate(f)).collect();
        assert_eq!(rates, vec![0.5e6, 2.5e6 / 3.0, 2.5e6 / 3.0, 2.5e6 / 3.0]);
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
        assert!(net.is_current(f1, 0));
    }

    #[test]
    fn a_bundle_shares_like_processor_sharing() {
        // One link of 1 MB/s; flow 1 (1 MB) alone from 0 to 0.5 s (0.5 MB done), then flow 2
        // (1 MB) joins its bundle: 0.5 MB/s each. Flow 1 ends at 1.5 s; flow 2 then has
        // 0.5 MB left at 1 MB/s: ends at 2 s.
        let mut net = FlowNet::new();
        let a = net.add_link(1e6);
        let f1 = net.start(0, &[a], 1_000_000, f64::INFINITY, 1);
        settle(&mut net, 0);
        assert_eq!(net.next_finish(), Some(1_000_000_000));
        let f2 = net.start(500_000_000, &[a], 1_000_000, f64::INFINITY, 2);
        settle(&mut net, 500_000_000);
        assert_eq!((net.rate(f1), net.rate(f2)), (5e5, 5e5));
        assert_eq!(
            (net.next_flow(), net.next_finish()),
            (Some(f1), Some(1_500_000_000))
        );
        assert_eq!(net.finish(1_500_000_000, f1), 1);
        settle(&mut net, 1_500_000_000);
        assert_eq!(
            (net.next_flow(), net.next_finish()),
            (Some(f2), Some(2_000_000_000))
        );
        assert_eq!(net.finish(2_000_000_000, f2), 2);
        assert_eq!((net.live_flows(), net.next_finish()), (0, None));
        // The bundle is gone; a new flow starts a fresh one.
        let f3 = net.start(2_000_000_000, &[a], 1_000_000, f64::INFINITY, 3);
        settle(&mut net, 2_000_000_000);
        assert_eq!(
            (net.next_flow(), net.next_finish()),
            (Some(f3), Some(3_000_000_000))
        );
    }
}
