//! The rank-by-time I/O heat map of `pioscope report` (`heatmap` in --json, drawn by the HTML
//! page): I/O busy time on a fixed grid of rank bins × time bins.
//!
//! Design note: memory must not grow with the trace nor with the rank count, so the grid is
//! fixed before the pass: at most `MAX_ROWS` rows (ranks are binned by `per_row` consecutive
//! ranks, the same for every row, the last row may hold fewer) and at most `MAX_COLUMNS` time
//! bins of `bin_ns` each, from meta.json's `job.duration_ns`. A cell holds the I/O busy time of
//! its ranks in its time bin: the time spent in *outermost* I/O calls (POSIX, STDIO or MPI-IO,
//! not inside another I/O call, the same calls as the breakdown's I/O time), each call split
//! over the time bins it overlaps. Dividing a cell by (ranks in the row × `bin_ns`) gives the
//! busy fraction; with several recording threads per rank it can exceed 1.
//!
//! Units: the MPI ranks when the job has any (records of processes without a rank, such as a
//! launcher, are counted in `unplaced_ns`); otherwise the processes (meta.json `processes`).
//! Calls past the end of the grid (clock noise at the very end of the job) go to the last
//! column, calls before 0 to the first.

use pioscope_trace::store::{Event, Trace};
use serde::Serialize;

use crate::class::is_io_layer;
use crate::nesting::{Frame, Nesting};
use crate::pass::{Context, Visitor};

/// Most rows of the grid (rank bins).
pub const MAX_ROWS: usize = 200;
/// Most columns of the grid (time bins).
pub const MAX_COLUMNS: usize = 400;

/// What a row bins.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Unit {
    /// MPI ranks.
    Rank,
    /// Processes (a job without MPI).
    Process,
}

/// The heat map: I/O busy time per (rank bin, time bin).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Heatmap {
    /// What the rows bin: ranks or processes.
    pub unit: Unit,
    /// Ranks (or processes) in the job.
    pub units: u32,
    /// Consecutive ranks per row: row `i` holds ranks `i * per_row` .. `(i + 1) * per_row - 1`.
    pub per_row: u32,
    /// Rows (`ceil(units / per_row)`, at most `MAX_ROWS`).
    pub rows: u32,
    /// Time bins (at most `MAX_COLUMNS`); column `j` covers `[j * bin_ns, (j + 1) * bin_ns)` ns
    /// since the job start.
    pub columns: u32,
    /// Width of a time bin, ns (`ceil(duration_ns / columns)`, at least 1).
    pub bin_ns: i64,
    /// The job duration the bins were cut from (meta.json `job.duration_ns`), ns.
    pub duration_ns: i64,
    /// `busy_ns[row][column]`: outermost I/O call time of the row's ranks in the time bin, ns.
    pub busy_ns: Vec<Vec<i64>>,
    /// The largest cell, ns.
    pub max_busy_ns: i64,
    /// Outermost I/O call time of records that belong to no row (no rank in an MPI job), ns.
    pub unplaced_ns: i64,
}

/// The heat-map visitor: a fixed grid filled as the pass goes.
#[derive(Debug)]
pub struct HeatmapVisitor {
    unit: Unit,
    units: u32,
    per_row: u32,
    rows: usize,
    columns: usize,
    bin_ns: i64,
    duration_ns: i64,
    grid: Vec<i64>,
    unplaced_ns: i64,
    /// Only I/O calls are pushed: a non-empty stack means an enclosing I/O call.
    nesting: Nesting<()>,
}

impl HeatmapVisitor {
    /// A grid for `ranks` MPI ranks (0: no MPI, then `processes` rows are binned) over a job of
    /// `duration_ns`.
    pub fn new(ranks: u32, processes: u32, duration_ns: i64) -> Self {
        let (unit, units) = if ranks > 0 {
            (Unit::Rank, ranks)
        } else {
            (Unit::Process, processes)
        };
        let n = units.max(1) as usize;
        let per_row = n.div_ceil(MAX_ROWS);
        let rows = n.div_ceil(per_row);
        let duration_ns = duration_ns.max(0);
        let columns = MAX_COLUMNS.min(duration_ns.max(1) as usize);
        let bin_ns = (duration_ns.max(1) as u64).div_ceil(columns as u64) as i64;
        HeatmapVisitor {
            unit,
            units,
            per_row: per_row as u32,
            rows,
            columns,
            bin_ns,
            duration_ns,
            grid: vec![0; rows * columns],
            unplaced_ns: 0,
            nesting: Nesting::new(),
        }
    }

    /// The visitor for `trace`, sized from its meta.json.
    pub fn for_trace(trace: &Trace) -> Self {
        let m = &trace.meta;
        Self::new(m.job.ranks, m.processes.len() as u32, m.job.duration_ns)
    }

    /// The row of an event, None when it belongs to none.
    fn row_of(&self, e: &Event<'_>) -> Option<usize> {
        let key = match self.unit {
            Unit::Rank => e.rank,
            Unit::Process => e.process,
        };
        if key < 0 {
            return None;
        }
        // A rank past the declared size (should not happen) goes to the last row.
        Some((key as usize / self.per_row as usize).min(self.rows - 1))
    }

