//! File striping: which server and disk hold each byte of a file, and where on that disk.
//!
//! PVFS-style: stripes go round-robin over `stripe_count` data servers, starting at the file's
//! first server; a server keeps a file's object on one of its disks (file id mod disks). Lustre-
//! style: stripes go round-robin over `stripe_count` targets (disks of servers, numbered
//! server-major: s0d0, s1d0, ..., s0d1, ...). On its disk, a file's object starts at
//! `file << 40` (1 TiB apart, so different files are far from each other and a switch between
//! them seeks), and stripe k of the object sits at k × stripe_size from there.

use crate::model::{Layout, LayoutKind, StripeStart, System};
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
        Some(Striping {
            kind: l.kind,
            stripe_size: l.stripe_size,
            count,
            width,
            start: l.start,
            data_servers: s.data_servers,
            disks_per_server: dps,
            max_request: if s.max_request == 0 {
                u64::MAX
            } else {
                s.max_request
            },
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

    /// Appends to `out` the pieces of [offset, offset + bytes) of `file`, in file order: one per
    /// stripe touched, each split further into pieces of at most `max_request` bytes.
    pub fn pieces(&self, file: FileId, offset: u64, bytes: u64, out: &mut Vec<Piece>) {
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
            let mut done = 0;
            while done < len {
                let n = (len - done).min(self.max_request);
                out.push(Piece {
                    server,
                    disk,
                    disk_offset: base + object_offset + done,
                    file_offset: pos + done,
                    bytes: n,
                });
                done += n;
            }
            pos += len;
        }
    }

    /// The stripe a file offset falls in (the read cache's unit).
    pub fn stripe_of(&self, offset: u64) -> u64 {
        offset / self.stripe_size
    }

    /// Stripe size in bytes.
    pub fn stripe_size(&self) -> u64 {
        self.stripe_size
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::testutil::system;

    #[test]
    fn pvfs_round_robin_over_servers() {
        let mut sys = system();
        sys.storage.data_servers = 4;
        sys.layout.kind = LayoutKind::Pvfs;
        sys.layout.stripe_size = 100;
        sys.layout.stripe_count = 0;
        let s = Striping::new(&sys).unwrap();
        let mut out = Vec::new();
        s.pieces(0, 50, 450, &mut out);
        let got: Vec<(u32, u64, u64, u64)> = out
            .iter()
            .map(|p| (p.server, p.disk_offset, p.file_offset, p.bytes))
            .collect();
        assert_eq!(
            got,
            vec![
                (0, 50, 50, 50),
                (1, 0, 100, 100),
                (2, 0, 200, 100),
                (3, 0, 300, 100),
                (0, 100, 400, 100)
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
        let mut out = Vec::new();
        // File 1 starts at target 1 = s1d0, then s0d1 (target 2), then s1d1 (target 3).
        s.pieces(1, 0, 400, &mut out);
        let got: Vec<(u32, u32, u64, u64)> = out
            .iter()
            .map(|p| (p.server, p.disk, p.disk_offset - (1 << 40), p.bytes))
            .collect();
        assert_eq!(
            got,
            vec![
                (1, 0, 0, 60),
                (1, 0, 60, 40),
                (0, 1, 0, 60),
                (0, 1, 60, 40),
                (1, 1, 0, 60),
                (1, 1, 60, 40),
                (1, 0, 100, 60),
                (1, 0, 160, 40),
            ]
        );
    }
}
