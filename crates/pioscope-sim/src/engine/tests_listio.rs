//! Issue 15, item 1: PVFS2 requests as the real client sends them. One request per target per
//! access, carrying the pieces the target holds, served in flow buffers of `max_request`
//! bytes (the server's CPU and storage accesses per buffer); ad_pvfs2's list I/O against one
//! access per piece. Closed forms on the hand-built system of `testutil` (1 GB/s NICs, 1 µs
//! latency, 64 KiB eager limit, 100 MB/s SSDs without a latency floor, no server CPU cost).

use super::testutil::{call, system, Log, Rec};
use super::{run, RunSummary};
use crate::model::{Driver, System};
use crate::mpiio::romio::{calls, independent, Hints, Pattern, Request};
use crate::program::{DiskActivity, IoKind, Job, Op, ServerActivity};

const KIB: u64 = 1 << 10;

fn go(sys: &System, program: Vec<Op>) -> (RunSummary, Log) {
    let job = Job {
        programs: vec![program],
        files: vec!["/f0".into()],
        description: "test".into(),
    };
    let mut log = Log::default();
    let s = run(sys, &job, 1, &mut log).expect("run");
    (s, log)
}

fn servers(log: &Log) -> Vec<ServerActivity> {
    log.0
        .iter()
        .filter_map(|r| match r {
            Rec::Server(a) => Some(a.clone()),
            _ => None,
        })
        .collect()
}

fn disks(log: &Log) -> Vec<DiskActivity> {
    log.0
        .iter()
        .filter_map(|r| match r {
            Rec::Disk(a) => Some(a.clone()),
            _ => None,
        })
        .collect()
}

/// A write of `bytes` at offset 0 of file 0, bracketed so the log shows when it ended.
fn write_of(bytes: u64) -> Vec<Op> {
    vec![
        Op::Begin(Box::new(call(1))),
        Op::Io {
            file: 0,
            kind: IoKind::Write,
            offset: 0,
            bytes,
        },
        Op::End,
    ]
}

/// One client, one server, 64 KiB stripes, 16 KiB flow buffers.
fn one_server() -> System {
    let mut sys = system();
    sys.storage.data_servers = 1;
    sys.layout.stripe_size = 64 * KIB;
    sys.storage.max_request = 16 * KIB;
    sys
}

/// The program of one `MPI_File_write` of HPIO's pattern on one rank: 64 regions of 1 KiB,
/// 128 bytes apart.
fn hpio_write(hints: &Hints) -> Vec<Op> {
    let req = Request {
        func: calls::MPI_FILE_WRITE,
        file: 0,
        kind: IoKind::Write,
    };
    let mut prog = Vec::new();
    independent(
        &mut prog,
        &req,
        &Pattern::vector(0, 64, KIB, KIB + 128),
        hints,
        None,
    );
    prog
}

/// List I/O (ad_pvfs2's default): one PVFS_sys_write of the 64 regions, one request in 4
/// flow buffers of 16 regions, so 4 server records and 4 storage accesses of 16 KiB. The 64 KiB
/// request is eager: 4 flows of 16 KiB share the client's NIC (65,536 ns), 1 µs latency, then
/// the disk writes the 64 runs of 1 KiB (holes between them) one after another, 10,240 ns
/// each (655,360 ns), the ack 1 µs: 722,896 ns.
#[test]
fn list_io_is_one_request_served_in_flow_buffers() {
    let sys = one_server();
    let mut hints = Hints::from_system(&sys);
    hints.mpiio.driver = Driver::Pvfs2;
    let (s, log) = go(&sys, hpio_write(&hints));
    assert_eq!((s.requests, s.flow_buffers), (1, 4));
    let srv = servers(&log);
    assert_eq!(
        srv.iter().map(|a| (a.offset, a.bytes)).collect::<Vec<_>>(),
        (0..4)
            .map(|k| (k * 16 * (KIB + 128), 16 * KIB))
            .collect::<Vec<_>>()
    );
    let d = disks(&log);
    assert_eq!(d.len(), 4);
    assert!(d.iter().all(|a| a.bytes == 16 * KIB));
    assert_eq!(log.calls(0).last(), Some(&(0, 722_896)));
}

/// Without list I/O (`romio_pvfs2_posix_write`, or the generic driver with sieving off):
/// 64 requests, 64 server records and 64 storage accesses of 1 KiB, each access a blocking
/// round of 1,024 ns flow + 1 µs + 10,240 ns disk + 1 µs ack = 13,264 ns: 848,896 ns.
#[test]
fn without_list_io_every_region_is_a_request() {
    let sys = one_server();
    let mut posix = Hints::from_system(&sys);
    posix.mpiio.driver = Driver::Pvfs2;
    posix
        .set("romio_pvfs2_posix_write", "enable")
        .expect("hint");
    let mut generic = Hints::from_system(&sys);
    generic.set("romio_ds_write", "disable").expect("hint");
    for hints in [posix, generic] {
        let (s, log) = go(&sys, hpio_write(&hints));
        assert_eq!((s.requests, s.flow_buffers), (64, 64));
        assert_eq!(servers(&log).len(), 64);
        let d = disks(&log);
        assert_eq!(d.len(), 64);
        assert!(d.iter().all(|a| a.bytes == KIB));
        assert_eq!(log.calls(0).last(), Some(&(0, 848_896)));
    }
}

