//! MPI-IO as ROMIO does it: one MPI-IO call of one rank (independent) or of every rank (a
//! collective) compiled into the primitive `Op`s of the engine, wrapped in `Begin`/`End` so the
//! simulated trace shows the same calls a traced ROMIO run shows: the `MPI_File_*` call, and
//! beneath it the messages of the exchange and the `pread`/`pwrite` children.
//!
//! - independent contiguous: one `pwrite`/`pread`;
//! - independent noncontiguous, data sieving on: read-modify-write in `ind_wr_buffer_size`
//!   windows, each under a byte-range lock (ROMIO's `ADIOI_BUFFERED_WRITE`), reads in
//!   `ind_rd_buffer_size` windows; sieving off: one access per contiguous piece; on PVFS2
//!   (`mpiio.driver = "pvfs2"`) list I/O instead (`pvfs2`);
//! - collective: ROMIO's two-phase (`twophase`), or the independent strategy when collective
//!   buffering is disabled or, on `automatic`, when the ranks' ranges do not interleave.
//!
//! Docs: docs/MODEL.md, "MPI-IO (ROMIO)".

mod calendar;
pub mod calls;
pub mod hints;
pub mod pattern;
pub mod pvfs2;
pub mod twophase;

use thiserror::Error;

use crate::model::{Driver, Placement, System, Toggle};
use crate::program::{Call, FileId, IoKind, MetaKind, Op, Rank};

pub use hints::Hints;
pub use pattern::{Pattern, Runs};

use calls::{file_call, wrap};

/// Errors planning MPI-IO.
#[derive(Debug, Error, PartialEq)]
pub enum RomioError {
    /// A hint with a value ROMIO would not accept.
    #[error("hint {key}={value:?}: {why}")]
    BadHint {
        /// The hint.
        key: String,
        /// Its value.
        value: String,
        /// What is wrong.
        why: String,
    },
    /// More ranks than the machine has slots for.
    #[error("{ranks} ranks do not fit on {nodes} nodes × {per_node} ranks per node (nodes.count, nodes.ranks_per_node)")]
    TooManyRanks {
        /// Ranks asked for.
        ranks: u32,
        /// nodes.count.
        nodes: u32,
        /// nodes.ranks_per_node.
        per_node: u32,
    },
}

/// The node of every rank, from `nodes.placement` and `nodes.ranks_per_node`.
pub fn rank_nodes(system: &System, ranks: u32) -> Result<Vec<u32>, RomioError> {
    let n = &system.nodes;
    let slots = u64::from(n.count) * u64::from(n.ranks_per_node);
    if u64::from(ranks) > slots || n.count == 0 || n.ranks_per_node == 0 {
        return Err(RomioError::TooManyRanks {
            ranks,
            nodes: n.count,
            per_node: n.ranks_per_node,
        });
    }
    Ok((0..ranks)
        .map(|r| match n.placement {
            Placement::Block => r / n.ranks_per_node,
            Placement::RoundRobin => r % n.count,
        })
        .collect())
}

/// What one MPI-IO data call is, apart from the bytes it touches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    /// functions.def id of the call (MPI_File_write_all, MPI_File_read_at, ...).
    pub func: u16,
    /// The file.
    pub file: FileId,
    /// Read or write.
    pub kind: IoKind,
}

/// Data-sieving volume of one independent noncontiguous access: what the closed-form tests
/// check and the docs state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SieveVolume {
    /// Windows (each one lock for writes).
    pub windows: u64,
    /// Bytes read (writes: the windows with holes; reads: every window).
    pub read: u64,
    /// Bytes written (writes: every window).
    pub written: u64,
}

