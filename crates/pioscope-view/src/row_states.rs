//! A row's exact states in the form the page gets them (issue 18): one array per field, ids and
//! starts as differences from the previous state. As JSON objects a state took ~117 bytes, and
//! the 5,000 states of an answer over many rows made replies above 1 MB; as columns of
//! differences one takes ~25.

use serde::Serialize;

use crate::window::State;

/// The states of one row, in start order, as parallel arrays. The page adds up `id` and
/// `start` to get them back; a state's layer is its function's (`/api/rows`).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct StateColumns {
    /// Event id minus the previous state's (the first: minus 0).
    pub id: Vec<i64>,
    /// Start (ns) minus the previous state's (the first: minus 0); never negative.
    pub start: Vec<i64>,
    /// Duration, ns.
    pub dur: Vec<i64>,
    /// Nesting depth.
    pub depth: Vec<u8>,
    /// Function id.
    pub func: Vec<u32>,
}

impl StateColumns {
    /// The columns of `states` (sorted by start, as `read_states` gives them).
    pub fn new(states: &[State]) -> StateColumns {
        let mut cols = StateColumns::default();
        let (mut id, mut start) = (0i64, 0i64);
        for s in states {
            cols.id.push(s.id - id);
            cols.start.push(s.start - start);
            cols.dur.push(s.dur);
            cols.depth.push(s.depth);
            cols.func.push(s.func);
            (id, start) = (s.id, s.start);
        }
        cols
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(id: i64, start: i64, dur: i64, depth: u8, func: u32) -> State {
        State {
            id,
            start,
            dur,
            depth,
            func,
        }
    }

    #[test]
    fn ids_and_starts_are_differences_and_add_up_again() {
        let states = [
            state(40, 1_000_000, 7, 0, 3),
            state(12, 1_000_000, 5, 1, 9),
            state(41, 1_000_250, 80, 0, 3),
        ];
        let c = StateColumns::new(&states);
        assert_eq!(c.id, vec![40, -28, 29]);
        assert_eq!(c.start, vec![1_000_000, 0, 250]);
        assert_eq!(c.dur, vec![7, 5, 80]);
        assert_eq!(c.depth, vec![0, 1, 0]);
        assert_eq!(c.func, vec![3, 9, 3]);
        let (mut id, mut start) = (0, 0);
        for (i, s) in states.iter().enumerate() {
            id += c.id[i];
            start += c.start[i];
            assert_eq!((id, start), (s.id, s.start));
        }
    }
}
