//! File striping: which server and disk hold each byte of a file, and where on that disk.
//!
//! PVFS-style: stripes go round-robin over `stripe_count` data servers, starting at the file's
//! first server; a server keeps a file's object on one of its disks (file id mod disks). Lustre-
//! style: stripes go round-robin over `stripe_count` targets (disks of servers, numbered
//! server-major: s0d0, s1d0, ..., s0d1, ...). On its disk, a file's object starts at
//! `file << 40` (1 TiB apart, so different files are far from each other and a switch between
//! them seeks), and stripe k of the object sits at k × stripe_size from there.

use crate::model::{Layout, LayoutKind, StripeStart, System, LUSTRE_PAGE};
use crate::program::FileId;

/// Where a file's object starts on a disk: files are 1 TiB apart.
const FILE_SHIFT: u32 = 40;

/// One contiguous piece of a file access as one server handles it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Piece {
    /// Data server index.
    pub server: u32,
    /// Disk of that server.
    pub disk: u32,
    /// Offset on the disk.
    pub disk_offset: u64,
    /// Offset in the file.
    pub file_offset: u64,
    /// Length.
    pub bytes: u64,
}

/// One flow buffer of a request: `count` segments from `start` of
/// [`RequestPlan::segments`], `bytes` in all (at most `max_request`), on one target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowBuffer {
    /// Data server index.
    pub server: u32,
    /// Disk of that server.
    pub disk: u32,
    /// First segment.
    pub start: u32,
    /// Segments.
    pub count: u32,
    /// Bytes of its segments.
    pub bytes: u64,
}

/// The requests of one client access ([`Striping::requests`]), in reusable vectors.
#[derive(Clone, Debug, Default)]
pub struct RequestPlan {
    /// Pieces of the flow buffers, buffer after buffer.
    pub segments: Vec<Piece>,
    /// Flow buffers, request after request.
    pub buffers: Vec<FlowBuffer>,
    /// Requests: the targets the access touches.
    pub requests: u32,
    targets: Vec<(u32, u32)>,
    grouped: Vec<(u32, Piece)>,
}

impl RequestPlan {
    fn clear(&mut self) {
        self.segments.clear();
        self.buffers.clear();
        self.requests = 0;
        self.targets.clear();
        self.grouped.clear();
    }

    /// The segments of buffer `b`.
    pub fn segments_of(&self, b: &FlowBuffer) -> &[Piece] {
        &self.segments[b.start as usize..(b.start + b.count) as usize]
    }
}

/// The striping of every file of a system, precomputed from the model.
#[derive(Clone, Debug)]
pub struct Striping {
    kind: LayoutKind,
    stripe_size: u64,
    /// Servers (PVFS) or targets (Lustre) a file spans.
    count: u32,
    /// Servers (PVFS) or targets (Lustre) in all.
    width: u32,
    start: StripeStart,
    data_servers: u32,
    disks_per_server: u32,
    max_request: u64,
    /// Buffers are a Lustre client's RPCs: cut at multiples of `max_request` in the object
    /// (the OSC packs pages into RPCs that way), not only when full.
    aligned: bool,
}

impl Striping {
    /// The striping of `system` (stripe_count 0 or above the available servers/targets means
    /// all of them). None if the system has no data server or a zero stripe size.
    pub fn new(system: &System) -> Option<Striping> {
        let s = &system.storage;
        let l: &Layout = &system.layout;
        if s.data_servers == 0 || l.stripe_size == 0 {
            return None;
        }
        let dps = s.disks_per_server.max(1);
        let width = match l.kind {
            LayoutKind::Pvfs => s.data_servers,
            LayoutKind::Lustre => s.data_servers.saturating_mul(dps),
        };
        let count = if l.stripe_count == 0 || l.stripe_count > width {
            width
        } else {
            l.stripe_count
        };
        let max_request = if s.max_request == 0 {
            u64::MAX
        } else {
            s.max_request
        };
        // A Lustre client's bulk RPCs are the flow buffers (engine/lustre_client.rs).
        let rpc = system
            .lustre
            .as_ref()
            .filter(|_| l.kind == LayoutKind::Lustre)
            .map(|c| u64::from(c.max_pages_per_rpc.max(1)) * LUSTRE_PAGE);
        Some(Striping {
            kind: l.kind,
            stripe_size: l.stripe_size,
            count,
            width,
            start: l.start,
            data_servers: s.data_servers,
            disks_per_server: dps,
            max_request: rpc.map_or(max_request, |r| r.min(max_request)),
            aligned: rpc.is_some(),
        })
    }

