//! A disk's service time and its FIFO queue, and a server's volume over its disks (one disk,
//! or a RAID-1 pair).
//!
//! The queue is first-in first-out with one request served at a time, so a request's start,
//! end and whether it seeks are known the moment it is queued: the disk keeps only when it
//! becomes free and where the previous request ended.

use crate::engine::jitter::Jitter;
use crate::model::rates::Access;
use crate::model::{Disk, Storage};

/// Service time of one request on `disk`, in nanoseconds.
///
/// HDD: no seek if the request starts where the previous one ended (`prev_end`); a
/// track-to-track seek if it starts within `near_distance` bytes of it; otherwise the average
/// seek plus half a rotation. Then bytes / sequential rate.
/// SSD: max(latency, 1 / iops) + bytes / bandwidth.
pub fn service_ns(disk: &Disk, prev_end: u64, offset: u64, bytes: u64) -> u64 {
    match *disk {
        Disk::Hdd {
            avg_seek_ns,
            track_to_track_ns,
            near_distance,
            rpm,
            sequential,
        } => {
            let seek = if offset == prev_end {
                0.0
            } else if offset.abs_diff(prev_end) <= near_distance {
                track_to_track_ns as f64
            } else {
                let half_rotation = if rpm == 0 { 0.0 } else { 30e9 / rpm as f64 };
                avg_seek_ns as f64 + half_rotation
            };
            (seek + transfer_ns(bytes, sequential)).round() as u64
        }
        Disk::Ssd {
            latency_ns,
            bandwidth,
            iops,
        } => {
            let per_op = if iops > 0.0 { 1e9 / iops } else { 0.0 };
            ((latency_ns as f64).max(per_op) + transfer_ns(bytes, bandwidth)).round() as u64
        }
    }
}

/// bytes at `rate` bytes/s, in nanoseconds (0 for an unlimited rate).
pub fn transfer_ns(bytes: u64, rate: f64) -> f64 {
    if rate > 0.0 && rate.is_finite() {
        bytes as f64 * 1e9 / rate
    } else {
        0.0
    }
}

/// One disk's FIFO queue, served by one or more lanes (`storage.server_threads`: a flash disk
/// and the kernel above it serve several requests at once). A request takes the lane that is
/// free first; its seek is judged from where the previous request queued ended.
#[derive(Clone, Debug)]
pub struct DiskQueue {
    /// When each lane has served what it was given.
    lanes: Vec<u64>,
    /// Where the request last queued ends on the disk (the head starts at 0).
    last_end: u64,
    /// This disk's variance of service times (none: exact).
    pub jitter: Jitter,
    /// Time the local file system adds to each request (`storage.volume.fs_overhead_ns`).
    overhead_ns: u64,
    /// When the disk's transfer stage is free (`storage.disk_access.shared_bandwidth`).
    transfer_free: u64,
}

impl Default for DiskQueue {
    fn default() -> DiskQueue {
        DiskQueue::with_lanes(1)
    }
}

impl DiskQueue {
    /// A queue serving up to `lanes` requests at once (at least 1).
    pub fn with_lanes(lanes: u32) -> DiskQueue {
        DiskQueue {
            lanes: vec![0; lanes.max(1) as usize],
            last_end: 0,
            jitter: Jitter::default(),
            overhead_ns: 0,
            transfer_free: 0,
        }
    }

    /// Service time of a request: the disk's, plus the file system's overhead.
    fn service(&self, disk: &Disk, offset: u64, bytes: u64) -> u64 {
        service_ns(disk, self.last_end, offset, bytes) + self.overhead_ns
    }

    /// When a request queued at `now` would end.
    fn end_if_queued(&self, disk: &Disk, now: u64, offset: u64, bytes: u64) -> u64 {
        now.max(self.lanes[earliest(&self.lanes)]) + self.service(disk, offset, bytes)
    }

    /// Queues a request at `now`; returns (start, end) of its service.
    pub fn submit(&mut self, disk: &Disk, now: u64, offset: u64, bytes: u64) -> (u64, u64) {
        let lane = earliest(&self.lanes);
        let start = now.max(self.lanes[lane]);
        let end = start + self.jitter.stretch(self.service(disk, offset, bytes));
        self.lanes[lane] = end;
        self.last_end = offset + bytes;
        (start, end)
    }