/// `romio_pvfs2_listio_write=enable` and `romio_pvfs2_dtype_write=enable` change the calls
/// ROMIO makes: 150 regions are 3 list calls (64 + 64 + 22) or one datatype call, so 3
/// requests or 1.
#[test]
fn the_hints_change_the_requests() {
    let sys = one_server();
    let req = Request {
        func: calls::MPI_FILE_WRITE,
        file: 0,
        kind: IoKind::Write,
    };
    let pattern = Pattern::vector(0, 150, KIB, KIB + 128);
    let requests = |hint: &str| {
        let mut hints = Hints::from_system(&sys);
        hints.mpiio.driver = Driver::Pvfs2;
        hints.set(hint, "enable").expect("hint");
        let mut prog = Vec::new();
        independent(&mut prog, &req, &pattern, &hints, None);
        go(&sys, prog).0.requests
    };
    assert_eq!(requests("romio_pvfs2_listio_write"), 3);
    assert_eq!(requests("romio_pvfs2_dtype_write"), 1);
    assert_eq!(requests("romio_pvfs2_posix_write"), 150);
}

/// A contiguous access spanning 8 stripes of 64 KiB on 2 servers is one request per server
/// (4 stripes each, back to back in its datafile), each one 256 KiB flow buffer and one
/// storage access. Above the eager limit: the rendezvous (2 µs), the two 256 KiB flows sharing
/// the client's NIC (524,288 ns), 1 µs, 256 KiB on each SSD (2,621,440 ns), the ack 1 µs:
/// 3,149,728 ns.
#[test]
fn a_request_spanning_stripes_is_one_per_server() {
    let mut sys = system();
    sys.layout.stripe_size = 64 * KIB;
    sys.storage.max_request = 256 * KIB;
    let (s, log) = go(&sys, write_of(512 * KIB));
    assert_eq!((s.requests, s.flow_buffers), (2, 2));
    let mut srv: Vec<(u32, u64, u64)> = servers(&log)
        .iter()
        .map(|a| (a.server, a.offset, a.bytes))
        .collect();
    srv.sort();
    assert_eq!(srv, vec![(0, 0, 256 * KIB), (1, 64 * KIB, 256 * KIB)]);
    let d = disks(&log);
    assert_eq!(d.len(), 2);
    assert!(d.iter().all(|a| a.offset == 0 && a.bytes == 256 * KIB));
    assert_eq!(log.calls(0), vec![(0, 3_149_728)]);
    // Smaller flow buffers: two per server, each one storage access of 128 KiB.
    sys.storage.max_request = 128 * KIB;
    let (s, log) = go(&sys, write_of(512 * KIB));
    assert_eq!((s.requests, s.flow_buffers), (2, 4));
    assert!(disks(&log).iter().all(|a| a.bytes == 128 * KIB));
}

/// Reads of a list: the same requests and buffers, one disk read per buffer.
#[test]
fn list_reads_are_served_in_flow_buffers() {
    let sys = one_server();
    let list = Op::IoList(Box::new(crate::program::IoList {
        file: 0,
        kind: IoKind::Read,
        pieces: (0..64).map(|i| (i * (KIB + 128), KIB)).collect(),
    }));
    let (s, log) = go(&sys, vec![list]);
    assert_eq!((s.requests, s.flow_buffers), (1, 4));
    let d = disks(&log);
    assert_eq!(d.len(), 4);
    assert!(d.iter().all(|a| a.func == 800 && a.bytes == 16 * KIB));
}

/// Into a write-back cache: one memory copy per flow buffer (16 KiB at 10 GB/s: 1,638 ns, on
/// the server's one thread one after another), so the list write ends 4 copies after the data
/// arrived (66,536 ns), plus the ack: 74,088 ns; 4 server records of 16 KiB.
#[test]
fn a_list_is_absorbed_one_copy_per_flow_buffer() {
    let mut sys = one_server();
    sys.storage.cache.write_back = 8 << 20;
    sys.storage.cache.dirty_limit = 8 << 20;
    sys.storage.cache.flush_rate = 1e8;
    let list = Op::IoList(Box::new(crate::program::IoList {
        file: 0,
        kind: IoKind::Write,
        pieces: (0..64).map(|i| (i * (KIB + 128), KIB)).collect(),
    }));
    let (_, log) = go(&sys, vec![Op::Begin(Box::new(call(1))), list, Op::End]);
    let writes: Vec<u64> = servers(&log)
        .iter()
        .filter(|a| a.func == 701)
        .map(|a| a.bytes)
        .collect();
    assert_eq!(writes, vec![16 * KIB; 4]);
    assert_eq!(log.calls(0), vec![(0, 74_088)]);
}