/// The data-sieving windows of `pattern`: ROMIO starts a window at the first accessed byte
/// not yet covered and makes it `buffer` bytes long, cut at the end of the access. Returns
/// (offset, length, has_holes) per window.
pub fn sieve_windows(pattern: &Pattern, buffer: u64) -> Vec<(u64, u64, bool)> {
    let mut out = Vec::new();
    let Some((_, end)) = pattern.extent() else {
        return out;
    };
    let buffer = buffer.max(1);
    let mut a = 0;
    while let Some(s) = pattern.next_at_or_after(a) {
        if s >= end {
            break;
        }
        let b = (s + buffer).min(end);
        let holes = pattern.bytes_in(s, b) < b - s;
        out.push((s, b - s, holes));
        a = b;
    }
    out
}

/// Data-sieving volume of an independent access under `hints` (zero when sieving is off, the
/// access is contiguous or the driver is ad_pvfs2, which never sieves).
pub fn sieve_volume(pattern: &Pattern, kind: IoKind, hints: &Hints) -> SieveVolume {
    if pattern.is_contiguous() || hints.mpiio.driver == Driver::Pvfs2 {
        return SieveVolume::default();
    }
    let (on, buffer) = match kind {
        IoKind::Write => (
            hints.mpiio.ds_write != Toggle::Disable,
            hints.mpiio.ind_wr_buffer_size,
        ),
        IoKind::Read => (
            hints.mpiio.ds_read != Toggle::Disable,
            hints.mpiio.ind_rd_buffer_size,
        ),
    };
    if !on {
        return SieveVolume::default();
    }
    let mut v = SieveVolume::default();
    for (_, len, holes) in sieve_windows(pattern, buffer) {
        v.windows += 1;
        match kind {
            IoKind::Write => {
                v.written += len;
                if holes {
                    v.read += len;
                }
            }
            IoKind::Read => v.read += len,
        }
    }
    v
}

/// The `Call` of an MPI-IO data call: offset = first byte accessed, size = bytes accessed.
pub fn data_call(
    req: &Request,
    pattern: &Pattern,
    collective: bool,
    instance: Option<u32>,
) -> Call {
    Call {
        func: req.func,
        file: Some(req.file),
        offset: Some(pattern.extent().map_or(0, |e| e.0)),
        size: pattern.bytes(),
        collective,
        instance,
        peer: None,
        observed_id: None,
    }
}

/// The POSIX children of an independent access (no `Begin` of the MPI-IO call): one access
/// when contiguous, sieving windows, or one access per piece.
pub fn independent_body(prog: &mut Vec<Op>, req: &Request, pattern: &Pattern, hints: &Hints) {
    let file = req.file;
    let posix = |kind: IoKind| match kind {
        IoKind::Read => calls::POSIX_PREAD,
        IoKind::Write => calls::POSIX_PWRITE,
    };
    let io = |prog: &mut Vec<Op>, kind: IoKind, offset: u64, bytes: u64| {
        wrap(
            prog,
            file_call(posix(kind), file, Some(offset), bytes),
            [Op::Io {
                file,
                kind,
                offset,
                bytes,
            }],
        );
    };
    let Some((lo, hi)) = pattern.extent() else {
        return;
    };
    if pattern.is_contiguous() {
        io(prog, req.kind, lo, hi - lo);
        return;
    }
    if hints.mpiio.driver == Driver::Pvfs2 {
        pvfs2::strided(prog, req, pattern, &hints.mpiio.pvfs2);
        return;
    }
    let (on, buffer) = match req.kind {
        IoKind::Write => (
            hints.mpiio.ds_write != Toggle::Disable,
            hints.mpiio.ind_wr_buffer_size,
        ),
        IoKind::Read => (
            hints.mpiio.ds_read != Toggle::Disable,
            hints.mpiio.ind_rd_buffer_size,
        ),
    };
    if !on {
        for (o, l) in pattern.pieces_between(lo, hi) {
            io(prog, req.kind, o, l);
        }
        return;
    }
    // A sieving write locks the whole range it touches, first to last byte, for the whole
    // call (recent ROMIO's `ADIOI_GEN_WriteStrided` with data sieving on; older ones locked
    // each window): ranks whose ranges overlap write one after another, as the traced HPIO
    // runs with MPICH 4 show.
    let whole = (lo, hi - lo);
    if req.kind == IoKind::Write {
        prog.push(Op::Lock {
            file,
            offset: whole.0,
            bytes: whole.1,
        });
    }
    for (o, l, holes) in sieve_windows(pattern, buffer) {
        if req.kind == IoKind::Write && holes {
            io(prog, IoKind::Read, o, l);
        }
        io(prog, req.kind, o, l);
    }
    if req.kind == IoKind::Write {
        prog.push(Op::Unlock {
            file,
            offset: whole.0,
            bytes: whole.1,
        });
    }
}