    /// Queues a request on a disk of `storage`: as `submit` with the disk as it serves
    /// `access` (`storage.disk_access`: read rates, a shared transfer rate), or served at once
    /// on null storage (`storage.null`: no disk time).
    pub fn submit_to(
        &mut self,
        storage: &Storage,
        now: u64,
        access: Access,
        offset: u64,
        bytes: u64,
    ) -> (u64, u64) {
        let modes = &storage.disk_access;
        if storage.null {
            return (now, now);
        }
        if modes.is_default() {
            return self.submit(&storage.disk, now, offset, bytes);
        }
        let disk = modes.disk_for(&storage.disk, access, bytes);
        if modes.shared_bandwidth {
            self.submit_shared(&disk, now, offset, bytes)
        } else {
            self.submit(&disk, now, offset, bytes)
        }
    }

    /// As `submit`, but the lanes share the disk's transfer rate: a request's latency or seek
    /// overlaps the others' service, its transfer starts once the previous transfer ended.
    /// With one lane the same as `submit`.
    fn submit_shared(&mut self, disk: &Disk, now: u64, offset: u64, bytes: u64) -> (u64, u64) {
        let lane = earliest(&self.lanes);
        let start = now.max(self.lanes[lane]);
        let position = service_ns(disk, self.last_end, offset, 0);
        let transfer = service_ns(disk, self.last_end, offset, bytes) - position;
        let position = position + self.overhead_ns;
        let end = (start + position).max(self.transfer_free) + self.jitter.stretch(transfer);
        self.transfer_free = end;
        self.lanes[lane] = end;
        self.last_end = offset + bytes;
        (start, end)
    }

    /// When the disk has served everything queued so far.
    pub fn free_at(&self) -> u64 {
        self.lanes.iter().copied().max().unwrap_or(0)
    }
}

/// The volume a server keeps one disk's data on: that disk, or (`storage.volume.raid =
/// "raid1"`) a mirrored pair. A write goes to every copy and is done when the last one has it;
/// a read goes to the copy that would serve it first (the lower index among equals), as Linux
/// md's read balancing picks an idle disk or the one whose head is nearest.
#[derive(Clone, Debug)]
pub struct VolumeQueue {
    copies: Vec<DiskQueue>,
}

impl Default for VolumeQueue {
    fn default() -> VolumeQueue {
        VolumeQueue::new(1, 1, 0)
    }
}

impl VolumeQueue {
    /// `copies` disks of `lanes` lanes each, every request taking `overhead_ns` more.
    pub fn new(copies: u32, lanes: u32, overhead_ns: u64) -> VolumeQueue {
        let disk = DiskQueue {
            overhead_ns,
            ..DiskQueue::with_lanes(lanes)
        };
        VolumeQueue {
            copies: vec![disk; copies.max(1) as usize],
        }
    }

    /// Its disks (two for RAID-1), each with its own queue.
    pub fn copies(&mut self) -> &mut [DiskQueue] {
        &mut self.copies
    }

    /// A volume of `storage` (its RAID level, file system overhead and server threads).
    pub fn of(storage: &Storage) -> VolumeQueue {
        let v = &storage.volume;
        VolumeQueue::new(
            v.copies(),
            storage.disk_access.lanes_or(storage.server_threads),
            v.fs_overhead_ns,
        )
    }

    /// Queues an access at `now`; returns (start, end) of its service (of the first start and
    /// last end over the copies a write goes to).
    pub fn access(
        &mut self,
        storage: &Storage,
        write: bool,
        now: u64,
        offset: u64,
        bytes: u64,
    ) -> (u64, u64) {
        if write {
            self.copies
                .iter_mut()
                .map(|c| c.submit_to(storage, now, Access::Write, offset, bytes))
                .fold((u64::MAX, 0), |(s, e), (a, b)| (s.min(a), e.max(b)))
        } else {
            let disk = storage
                .disk_access
                .disk_for(&storage.disk, Access::Read, bytes);
            let copy = (0..self.copies.len())
                .min_by_key(|&i| self.copies[i].end_if_queued(&disk, now, offset, bytes))
                .unwrap_or(0);
            self.copies[copy].submit_to(storage, now, Access::Read, offset, bytes)
        }
    }
}

