//! Parent reconstruction for the records of one thread, as merge emits them.
//!
//! The runtime writes a record when its call returns, so children come before their parents
//! in the raw file. Merge emits a rank's records in store order (start, then depth), which
//! puts every parent before its children; a stack of open records per thread then gives each
//! record its enclosing one. A record whose enclosing call was never written (the process died
//! inside it) gets no parent rather than a wrong one: a stack entry must also still be running
//! when the child starts. The stack holds at most one record per depth, so memory does not
//! grow with the records of a thread.

/// The timing and depth of one record, in the thread's own clock ticks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    /// Start ticks.
    pub start: u64,
    /// End ticks (start + duration).
    pub end: u64,
    /// Traced calls enclosing this one.
    pub depth: u8,
}

/// The open records of one thread, innermost last, each with what its children inherit
/// (`T`: the store id, region and function merge needs).
#[derive(Debug)]
pub struct OpenCalls<T> {
    stack: Vec<(Span, T)>,
}

impl<T> Default for OpenCalls<T> {
    fn default() -> Self {
        OpenCalls { stack: Vec::new() }
    }
}

impl<T> OpenCalls<T> {
    /// Enters the next record of the thread in (start, depth) order: returns its enclosing
    /// record's value, if any, and keeps the record open with `value`.
    pub fn enter(&mut self, span: Span, value: T) -> Option<&T> {
        while let Some((top, _)) = self.stack.last() {
            if top.depth >= span.depth || top.end < span.start {
                self.stack.pop();
            } else {
                break;
            }
        }
        self.stack.push((span, value));
        let n = self.stack.len();
        (n >= 2).then(|| &self.stack[n - 2].1)
    }

    /// Replaces the value of the record entered last (known only once its parent is).
    pub fn set_innermost(&mut self, value: T) {
        if let Some(last) = self.stack.last_mut() {
            last.1 = value;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(start: u64, dur: u64, depth: u8) -> Span {
        Span {
            start,
            end: start + dur,
            depth,
        }
    }

    /// The parents (by index into `spans`) of spans given in (start, depth) order.
    fn parents(spans: &[Span]) -> Vec<Option<usize>> {
        let mut open = OpenCalls::default();
        spans
            .iter()
            .enumerate()
            .map(|(i, &s)| open.enter(s, i).copied())
            .collect()
    }

    #[test]
    fn parents_come_first_and_children_find_them() {
        // Store order of: an MPI call with two pwrites, a lone stat, and a depth-2 record
        // directly under a depth-0 one (depth 1 missing).
        let spans = [
            span(100, 50, 0), // 0: MPI_File_write_all
            span(110, 10, 1), // 1: pwrite inside 0
            span(130, 10, 1), // 2: pwrite inside 0
            span(200, 5, 0),  // 3: stat
            span(290, 20, 0), // 4
            span(300, 1, 2),  // 5: under 4
        ];
        assert_eq!(
            parents(&spans),
            vec![None, Some(0), Some(0), None, None, Some(4)]
        );
    }

    #[test]
    fn equal_starts_put_the_parent_first() {
        let spans = [span(100, 5, 0), span(100, 0, 1), span(100, 3, 1)];
        assert_eq!(parents(&spans), vec![None, Some(0), Some(0)]);
    }

    #[test]
    fn lost_parent_is_not_replaced_by_a_finished_one() {
        // A (0-10) finished; B at depth 1 starts at 20: its parent (depth 0) was never written.
        let spans = [span(0, 10, 0), span(2, 1, 1), span(20, 1, 1)];
        assert_eq!(parents(&spans), vec![None, Some(0), None]);
    }

    #[test]
    fn deep_nesting() {
        let spans = [
            span(0, 100, 0),
            span(1, 90, 1),
            span(2, 80, 2),
            span(3, 1, 3),
            span(50, 1, 2),
        ];
        assert_eq!(
            parents(&spans),
            vec![None, Some(0), Some(1), Some(2), Some(1)]
        );
    }
}