/// A whole independent call: `Begin(call)`, the client overhead, the body, `End`.
pub fn independent(
    prog: &mut Vec<Op>,
    req: &Request,
    pattern: &Pattern,
    hints: &Hints,
    observed_id: Option<i64>,
) {
    let mut c = data_call(req, pattern, false, None);
    c.observed_id = observed_id;
    prog.push(Op::Begin(Box::new(c)));
    if hints.mpiio.call_overhead_ns > 0 {
        prog.push(Op::Compute {
            ns: hints.mpiio.call_overhead_ns,
        });
    }
    independent_body(prog, req, pattern, hints);
    prog.push(Op::End);
}

/// `MPI_File_open` of one rank. Collective opens agree first (an Allreduce), rank 0 creates
/// the file when asked, and every other rank opens it after the broadcast; an open on
/// MPI_COMM_SELF (`collective` false) creates or opens alone.
pub fn open(
    prog: &mut Vec<Op>,
    rank: Rank,
    file: FileId,
    create: bool,
    collective: bool,
    instance: Option<u32>,
    hints: &Hints,
) {
    let c = Call {
        file: Some(file),
        collective,
        instance,
        ..calls::call(calls::MPI_FILE_OPEN)
    };
    prog.push(Op::Begin(Box::new(c)));
    if hints.mpiio.call_overhead_ns > 0 {
        prog.push(Op::Compute {
            ns: hints.mpiio.call_overhead_ns,
        });
    }
    let creator = create && (rank == 0 || !collective);
    if collective {
        calls::small_collective(prog, calls::MPI_ALLREDUCE, 4);
    }
    if creator {
        wrap(
            prog,
            file_call(calls::POSIX_OPEN, file, None, 0),
            [Op::Meta {
                file,
                kind: MetaKind::Create,
            }],
        );
    }
    if collective {
        calls::small_collective(prog, calls::MPI_BCAST, 4);
    }
    if !creator {
        wrap(
            prog,
            file_call(calls::POSIX_OPEN, file, None, 0),
            [Op::Meta {
                file,
                kind: MetaKind::Open,
            }],
        );
    }
    prog.push(Op::End);
}

/// `MPI_File_set_view` (collective: ROMIO checks the arguments agree, one Allreduce).
pub fn set_view(prog: &mut Vec<Op>, file: FileId, offset: u64, instance: Option<u32>) {
    let c = Call {
        file: Some(file),
        offset: Some(offset),
        collective: true,
        instance,
        ..calls::call(calls::MPI_FILE_SET_VIEW)
    };
    prog.push(Op::Begin(Box::new(c)));
    calls::small_collective(prog, calls::MPI_ALLREDUCE, 4);
    prog.push(Op::End);
}

/// `MPI_File_sync`: an fsync of the rank's descriptor (waits for the file's dirty data), only
/// if the rank wrote the file since it opened or last synced it: ROMIO's ADIOI_GEN_Flush skips
/// the fsync of a process that did no writes (`fd->dirty_write`), as the traced MPICH 4 runs
/// show (HPIO's collective write: only the aggregator's MPI_File_sync calls fsync).
pub fn sync(prog: &mut Vec<Op>, file: FileId, collective: bool, instance: Option<u32>) {
    let c = Call {
        file: Some(file),
        collective,
        instance,
        ..calls::call(calls::MPI_FILE_SYNC)
    };
    let dirty = wrote_since_sync(prog, file);
    prog.push(Op::Begin(Box::new(c)));
    if dirty {
        wrap(
            prog,
            file_call(calls::POSIX_FSYNC, file, None, 0),
            [Op::Meta {
                file,
                kind: MetaKind::Sync,
            }],
        );
    }
    prog.push(Op::End);
}

