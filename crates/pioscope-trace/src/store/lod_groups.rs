//! Level of detail across rows: the row groups of lod.parquet (issue 18). A group of grade g
//! is 8^g consecutive canonical rows; its bucket at a level sums its rows' buckets at that
//! level and names its worst row (the most busy at depth 0). docs/FORMAT.md, "lod.parquet".
//!
//! Design: a level's buckets leave the time sweep as runs of one row each (the level spill,
//! see `lod`). Grade 1 is an 8-way merge by bucket start of eight rows' runs; grade g an 8-way
//! merge of eight groups of grade g - 1, read back from a spill file of its own. Each merge
//! holds one chunk of each of its eight inputs, so memory stays bounded whatever the number of
//! rows or buckets.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use super::lod::{LevelSpill, Rec, REC_BYTES};
use super::StoreError;

/// Rows of a group of grade g + 1 / rows of one of grade g. 8 rather than 4: the groups add
/// about 1/7 to the index instead of 1/3 (rows busy at the same times merge).
pub const GROUP_FACTOR: u32 = 8;
/// Records read from a run at once by a merge input.
const CHUNK_RECORDS: usize = 4 * 1024;

/// Grades stored for `rows` rows (grade 0, the rows themselves, included): groups grow until
/// one covers every row. A trace of one row has grade 0 only.
pub fn grade_count(rows: usize) -> u32 {
    let mut grades = 1;
    let mut size = 1usize;
    while size < rows {
        size = size.saturating_mul(GROUP_FACTOR as usize);
        grades += 1;
    }
    grades
}

/// Rows per group of a grade.
pub fn group_rows(grade: u32) -> u64 {
    (GROUP_FACTOR as u64).saturating_pow(grade)
}

/// The runs of one stream (a row, or a group named by its first row), in time order.
type Stream = (u32, Vec<(u64, usize)>);

/// The streams of a spill: its runs gathered per row, rows ascending (a row's runs stay in
/// write order, which is time order).
fn streams(runs: &[(u32, u64, usize)]) -> Vec<Stream> {
    let mut sorted = runs.to_vec();
    sorted.sort_by_key(|r| r.0);
    let mut out: Vec<Stream> = Vec::new();
    for (row, offset, n) in sorted {
        match out.last_mut() {
            Some(last) if last.0 == row => last.1.push((offset, n)),
            _ => out.push((row, vec![(offset, n)])),
        }
    }
    out
}

/// Reads one stream's records in order, a chunk at a time.
struct Cursor<'a> {
    file: &'a File,
    path: &'a Path,
    runs: &'a [(u64, usize)],
    run: usize,
    /// Records of the current run already read into `buf`.
    taken: usize,
    buf: Vec<Rec>,
    pos: usize,
    bytes: Vec<u8>,
}

