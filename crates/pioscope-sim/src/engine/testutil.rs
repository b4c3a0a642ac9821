//! Test helpers: a small hand-built system with round numbers, and a recorder that keeps
//! everything it is told.

use crate::model::*;
use crate::program::{Call, DiskActivity, FileId, IoKind, Job, Op, Rank, Recorder, ServerActivity};

/// 4 nodes × 2 ranks; 1 GB/s NICs with 1 µs latency; eager limit 64 KiB; intra-node 100 ns and
/// 10 GB/s; 2 data servers with one 100 MB/s SSD each (no latency floor), one metadata server
/// of its own; no server CPU cost; no caches; 1 MiB PVFS stripes.
pub(crate) fn system() -> System {
    System {
        name: "test".into(),
        description: String::new(),
        nodes: Nodes {
            count: 4,
            ranks_per_node: 2,
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
            latency_ns: 1_000,
            bandwidth: 1e9,
            bisection_bandwidth: 0.0,
            eager_limit: 65_536,
            intra_node_latency_ns: 100,
            intra_node_bandwidth: 1e10,
            size_factors: Vec::new(),
            intra_node_oversubscribed_bandwidth: 0.0,
            intra_node_size_factors: Vec::new(),
        },
        storage: Storage {
            null: false,
            colocated: false,
            volume: Default::default(),
            disk_access: DiskAccess::default(),
            data_servers: 2,
            metadata_servers: 1,
            metadata_on_data_servers: false,
            disks_per_server: 1,
            cpu_per_request_ns: 0,
            server_threads: 1,
            max_request: 0,
            disk: Disk::Ssd {
                latency_ns: 0,
                bandwidth: 1e8,
                iops: 0.0,
            },
            cache: Cache {
                write_back: 0,
                dirty_limit: 0,
                flush_rate: 0.0,
                read_cache: 0,
                memory_bandwidth: 1e10,
                read_memory_bandwidth: 0.0,
                rewrite_memory_bandwidth: 0.0,
                large_copy_above: 0,
                large_copy_factor: 0.0,
                background_dirty: 0,
            },
            metadata: Metadata {
                sync_op_ns: 1_000_000,
                create_syncs: 3,
                open_ns: 100_000,
                stat_ns: 50_000,
                close_ns: 10_000,
                remove_ns: 200_000,
            },
        },
        layout: Layout {
            kind: LayoutKind::Pvfs,
            stripe_size: 1 << 20,
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

/// One recorder callback, as data.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Rec {
    Call {
        rank: Rank,
        depth: u8,
        func: u16,
        start: u64,
        end: u64,
    },
    Server(ServerActivity),
    Disk(DiskActivity),
}

/// Keeps every callback in order.
#[derive(Debug, Default)]
pub(crate) struct Log(pub Vec<Rec>);

impl Recorder for Log {
    fn call(&mut self, rank: Rank, depth: u8, call: &Call, start_ns: u64, end_ns: u64) {
        self.0.push(Rec::Call {
            rank,
            depth,
            func: call.func,
            start: start_ns,
            end: end_ns,
        });
    }
    fn server(&mut self, a: &ServerActivity) {
        self.0.push(Rec::Server(a.clone()));
    }
    fn disk(&mut self, a: &DiskActivity) {
        self.0.push(Rec::Disk(a.clone()));
    }
}

impl Log {
    /// (start, end) of the calls of `rank`, in completion order.
    pub(crate) fn calls(&self, rank: Rank) -> Vec<(u64, u64)> {
        self.0
            .iter()
            .filter_map(|r| match r {
                Rec::Call {
                    rank: x,
                    start,
                    end,
                    ..
                } if *x == rank => Some((*start, *end)),
                _ => None,
            })
            .collect()
    }
}

/// A call of function `func` (no file, no peer).
pub(crate) fn call(func: u16) -> Call {
    Call {
        func,
        file: None,
        offset: None,
        size: 0,
        collective: false,
        instance: None,
        peer: None,
        observed_id: None,
    }
}

/// When each rank of `programs` finished, on `sys` with files /f0, /f1, ... (`files` of them).
pub(crate) fn rank_ends(sys: &System, programs: Vec<Vec<Op>>, files: usize) -> Vec<u64> {
    let job = Job {
        programs,
        files: (0..files).map(|i| format!("/f{i}")).collect(),
        description: "test".into(),
    };
    super::run(sys, &job, 1, &mut Log::default())
        .expect("run")
        .rank_end_ns
}

/// A write of 4 KiB at `offset` of `file`.
pub(crate) fn write_4k(file: FileId, offset: u64) -> Op {
    Op::Io {
        file,
        kind: IoKind::Write,
        offset,
        bytes: 4_096,
    }
}

/// `system()` with one data server and a 1 GiB write-back cache flushed at 100 MB/s: a 4 KiB
/// write alone takes 4,096 ns on the wire, 1 µs latency, a 410 ns copy, the ack's 1 µs.
pub(crate) fn one_server_write_back() -> System {
    let mut sys = system();
    sys.storage.data_servers = 1;
    sys.storage.cache.write_back = 1 << 30;
    sys.storage.cache.dirty_limit = 1 << 30;
    sys.storage.cache.flush_rate = 1e8;
    sys
}
