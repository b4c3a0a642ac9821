//! Parent reconstruction for the records of one thread.
//!
//! The runtime writes a record when its call returns, so children come before their parents
//! in the raw file. Sorting by (start, depth) puts every parent before its children; a stack
//! of open records indexed by depth then gives each record its enclosing one. A record whose
//! enclosing call was never written (the process died inside it) gets no parent rather than a
//! wrong one: a stack entry must also still be running when the child starts.

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

/// For each span, the index (into `spans`) of the record that encloses it, if any. Records are
/// visited in (start, depth, input index) order. Indices are `u32` (merge holds a rank's
/// records, fewer than 2^32) to halve the memory of a large rank's pass.
pub fn reconstruct_parents(spans: &[Span]) -> Vec<Option<u32>> {
    let mut order: Vec<u32> = (0..spans.len() as u32).collect();
    order.sort_by_key(|&i| (spans[i as usize].start, spans[i as usize].depth, i));
    let mut parents = vec![None; spans.len()];
    let mut stack: Vec<u32> = Vec::new();
    for i in order {
        let s = spans[i as usize];
        while let Some(&top) = stack.last() {
            let t = spans[top as usize];
            if t.depth >= s.depth || t.end < s.start {
                stack.pop();
            } else {
                break;
            }
        }
        parents[i as usize] = stack.last().copied();
        stack.push(i);
    }
    parents
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

    #[test]
    fn children_written_before_parents_find_them() {
        // Raw order as written at call exit: two pwrites, their MPI call, then a lone stat.
        let spans = [
            span(110, 10, 1), // 0: pwrite inside 2
            span(130, 10, 1), // 1: pwrite inside 2
            span(100, 50, 0), // 2: MPI_File_write_all
            span(200, 5, 0),  // 3: stat
            span(300, 1, 2),  // 4: depth 2 under 5's child? no: directly under 5 (depth 1 missing)
            span(290, 20, 0), // 5
        ];
        let p = reconstruct_parents(&spans);
        assert_eq!(p, vec![Some(2), Some(2), None, None, Some(5), None]);
    }

    #[test]
    fn equal_starts_put_the_parent_first() {
        let spans = [span(100, 0, 1), span(100, 5, 0), span(100, 3, 1)];
        let p = reconstruct_parents(&spans);
        assert_eq!(p, vec![Some(1), None, Some(1)]);
    }

    #[test]
    fn lost_parent_is_not_replaced_by_a_finished_one() {
        // A (0-10) finished; B at depth 1 starts at 20: its parent (depth 0) was never written.
        let spans = [span(0, 10, 0), span(2, 1, 1), span(20, 1, 1)];
        let p = reconstruct_parents(&spans);
        assert_eq!(p, vec![None, Some(0), None]);
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
            reconstruct_parents(&spans),
            vec![None, Some(0), Some(1), Some(2), Some(1)]
        );
    }
}