impl<'a> Cursor<'a> {
    fn new(file: &'a File, path: &'a Path, runs: &'a [(u64, usize)]) -> Cursor<'a> {
        Cursor {
            file,
            path,
            runs,
            run: 0,
            taken: 0,
            buf: Vec::new(),
            pos: 0,
            bytes: Vec::new(),
        }
    }

    fn next(&mut self) -> Result<Option<Rec>, StoreError> {
        while self.pos >= self.buf.len() {
            let Some(&(offset, n)) = self.runs.get(self.run) else {
                return Ok(None);
            };
            if self.taken >= n {
                self.run += 1;
                self.taken = 0;
                continue;
            }
            let k = (n - self.taken).min(CHUNK_RECORDS);
            self.bytes.resize(k * REC_BYTES, 0);
            self.file
                .read_exact_at(&mut self.bytes, offset + (self.taken * REC_BYTES) as u64)
                .map_err(|e| StoreError::io(self.path, e))?;
            self.buf.clear();
            self.buf
                .extend(self.bytes.chunks_exact(REC_BYTES).map(Rec::decode));
            self.pos = 0;
            self.taken += k;
        }
        self.pos += 1;
        Ok(Some(self.buf[self.pos - 1]))
    }
}

/// Adds `b` (of another row or group, same bucket) to `acc`. The group's function is the one
/// of its member busiest at depth 0 (`weight` carries that member's busy time).
fn combine(acc: &mut Rec, weight: &mut i64, b: &Rec) {
    for (a, x) in acc.busy_ns.iter_mut().zip(b.busy_ns) {
        *a += x;
    }
    acc.count += b.count;
    acc.bytes += b.bytes;
    if b.func != u32::MAX && (acc.func == u32::MAX || b.busy_ns[0] > *weight) {
        acc.func = b.func;
        *weight = b.busy_ns[0];
    }
    if b.worst_ns > acc.worst_ns {
        acc.worst_ns = b.worst_ns;
        acc.worst_row = b.worst_row;
    }
}

/// Merges the streams of one group (bucket by bucket in time order) into `emit`.
fn merge_group(
    file: &File,
    path: &Path,
    first_row: u32,
    members: &[Stream],
    emit: &mut dyn FnMut(Rec) -> Result<(), StoreError>,
) -> Result<(), StoreError> {
    let mut cursors: Vec<Cursor> = members
        .iter()
        .map(|m| Cursor::new(file, path, &m.1))
        .collect();
    let mut heads: Vec<Option<Rec>> = Vec::with_capacity(cursors.len());
    for c in &mut cursors {
        heads.push(c.next()?);
    }
    while let Some(t) = heads.iter().flatten().map(|r| r.start_ns).min() {
        let mut acc = Rec {
            row: first_row,
            start_ns: t,
            busy_ns: [0; super::lod::DEPTHS],
            count: 0,
            bytes: 0,
            func: u32::MAX,
            worst_row: u32::MAX,
            worst_ns: -1,
        };
        let mut weight = -1;
        for (head, cursor) in heads.iter_mut().zip(&mut cursors) {
            if let Some(h) = head.filter(|h| h.start_ns == t) {
                combine(&mut acc, &mut weight, &h);
                *head = cursor.next()?;
            }
        }
        emit(acc)?;
    }
    Ok(())
}

/// Builds grades 1..`grades` of one level from its spill of row runs (`runs` as
/// [`LevelSpill`] keeps them), handing every group bucket to `emit(grade, rec)` in
/// (grade, first row, start) order. Spill files of intermediate grades go to `tmp`.
pub(super) fn build_grades(
    spill_path: &Path,
    runs: &[(u32, u64, usize)],
    grades: u32,
    tmp: &Path,
    level: usize,
    emit: &mut dyn FnMut(u32, &Rec) -> Result<(), StoreError>,
) -> Result<(), StoreError> {
    let mut input: PathBuf = spill_path.to_path_buf();
    let mut input_runs = runs.to_vec();
    let mut made: Vec<PathBuf> = Vec::new();
    for grade in 1..grades {
        let file = File::open(&input).map_err(|e| StoreError::io(&input, e))?;
        let members = streams(&input_runs);
        let size = group_rows(grade);
        let mut out = LevelSpill::create(tmp.join(format!("level-{level}-grade-{grade}.bin")))?;
        let mut pending: Vec<Rec> = Vec::new();
        let mut i = 0;
        while i < members.len() {
            let group = (members[i].0 as u64 / size) as u32;
            let first_row = (group as u64 * size) as u32;
            let mut j = i;
            while j < members.len() && (members[j].0 as u64 / size) as u32 == group {
                j += 1;
            }
            merge_group(&file, &input, first_row, &members[i..j], &mut |r| {
                emit(grade, &r)?;
                pending.push(r);
                if pending.len() >= CHUNK_RECORDS {
                    out.write_run(first_row, &pending)?;
                    pending.clear();
                }
                Ok(())
            })?;
            out.write_run(first_row, &pending)?;
            pending.clear();
            i = j;
        }
        out.flush()?;
        input_runs = out.runs.clone();
        input = out.path.clone();
        made.push(out.path.clone());
    }
    for p in made {
        let _ = std::fs::remove_file(p);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grades_grow_until_one_group_covers_every_row() {
        assert_eq!(grade_count(1), 1);
        assert_eq!(grade_count(8), 2);
        assert_eq!(grade_count(9), 3);
        assert_eq!(grade_count(1024), 5);
        assert_eq!(group_rows(3), 512);
    }

    #[test]
    fn groups_sum_their_rows_and_name_the_worst() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("level-0.bin");
        let mut spill = LevelSpill::create(path.clone()).expect("spill");
        let rec = |row: u32, start_ns: i64, busy: i64, func: u32| Rec {
            row,
            start_ns,
            busy_ns: [busy, 1, 0, 0],
            count: 1,
            bytes: 10,
            func,
            worst_row: row,
            worst_ns: busy,
        };
        // Rows 0..9: row 8 alone in the second group of grade 1.
        for row in 0..9u32 {
            let recs = vec![rec(row, 0, 10 * row as i64, row), rec(row, 100, 5, row)];
            spill.write_run(row, &recs).expect("run");
        }
        spill.flush().expect("flush");
        let mut got: Vec<(u32, Rec)> = Vec::new();
        build_grades(
            &path,
            &spill.runs,
            grade_count(9),
            dir.path(),
            0,
            &mut |g, r| {
                got.push((g, *r));
                Ok(())
            },
        )
        .expect("grades");
        let keys: Vec<(u32, u32, i64)> = got.iter().map(|(g, r)| (*g, r.row, r.start_ns)).collect();
        assert_eq!(
            keys,
            vec![
                (1, 0, 0),
                (1, 0, 100),
                (1, 8, 0),
                (1, 8, 100),
                (2, 0, 0),
                (2, 0, 100)
            ]
        );
        let g = got[0].1;
        assert_eq!(g.busy_ns, [280, 8, 0, 0]);
        assert_eq!((g.count, g.bytes, g.func), (8, 80, 7));
        assert_eq!((g.worst_row, g.worst_ns), (7, 70));
        let top = got[4].1;
        assert_eq!(
            (top.busy_ns[0], top.count, top.worst_row, top.worst_ns),
            (360, 9, 8, 80)
        );
        assert_eq!(got[5].1.worst_row, 0, "ties name the first row");
    }
}
