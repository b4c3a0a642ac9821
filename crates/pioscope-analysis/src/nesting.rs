//! The enclosing calls of each event, rebuilt on the fly from the store order (per thread, a
//! parent comes before its children and a child starts inside its parent) and the `depth`
//! column: one stack per (process, thread), popped down to the event's depth, and past any
//! call that ended before the event started (its real parent was never written: the process
//! died inside it), the rule merge uses for `parent`. Every analysis and the finding rules
//! place records with it.
//!
//! Depth rather than `parent` ids: the scope filter may hide an enclosing record (a POSIX call
//! on a system file) and the depth still places the event correctly among the ones kept.
//! Frames carry whatever an analysis accumulates for an open call; a frame leaves the stack
//! (through `on_pop`) once a later event of its thread is not inside it, or at the end.

use pioscope_trace::store::Event;
use rustc_hash::FxHashMap;

/// One open call on a thread's stack.
#[derive(Clone, Debug, PartialEq)]
pub struct Frame<T> {
    /// Its `depth`.
    pub depth: u8,
    /// Its end, ns.
    pub end: i64,
    /// What the analysis keeps for it.
    pub data: T,
}

impl<T> Frame<T> {
    /// The frame of call `e`.
    pub fn of(e: &Event<'_>, data: T) -> Self {
        Frame {
            depth: e.depth,
            end: e.end_ns(),
            data,
        }
    }
}

/// The open calls of every thread, for one analysis. The stack of the thread seen last is
/// kept apart: events come in runs of one thread, so most visits touch no map.
#[derive(Debug)]
pub struct Nesting<T> {
    key: Option<(i32, i32)>,
    current: Vec<Frame<T>>,
    others: FxHashMap<(i32, i32), Vec<Frame<T>>>,
    rank: Option<i32>,
}

impl<T> Default for Nesting<T> {
    fn default() -> Self {
        Nesting {
            key: None,
            current: Vec::new(),
            others: FxHashMap::default(),
            rank: None,
        }
    }
}

impl<T> Nesting<T> {
    /// An empty tracker.
    pub fn new() -> Self {
        Self::default()
    }

    /// Makes `e`'s thread stack hold exactly its enclosing calls (outermost first) and returns
    /// it; frames that end before `e` go to `on_pop`, innermost first. The caller pushes `e`'s
    /// own frame when it wants its descendants to see it. When the rank changes every stack is
    /// emptied (the store holds one rank after the other), so memory stays bounded by the open
    /// calls of one rank.
    pub fn enter(&mut self, e: &Event<'_>, mut on_pop: impl FnMut(T)) -> &mut Vec<Frame<T>> {
        if self.rank != Some(e.rank) {
            self.rank = Some(e.rank);
            self.drain(&mut on_pop);
        }
        let key = (e.process, e.thread);
        if self.key != Some(key) {
            let next = self.others.remove(&key).unwrap_or_default();
            let prev = std::mem::replace(&mut self.current, next);
            if let Some(k) = self.key.filter(|_| !prev.is_empty()) {
                self.others.insert(k, prev);
            }
            self.key = Some(key);
        }
        let stack = &mut self.current;
        while stack
            .last()
            .is_some_and(|f| f.depth >= e.depth || f.end < e.start_ns)
        {
            if let Some(f) = stack.pop() {
                on_pop(f.data);
            }
        }
        stack
    }

    /// Pops every open frame (at the end of the pass), innermost first per thread.
    pub fn drain(&mut self, mut on_pop: impl FnMut(T)) {
        if let Some(k) = self.key.take() {
            let cur = std::mem::take(&mut self.current);
            if !cur.is_empty() {
                self.others.insert(k, cur);
            }
        }
        let mut keys: Vec<(i32, i32)> = self.others.keys().copied().collect();
        keys.sort_unstable();
        for k in keys {
            if let Some(mut stack) = self.others.remove(&k) {
                while let Some(f) = stack.pop() {
                    on_pop(f.data);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pioscope_trace::functions::Layer;

    fn ev(process: i32, depth: u8) -> Event<'static> {
        Event {
            rank: process,
            process,
            depth,
            ..Event::call(Layer::Posix, "pwrite", 0, 0)
        }
    }

    #[test]
    fn stack_follows_depth_and_pops_in_order() {
        let mut n: Nesting<&str> = Nesting::new();
        let mut popped = Vec::new();
        let e = ev(0, 0);
        n.enter(&e, |d| popped.push(d))
            .push(Frame::of(&e, "region"));
        let e = ev(0, 1);
        n.enter(&e, |d| popped.push(d))
            .push(Frame::of(&e, "write_all"));
        let e = ev(0, 2);
        let s = n.enter(&e, |d| popped.push(d));
        assert_eq!(
            s.iter().map(|f| f.data).collect::<Vec<_>>(),
            ["region", "write_all"]
        );
        s.push(Frame::of(&e, "pwrite"));
        // A sibling of write_all (depth 1) closes pwrite and write_all.
        let s = n.enter(&ev(0, 1), |d| popped.push(d));
        assert_eq!(s.len(), 1);
        assert_eq!(popped, ["pwrite", "write_all"]);
        // Another rank empties everything.
        n.enter(&ev(1, 0), |d| popped.push(d));
        assert_eq!(popped, ["pwrite", "write_all", "region"]);
    }

    /// A deeper record that starts after the last call ended is not inside it: its own parent
    /// was never written (as merge decides `parent`).
    #[test]
    fn a_finished_call_encloses_nothing() {
        let mut n: Nesting<&str> = Nesting::new();
        let a = Event {
            duration_ns: 10,
            ..ev(0, 0)
        };
        n.enter(&a, |_| {}).push(Frame::of(&a, "a"));
        let inside = Event {
            start_ns: 10,
            ..ev(0, 1)
        };
        assert_eq!(n.enter(&inside, |_| {}).len(), 1, "starts at a's end");
        let mut popped = Vec::new();
        let after = Event {
            start_ns: 20,
            ..ev(0, 1)
        };
        assert!(n.enter(&after, |d| popped.push(d)).is_empty());
        assert_eq!(popped, ["a"]);
    }
}