    /// Servers or targets one file spans.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// First server (PVFS) or target (Lustre) of a file.
    fn first(&self, file: FileId) -> u32 {
        match self.start {
            StripeStart::First => 0,
            StripeStart::RoundRobin => file % self.width,
        }
    }

    /// Server and disk holding stripe `stripe` of `file`.
    fn place(&self, file: FileId, stripe: u64) -> (u32, u32) {
        let slot =
            ((self.first(file) as u64 + stripe % self.count as u64) % self.width as u64) as u32;
        match self.kind {
            LayoutKind::Pvfs => (slot, file % self.disks_per_server),
            LayoutKind::Lustre => (slot % self.data_servers, slot / self.data_servers),
        }
    }

    /// Appends to `out` the stripe pieces of [offset, offset + bytes) of `file`, in file
    /// order: one per stripe touched.
    fn stripe_pieces(&self, file: FileId, offset: u64, bytes: u64, out: &mut Vec<Piece>) {
        let end = offset.saturating_add(bytes);
        let mut pos = offset;
        let base = (file as u64) << FILE_SHIFT;
        while pos < end {
            let stripe = pos / self.stripe_size;
            let within = pos % self.stripe_size;
            let len = (self.stripe_size - within).min(end - pos);
            let (server, disk) = self.place(file, stripe);
            // Stripe `stripe` is the (stripe / count)-th stripe of this object.
            let object_offset = (stripe / self.count as u64) * self.stripe_size + within;
            out.push(Piece {
                server,
                disk,
                disk_offset: base + object_offset,
                file_offset: pos,
                bytes: len,
            });
            pos += len;
        }
    }