/// Whether `prog` writes `file` after its last open, create or sync of it. The scan stops at
/// the previous `MPI_File_sync` of the file too, whether it fsynced or not (the file was clean
/// after it), so a rank that never writes but syncs at every step costs one step's ops per
/// sync, not its whole program.
fn wrote_since_sync(prog: &[Op], file: FileId) -> bool {
    for op in prog.iter().rev() {
        match op {
            Op::Begin(c) if c.func == calls::MPI_FILE_SYNC && c.file == Some(file) => return false,
            Op::Io {
                file: f,
                kind: IoKind::Write,
                ..
            } if *f == file => return true,
            Op::IoList(list) if list.file == file && list.kind == IoKind::Write => return true,
            Op::Meta {
                file: f,
                kind: MetaKind::Sync | MetaKind::Open | MetaKind::Create,
            } if *f == file => return false,
            _ => {}
        }
    }
    false
}

/// `MPI_File_close`: a barrier when collective, then close of the descriptor.
pub fn close(prog: &mut Vec<Op>, file: FileId, collective: bool, instance: Option<u32>) {
    let c = Call {
        file: Some(file),
        collective,
        instance,
        ..calls::call(calls::MPI_FILE_CLOSE)
    };
    prog.push(Op::Begin(Box::new(c)));
    if collective {
        wrap(
            prog,
            calls::mpi_collective(calls::MPI_BARRIER, 0),
            [Op::Barrier],
        );
    }
    wrap(
        prog,
        file_call(calls::POSIX_CLOSE, file, None, 0),
        [Op::Meta {
            file,
            kind: MetaKind::Close,
        }],
    );
    prog.push(Op::End);
}

/// `MPI_File_delete`: an unlink.
pub fn delete(prog: &mut Vec<Op>, file: FileId) {
    let c = Call {
        file: Some(file),
        ..calls::call(calls::MPI_FILE_DELETE)
    };
    prog.push(Op::Begin(Box::new(c)));
    wrap(
        prog,
        file_call(calls::POSIX_UNLINK, file, None, 0),
        [Op::Meta {
            file,
            kind: MetaKind::Remove,
        }],
    );
    prog.push(Op::End);
}

/// A small machine for unit tests.
#[cfg(test)]
pub(crate) mod tests_support {
    use crate::model::*;

    pub(crate) fn system() -> System {
        System {
            name: "test".into(),
            description: String::new(),
            nodes: Nodes {
                count: 4,
                ranks_per_node: 4,
                placement: Placement::Block,
                cores: 0,
                handoff_ns: 0,
                fresh_memory_bandwidth: 0.0,
                client_cpu_per_request_ns: 0,
                client_cpu_bandwidth: 0.0,
                client_file_lock: false,
                wakeup_slice_ns: 0,
            },
            network: Network {
                latency_ns: 1000,
                bandwidth: 1e9,
                bisection_bandwidth: 0.0,
                eager_limit: 16384,
                intra_node_latency_ns: 100,
                intra_node_bandwidth: 1e10,
                size_factors: vec![],
                intra_node_oversubscribed_bandwidth: 0.0,
                intra_node_size_factors: vec![],
            },
            storage: Storage {
                null: false,
                colocated: false,
                volume: Default::default(),
                disk_access: DiskAccess::default(),
                data_servers: 4,
                metadata_servers: 1,
                metadata_on_data_servers: false,
                disks_per_server: 1,
                cpu_per_request_ns: 1000,
                server_threads: 1,
                max_request: 1 << 20,
                disk: Disk::Ssd {
                    latency_ns: 1000,
                    bandwidth: 1e9,
                    iops: 1e5,
                },
                cache: Cache {
                    write_back: 0,
                    dirty_limit: 0,
                    flush_rate: 1e9,
                    read_cache: 0,
                    memory_bandwidth: 1e10,
                    read_memory_bandwidth: 0.0,
                    rewrite_memory_bandwidth: 0.0,
                    large_copy_above: 0,
                    large_copy_factor: 0.0,
                    background_dirty: 0,
                },
                metadata: Metadata {
                    sync_op_ns: 1000,
                    create_syncs: 3,
                    open_ns: 1000,
                    stat_ns: 1000,
                    close_ns: 0,
                    remove_ns: 1000,
                },
            },
            layout: Layout {
                kind: LayoutKind::Pvfs,
                stripe_size: 65536,
                stripe_count: 0,
                start: StripeStart::First,
            },
            mpiio: MpiIo::romio_defaults(),
            calibration: None,
            lustre: None,
            client_cache: Default::default(),
            variance: Variance::default(),
        }
    }