    /// Adds the interval [start, end) of `row` to the time bins it overlaps.
    fn add(&mut self, row: usize, start: i64, end: i64) {
        let span = self.columns as i64 * self.bin_ns;
        let (mut s, mut t) = (start, end);
        // Outside the grid: shift into the first or last bin, keeping the duration.
        if s < 0 {
            t = (t - s).min(span);
            s = 0;
        }
        if t > span {
            s = (s - (t - span)).max(0);
            t = span;
        }
        if t <= s {
            return;
        }
        let first = (s / self.bin_ns) as usize;
        let last = ((t - 1) / self.bin_ns) as usize;
        let cells = &mut self.grid[row * self.columns..(row + 1) * self.columns];
        for (j, cell) in cells.iter_mut().enumerate().take(last + 1).skip(first) {
            let lo = (j as i64 * self.bin_ns).max(s);
            let hi = ((j as i64 + 1) * self.bin_ns).min(t);
            *cell += hi - lo;
        }
    }

    /// The heat map, after the pass.
    pub fn result(&self) -> Heatmap {
        let busy_ns: Vec<Vec<i64>> = self.grid.chunks(self.columns).map(|r| r.to_vec()).collect();
        Heatmap {
            unit: self.unit,
            units: self.units,
            per_row: self.per_row,
            rows: self.rows as u32,
            columns: self.columns as u32,
            bin_ns: self.bin_ns,
            duration_ns: self.duration_ns,
            max_busy_ns: self.grid.iter().copied().max().unwrap_or(0),
            busy_ns,
            unplaced_ns: self.unplaced_ns,
        }
    }
}

impl Visitor for HeatmapVisitor {
    fn visit(&mut self, e: &Event<'_>, _ctx: &Context<'_>) {
        // Other layers never enclose-count here: a stale I/O frame is popped by the next I/O
        // event of its thread (depth and end decide), so they can be skipped outright.
        if !is_io_layer(e.layer) {
            return;
        }
        let stack = self.nesting.enter(e, |_| {});
        if !stack.is_empty() {
            return;
        }
        stack.push(Frame::of(e, ()));
        let d = e.duration_ns.max(0);
        match self.row_of(e) {
            Some(row) => self.add(row, e.start_ns, e.start_ns + d),
            None => self.unplaced_ns += d,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{self, coll, ev, io, FILE_A};

    #[test]
    fn grid_is_bounded() {
        let v = HeatmapVisitor::new(4, 4, 1_000_000);
        assert_eq!((v.rows, v.per_row, v.columns, v.bin_ns), (4, 1, 400, 2500));
        let v = HeatmapVisitor::new(10_000, 10_000, 17_629_000);
        assert_eq!((v.rows, v.per_row, v.columns), (200, 50, 400));
        assert_eq!(v.bin_ns, 44_073, "ceil(17629000 / 400)");
        let v = HeatmapVisitor::new(201, 201, 1000);
        assert_eq!((v.rows, v.per_row), (101, 2), "the last row holds one rank");
        let v = HeatmapVisitor::new(0, 3, 10);
        assert_eq!(
            (v.unit, v.rows, v.columns, v.bin_ns),
            (Unit::Process, 3, 10, 1)
        );
        let v = HeatmapVisitor::new(0, 0, 0);
        assert_eq!((v.rows, v.columns, v.bin_ns), (1, 1, 1));
    }

    #[test]
    fn calls_split_over_bins() {
        let mut v = HeatmapVisitor::new(2, 2, 400);
        assert_eq!(v.bin_ns, 1);
        let mut v2 = HeatmapVisitor::new(1, 1, 4000);
        assert_eq!(v2.bin_ns, 10);
        v2.add(0, 5, 27);
        let r = v2.result();
        assert_eq!(&r.busy_ns[0][..4], &[5, 10, 7, 0]);
        // Past the end: shifted into the last bins, duration kept.
        v2.add(0, 3995, 4010);
        let r = v2.result();
        assert_eq!(&r.busy_ns[0][398..], &[5, 10]);
        v.add(1, -3, 2);
        assert_eq!(&v.result().busy_ns[1][..6], &[1, 1, 1, 1, 1, 0]);
    }

    /// Two ranks; only outermost I/O calls count; the nested pwrite and close do not.
    #[test]
    fn outermost_io_per_rank() {
        let dir = tempfile::tempdir().expect("tmp");
        let mut ranks = Vec::new();
        for r in 0..2u32 {
            let mut b = testutil::rank(r, 2, "n1");
            let mut evs = vec![coll(io("MPI_File_write_all", 100, 300, FILE_A, 0, 64), 1)];
            evs.push(io("pwrite", 150, 100, FILE_A, 0, 64).depth(1));
            evs.push(ev("MPI_Barrier", 500, 100));
            if r == 1 {
                evs.push(ev("close", 700, 300).object(FILE_A));
            }
            b.events(0, &evs);
            ranks.push(b);
        }
        let t = testutil::trace(dir.path(), ranks);
        let h = testutil::run(&t, HeatmapVisitor::for_trace(&t), |v, _| v.result());
        assert_eq!((h.unit, h.units, h.rows, h.per_row), (Unit::Rank, 2, 2, 1));
        let per_row: Vec<i64> = h.busy_ns.iter().map(|r| r.iter().sum()).collect();
        assert_eq!(
            per_row,
            vec![300, 600],
            "write_all 300 (pwrite inside), close 300"
        );
        assert_eq!(h.columns as usize, h.busy_ns[0].len());
        assert_eq!(h.unplaced_ns, 0);
        assert!(h.max_busy_ns > 0 && h.max_busy_ns <= h.bin_ns);
    }
}