/// The index of the lane free first (the lowest index among equals: deterministic).
pub(crate) fn earliest(lanes: &[u64]) -> usize {
    let mut best = 0;
    for (i, &t) in lanes.iter().enumerate() {
        if t < lanes[best] {
            best = i;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Raid;

    fn hdd() -> Disk {
        // 40 MB/s, 8.5 ms seeks, 1 ms track to track, 7200 rpm (half rotation 4,166,667 ns).
        Disk::Hdd {
            avg_seek_ns: 8_500_000,
            track_to_track_ns: 1_000_000,
            near_distance: 1 << 20,
            rpm: 7200,
            sequential: 40e6,
        }
    }

    #[test]
    fn hdd_sequential_near_random() {
        let d = hdd();
        // 64 KiB at 40 MB/s = 1,638,400 ns.
        assert_eq!(service_ns(&d, 4096, 4096, 65536), 1_638_400);
        assert_eq!(service_ns(&d, 4096, 8192, 65536), 1_000_000 + 1_638_400);
        assert_eq!(
            service_ns(&d, 4096, 4096 + (1 << 20), 65536),
            1_000_000 + 1_638_400
        );
        assert_eq!(
            service_ns(&d, 4096, 4096 + (2 << 20), 65536),
            8_500_000 + 4_166_667 + 1_638_400
        );
        // Backwards within near_distance is near too.
        assert_eq!(service_ns(&d, 8192, 4096, 0), 1_000_000);
    }

    #[test]
    fn ssd_latency_or_iops_plus_transfer() {
        let d = Disk::Ssd {
            latency_ns: 50_000,
            bandwidth: 1e9,
            iops: 10_000.0,
        };
        // 1/iops = 100 us > 50 us latency; 1 MB at 1 GB/s = 1 ms.
        assert_eq!(service_ns(&d, 0, 12345, 1_000_000), 100_000 + 1_000_000);
        let d = Disk::Ssd {
            latency_ns: 50_000,
            bandwidth: 1e9,
            iops: 100_000.0,
        };
        assert_eq!(service_ns(&d, 0, 0, 4096), 50_000 + 4096);
    }

    #[test]
    fn fifo_queue_serializes_and_tracks_head() {
        let d = hdd();
        let mut q = DiskQueue::default();
        assert_eq!(q.submit(&d, 0, 0, 40_000), (0, 1_000_000));
        // Queued while busy: starts when the first ends; sequential: no seek.
        assert_eq!(q.submit(&d, 10, 40_000, 40_000), (1_000_000, 2_000_000));
        // Idle disk, far away: a full seek.
        assert_eq!(
            q.submit(&d, 5_000_000, 1 << 40, 0),
            (5_000_000, 5_000_000 + 12_666_667)
        );
    }

    /// Issue 14: on null storage (`storage.null`) a disk request takes no time and does not
    /// queue; otherwise `submit_to` is `submit`.
    #[test]
    fn null_storage_takes_no_disk_time() {
        let mut storage = crate::engine::testutil::system().storage;
        let mut q = DiskQueue::default();
        assert_eq!(
            q.submit_to(&storage, 0, Access::Write, 0, 100_000_000),
            (0, 1_000_000_000)
        );
        storage.null = true;
        let mut q = DiskQueue::default();
        assert_eq!(
            q.submit_to(&storage, 7, Access::Write, 0, 100_000_000),
            (7, 7)
        );
        assert_eq!(
            q.submit_to(&storage, 8, Access::Write, 0, 100_000_000),
            (8, 8)
        );
        assert_eq!(q.free_at(), 0);
    }

    /// Issue 15 item 8: requests from `disk_access.large_above` on transfer at
    /// `large_factor` times the rate, reads and writes, alone or on a shared transfer rate.
    #[test]
    fn large_requests_transfer_slower() {
        let mut storage = crate::engine::testutil::system().storage;
        storage.disk_access.large_above = 1_000_000;
        storage.disk_access.large_factor = 0.5;
        // Requests queued at 0 as (access, offset, bytes, (start, end)).
        let served =
            |q: &mut DiskQueue, storage: &Storage, reqs: &[(Access, u64, u64, (u64, u64))]| {
                for &(access, offset, bytes, want) in reqs {
                    assert_eq!(q.submit_to(storage, 0, access, offset, bytes), want);
                }
            };
        // 100 MB/s: 999,999 bytes in 9,999,990 ns; 1 MB at 50 MB/s in 20 ms.
        served(
            &mut DiskQueue::default(),
            &storage,
            &[
                (Access::Write, 0, 999_999, (0, 9_999_990)),
                (Access::Read, 0, 1_000_000, (9_999_990, 29_999_990)),
            ],
        );
        // Two lanes sharing the transfer: the second 1 MB ends one large transfer later.
        storage.disk_access.shared_bandwidth = true;
        served(
            &mut DiskQueue::with_lanes(2),
            &storage,
            &[
                (Access::Write, 0, 1_000_000, (0, 20_000_000)),
                (Access::Write, 1_000_000, 1_000_000, (0, 40_000_000)),
            ],
        );
    }

    /// Issue 15 item 8: a disk serves `disk_access.lanes` requests at once where set, else
    /// `server_threads`.
    #[test]
    fn disk_lanes_of_their_own() {
        let mut storage = crate::engine::testutil::system().storage;
        storage.server_threads = 2;
        let ends = |storage: &Storage| {
            let mut v = VolumeQueue::of(storage);
            [0, 1_000_000].map(|offset| v.access(storage, true, 0, offset, 1_000_000).1)
        };
        // 1 MB at 100 MB/s = 10 ms each: two lanes side by side, one lane one after another.
        assert_eq!(ends(&storage), [10_000_000, 10_000_000]);
        storage.disk_access.lanes = 1;
        assert_eq!(ends(&storage), [10_000_000, 20_000_000]);
    }

    fn volume_of(raid: Raid, fs_overhead_ns: u64) -> Storage {
        let mut storage = crate::engine::testutil::system().storage;
        storage.disk = hdd();
        storage.volume.raid = raid;
        storage.volume.fs_overhead_ns = fs_overhead_ns;
        storage
    }

    /// Issue 15: on RAID-1 a write goes to both disks and ends when the later one has it; a
    /// read goes to the disk that serves it first.
    #[test]
    fn raid1_writes_to_both_disks_reads_from_either() {
        let st = volume_of(Raid::Raid1, 0);
        let mut v = VolumeQueue::of(&st);
        // 40,000 B at 40 MB/s = 1 ms; both heads at 0: disk 0 serves it.
        assert_eq!(v.access(&st, false, 0, 0, 40_000), (0, 1_000_000));
        // Far away, while disk 0 is busy: disk 1 (12,666,667 ns seek and half rotation).
        assert_eq!(v.access(&st, false, 0, 1 << 40, 40_000), (0, 13_666_667));
        // A write at 40,000: disk 0 continues at 1 ms (no seek, ends at 2 ms), disk 1 seeks
        // back once free: the write ends with disk 1.
        assert_eq!(
            v.access(&st, true, 0, 40_000, 40_000),
            (1_000_000, 13_666_667 + 13_666_667)
        );
        // Null storage: no disk time on either disk.
        let mut st = st;
        st.null = true;
        assert_eq!(v.access(&st, true, 5, 0, 1 << 30), (5, 5));
    }

    /// Issue 15: the file system's overhead is disk time added to every access.
    #[test]
    fn fs_overhead_per_access() {
        let st = volume_of(Raid::None, 200_000);
        let mut v = VolumeQueue::of(&st);
        assert_eq!(v.access(&st, true, 0, 0, 40_000), (0, 1_200_000));
        assert_eq!(
            v.access(&st, false, 0, 40_000, 40_000),
            (1_200_000, 2_400_000)
        );
    }
}