    /// (kind, offset, bytes) of a program's Io ops, in order.
    pub(crate) fn io_ops(p: &[crate::program::Op]) -> Vec<(crate::program::IoKind, u64, u64)> {
        p.iter()
            .filter_map(|o| match o {
                crate::program::Op::Io {
                    kind,
                    offset,
                    bytes,
                    ..
                } => Some((*kind, *offset, *bytes)),
                _ => None,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::tests_support::{io_ops, system};
    use super::*;
    use crate::model::*;

    fn hpio(rank: u64, ranks: u64, size: u64, space: u64, count: u64) -> Pattern {
        Pattern::vector(rank * (size + space), count, size, ranks * (size + space))
    }

    /// Issue 4: data-sieving volume in closed form. HPIO with 4 ranks, 32768 regions of 32
    /// bytes every P = 4·160 = 640 bytes: a rank's access spans S = 32767·P + 32 bytes. A
    /// window starts at a region and is B = 512 KiB long; B mod P = 128 ≥ 32 ends it inside a
    /// hole, so the next window starts at the next region, A = ceil(B / P)·P bytes further.
    /// Windows W = ceil(S / A); written = (W − 1)·B + (S − (W − 1)·A); every window has holes,
    /// so read = written.
    #[test]
    fn data_sieving_volume_closed_form() {
        let h = Hints::from_system(&system());
        let (ranks, size, space, count) = (4u64, 32u64, 128u64, 32768u64);
        let p_len = ranks * (size + space);
        let b = h.mpiio.ind_wr_buffer_size;
        assert!(b % p_len >= size);
        let a = b.div_ceil(p_len) * p_len;
        for r in 0..ranks {
            let p = hpio(r, ranks, size, space, count);
            let span = (count - 1) * p_len + size;
            let w = span.div_ceil(a);
            let v = sieve_volume(&p, IoKind::Write, &h);
            assert_eq!(v.windows, w, "rank {r}");
            assert_eq!(v.written, (w - 1) * b + (span - (w - 1) * a), "rank {r}");
            assert_eq!(v.read, v.written, "rank {r}");
            // Reads: ind_rd_buffer_size = 4 MiB = 6553.6 periods, same rule.
            let br = h.mpiio.ind_rd_buffer_size;
            let ar = if br % p_len >= size {
                br.div_ceil(p_len) * p_len
            } else {
                br
            };
            let wr = span.div_ceil(ar);
            let rv = sieve_volume(&p, IoKind::Read, &h);
            assert_eq!(rv.windows, wr);
            assert_eq!(rv.read, (wr - 1) * br + (span - (wr - 1) * ar));
            assert_eq!(rv.written, 0);
        }
        // A window exactly one period long and aligned on it: the stride 640 = 4·160 with a
        // 640-byte buffer: one window per region, each 640 bytes except the last (32 bytes).
        let mut h2 = h.clone();
        h2.mpiio.ind_wr_buffer_size = 640;
        let p = hpio(0, 4, 32, 128, 10);
        let v = sieve_volume(&p, IoKind::Write, &h2);
        assert_eq!(v.windows, 10);
        assert_eq!(v.written, 9 * 640 + 32);
        assert_eq!(v.read, 9 * 640);
        // No holes: a contiguous access is not sieved.
        let c = Pattern::contiguous(100, 1 << 20);
        assert_eq!(sieve_volume(&c, IoKind::Write, &h), SieveVolume::default());
    }

    #[test]
    fn independent_ops_follow_the_strategy() {
        let mut h = Hints::from_system(&system());
        let req = Request {
            func: calls::MPI_FILE_WRITE,
            file: 0,
            kind: IoKind::Write,
        };
        let p = hpio(1, 4, 32, 128, 1024);
        let mut prog = Vec::new();
        independent(&mut prog, &req, &p, &h, Some(7));
        let ios = io_ops(&prog);
        // The traced ROMIO run of tests/data/hpio-independent (rank 1): pread+pwrite of
        // 524288 at 160, then pread+pwrite of 129952 at 524960.
        assert_eq!(
            ios,
            vec![
                (IoKind::Read, 160, 524288),
                (IoKind::Write, 160, 524288),
                (IoKind::Read, 524960, 129952),
                (IoKind::Write, 524960, 129952),
            ]
        );
        // One lock over the whole range: [160, 524960 + 129952).
        let locks: Vec<_> = prog
            .iter()
            .filter_map(|o| match o {
                Op::Lock { offset, bytes, .. } => Some((*offset, *bytes)),
                _ => None,
            })
            .collect();
        assert_eq!(locks, vec![(160, 524960 + 129952 - 160)]);
        assert!(
            matches!(&prog[0], Op::Begin(c) if c.observed_id == Some(7) && c.offset == Some(160) && c.size == 32768)
        );
        h.mpiio.ds_write = Toggle::Disable;
        let mut prog = Vec::new();
        independent(&mut prog, &req, &p, &h, None);
        assert_eq!(
            prog.iter().filter(|o| matches!(o, Op::Io { .. })).count(),
            1024
        );
        assert_eq!(
            prog.iter().filter(|o| matches!(o, Op::Lock { .. })).count(),
            0
        );
    }

    #[test]
    fn too_many_ranks() {
        assert!(rank_nodes(&system(), 16).is_ok());
        assert!(matches!(
            rank_nodes(&system(), 17),
            Err(RomioError::TooManyRanks { .. })
        ));
        let mut s = system();
        s.nodes.placement = Placement::RoundRobin;
        assert_eq!(rank_nodes(&s, 6).unwrap(), vec![0, 1, 2, 3, 0, 1]);
    }

    /// MPI_File_sync fsyncs only after a write of the file since its open or last sync (a
    /// non-aggregator of a collective write: none), and a write of another file does not count.
    #[test]
    fn sync_only_after_a_write() {
        let syncs = |prog: &[Op]| {
            prog.iter()
                .filter(|op| {
                    matches!(
                        op,
                        Op::Meta {
                            kind: MetaKind::Sync,
                            ..
                        }
                    )
                })
                .count()
        };
        let write = |file| Op::Io {
            file,
            kind: IoKind::Write,
            offset: 0,
            bytes: 1,
        };
        let mut prog = vec![Op::Meta {
            file: 0,
            kind: MetaKind::Open,
        }];
        sync(&mut prog, 0, true, None);
        assert_eq!(syncs(&prog), 0);
        prog.push(write(1));
        sync(&mut prog, 0, true, None);
        assert_eq!(syncs(&prog), 0);
        prog.push(write(0));
        sync(&mut prog, 0, true, None);
        assert_eq!(syncs(&prog), 1);
        sync(&mut prog, 0, true, None);
        assert_eq!(syncs(&prog), 1);
    }
}