    /// Cuts one client access (`ranges`: file ranges in file order) into the requests a
    /// PVFS2 client sends: one per target (server and disk: a PVFS2 datafile, a Lustre
    /// object) carrying the pieces that target holds, served in flow buffers of at most
    /// `max_request` bytes. Fills `plan.segments` (pieces of at most one stripe, a buffer's
    /// consecutive, a piece cut where a buffer fills) and `plan.buffers` (a request's buffers
    /// consecutive, requests in the order their target first appears in the file).
    pub fn requests(&self, file: FileId, ranges: &[(u64, u64)], plan: &mut RequestPlan) {
        plan.clear();
        for &(offset, bytes) in ranges {
            let first = plan.segments.len();
            self.stripe_pieces(file, offset, bytes, &mut plan.segments);
            for p in &plan.segments[first..] {
                let target = (p.server, p.disk);
                let g = match plan.targets.iter().position(|&t| t == target) {
                    Some(g) => g,
                    None => {
                        plan.targets.push(target);
                        plan.targets.len() - 1
                    }
                };
                plan.grouped.push((g as u32, *p));
            }
        }
        plan.requests = plan.targets.len() as u32;
        // Stable: each target keeps its pieces in file order (= ascending on its disk).
        plan.grouped.sort_by_key(|g| g.0);
        plan.segments.clear();
        let mut last_group = u32::MAX;
        for &(g, mut p) in &plan.grouped {
            while p.bytes > 0 {
                let at_boundary = self.aligned && p.disk_offset % self.max_request == 0;
                let room = match plan.buffers.last() {
                    Some(b) if g == last_group && !(at_boundary && b.bytes > 0) => {
                        self.max_request - b.bytes
                    }
                    _ => 0,
                };
                if room == 0 {
                    plan.buffers.push(FlowBuffer {
                        server: p.server,
                        disk: p.disk,
                        start: plan.segments.len() as u32,
                        count: 0,
                        bytes: 0,
                    });
                    last_group = g;
                    continue;
                }
                let to_boundary = if self.aligned {
                    self.max_request - p.disk_offset % self.max_request
                } else {
                    u64::MAX
                };
                let n = p.bytes.min(room).min(to_boundary);
                plan.segments.push(Piece { bytes: n, ..p });
                if let Some(b) = plan.buffers.last_mut() {
                    b.count += 1;
                    b.bytes += n;
                }
                p.disk_offset += n;
                p.file_offset += n;
                p.bytes -= n;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::testutil::system;

    /// (server, disk offset, file offset, bytes) of each buffer's segments, buffer by buffer.
    fn buffers(plan: &RequestPlan) -> Vec<Vec<(u32, u64, u64, u64)>> {
        plan.buffers
            .iter()
            .map(|b| {
                plan.segments_of(b)
                    .iter()
                    .map(|p| (p.server, p.disk_offset, p.file_offset, p.bytes))
                    .collect()
            })
            .collect()
    }

    #[test]
    fn pvfs_round_robin_over_servers() {
        let mut sys = system();
        sys.storage.data_servers = 4;
        sys.layout.kind = LayoutKind::Pvfs;
        sys.layout.stripe_size = 100;
        sys.layout.stripe_count = 0;
        let s = Striping::new(&sys).unwrap();
        let mut plan = RequestPlan::default();
        s.requests(0, &[(50, 450)], &mut plan);
        // Server 0 holds stripes 0 and 4 (back to back in its datafile): one request.
        assert_eq!(plan.requests, 4);
        assert_eq!(
            buffers(&plan),
            vec![
                vec![(0, 50, 50, 50), (0, 100, 400, 100)],
                vec![(1, 0, 100, 100)],
                vec![(2, 0, 200, 100)],
                vec![(3, 0, 300, 100)],
            ]
        );
    }

    #[test]
    fn lustre_targets_server_major_and_max_request() {
        let mut sys = system();
        sys.storage.data_servers = 2;
        sys.storage.disks_per_server = 2;
        sys.storage.max_request = 60;
        sys.layout.kind = LayoutKind::Lustre;
        sys.layout.stripe_size = 100;
        sys.layout.stripe_count = 3;
        sys.layout.start = StripeStart::RoundRobin;
        let s = Striping::new(&sys).unwrap();
        let mut plan = RequestPlan::default();
        // File 1 starts at target 1 = s1d0, then s0d1 (target 2), then s1d1 (target 3); stripe
        // 3 is s1d0 again: its request carries both stripes, cut in 60-byte flow buffers.
        s.requests(1, &[(0, 400)], &mut plan);
        let got: Vec<(u32, u32, u64, u64)> = plan
            .buffers
            .iter()
            .map(|b| {
                let p = plan.segments_of(b)[0];
                (b.server, b.disk, p.disk_offset - (1 << 40), b.bytes)
            })
            .collect();
        assert_eq!(plan.requests, 3);
        assert_eq!(
            got,
            vec![
                (1, 0, 0, 60),
                (1, 0, 60, 60),
                (1, 0, 120, 60),
                (1, 0, 180, 20),
                (0, 1, 0, 60),
                (0, 1, 60, 40),
                (1, 1, 0, 60),
                (1, 1, 60, 40),
            ]
        );
        // The second buffer crosses from stripe 0 to stripe 3: it holds a piece of each.
        let second = plan.buffers[1];
        assert_eq!(
            plan.segments_of(&second)
                .iter()
                .map(|p| (p.file_offset, p.bytes))
                .collect::<Vec<_>>(),
            vec![(60, 40), (300, 20)]
        );
    }

    /// Issue 15 (list I/O): 64 pieces of 1 KiB every 2 KiB on one server, 16 KiB flow
    /// buffers: one request in 4 buffers of 16 pieces each.
    #[test]
    fn a_list_is_one_request_in_flow_buffers() {
        let mut sys = system();
        sys.storage.data_servers = 1;
        sys.storage.max_request = 16 << 10;
        sys.layout.stripe_size = 64 << 10;
        let s = Striping::new(&sys).unwrap();
        let ranges: Vec<(u64, u64)> = (0..64).map(|i| (i * 2048, 1024)).collect();
        let mut plan = RequestPlan::default();
        s.requests(0, &ranges, &mut plan);
        assert_eq!(plan.requests, 1);
        assert_eq!(plan.buffers.len(), 4);
        for (k, b) in plan.buffers.iter().enumerate() {
            assert_eq!((b.count, b.bytes), (16, 16 << 10));
            assert_eq!(plan.segments_of(b)[0].file_offset, k as u64 * 16 * 2048);
        }
    }
}
