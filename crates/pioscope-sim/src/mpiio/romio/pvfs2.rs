//! ROMIO's PVFS2 driver (ad_pvfs2) for an independent noncontiguous access: it never sieves
//! (PVFS2 has no locks); ADIOI_PVFS2_WriteStrided (ReadStrided alike) sends the pieces as
//! lists in `PVFS_sys_write` calls, each of which the PVFS2 client turns into one request per
//! server (the engine's `Op::IoList`).
//!
//! Which calls, by the `romio_pvfs2_*` hints (ADIOI_PVFS2_SetInfo disables them all), the first
//! that applies: posix (ADIOI_GEN_WriteStrided_naive: one call per piece), dtype (the MPI
//! datatype converted to one PVFS request: one call), listio (ad_pvfs2_io_list.c: at most
//! MAX_OL_COUNT = 64 pieces per call), none (the classic list I/O of
//! ad_pvfs2_write_list_classic.c: at most MAX_ARRAY_SIZE = 64 pieces per call).
//!
//! Docs: docs/MODEL.md, "MPI-IO (ROMIO)", "Independent calls".

use crate::model::Pvfs2Hints;
use crate::program::{IoKind, IoList, Op};

use super::calls::{file_call, wrap, POSIX_PREAD, POSIX_PWRITE};
use super::{Pattern, Request};

/// File pieces per list I/O call: MAX_OL_COUNT (ad_pvfs2_io_list.c) and MAX_ARRAY_SIZE (the
/// classic list I/O, "several parts of PVFS2 now assume this limit").
pub const LIST_PIECES: u64 = 64;

/// Pieces per `PVFS_sys_write`/`_read` of an access of `pieces` pieces, by the hints.
pub fn pieces_per_call(kind: IoKind, hints: &Pvfs2Hints, pieces: u64) -> u64 {
    let (posix, dtype) = match kind {
        IoKind::Write => (hints.posix_write, hints.dtype_write),
        IoKind::Read => (hints.posix_read, hints.dtype_read),
    };
    // listio and the classic default both send lists of LIST_PIECES.
    if posix {
        1
    } else if dtype {
        pieces.max(1)
    } else {
        LIST_PIECES
    }
}

/// The calls of a noncontiguous access of `pattern` (no `Begin` of the MPI-IO call): each
/// `PVFS_sys_write`/`_read` shown as a `pwrite`/`pread` child (offset = its first byte, size =
/// its bytes, as the simulator shows every file-system client call) around one access of its
/// pieces: an `Io` for one piece, an `IoList` for more.
pub fn strided(prog: &mut Vec<Op>, req: &Request, pattern: &Pattern, hints: &Pvfs2Hints) {
    let Some((lo, hi)) = pattern.extent() else {
        return;
    };
    let per_call = pieces_per_call(req.kind, hints, pattern.pieces()) as usize;
    let func = match req.kind {
        IoKind::Read => POSIX_PREAD,
        IoKind::Write => POSIX_PWRITE,
    };
    let mut pieces = pattern.pieces_between(lo, hi).peekable();
    while pieces.peek().is_some() {
        let list: Vec<(u64, u64)> = pieces.by_ref().take(per_call).collect();
        let bytes = list.iter().map(|p| p.1).sum();
        let offset = list[0].0;
        let op = if let [(offset, bytes)] = list[..] {
            Op::Io {
                file: req.file,
                kind: req.kind,
                offset,
                bytes,
            }
        } else {
            Op::IoList(Box::new(IoList {
                file: req.file,
                kind: req.kind,
                pieces: list,
            }))
        };
        wrap(prog, file_call(func, req.file, Some(offset), bytes), [op]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mpiio::romio::calls::MPI_FILE_WRITE;

    fn calls(prog: &[Op]) -> Vec<(u64, u64, usize)> {
        prog.iter()
            .filter_map(|o| match o {
                Op::Io { offset, bytes, .. } => Some((*offset, *bytes, 1)),
                Op::IoList(l) => Some((
                    l.pieces[0].0,
                    l.pieces.iter().map(|p| p.1).sum(),
                    l.pieces.len(),
                )),
                _ => None,
            })
            .collect()
    }

    /// Issue 15: 150 regions of 1 KiB every 2 KiB: list I/O sends 64 + 64 + 22 pieces, dtype
    /// one call of 150, posix one call per region; the hints of reads are separate.
    #[test]
    fn the_hints_choose_the_calls() {
        let req = Request {
            func: MPI_FILE_WRITE,
            file: 0,
            kind: IoKind::Write,
        };
        let p = Pattern::vector(0, 150, 1024, 2048);
        let run = |h: &Pvfs2Hints| {
            let mut prog = Vec::new();
            strided(&mut prog, &req, &p, h);
            calls(&prog)
        };
        let mut h = Pvfs2Hints::default();
        assert_eq!(
            run(&h),
            vec![
                (0, 64 << 10, 64),
                (64 * 2048, 64 << 10, 64),
                (128 * 2048, 22 << 10, 22)
            ]
        );
        h.listio_write = true;
        assert_eq!(run(&h).len(), 3);
        h.dtype_write = true;
        assert_eq!(run(&h), vec![(0, 150 << 10, 150)]);
        h.posix_write = true;
        assert_eq!(run(&h).len(), 150);
        assert_eq!(run(&h)[1], (2048, 1024, 1));
        assert_eq!(pieces_per_call(IoKind::Read, &h, 150), LIST_PIECES);
    }
}
