//! Rates that depend on the situation of a transfer, the one owner of their rules: a message's
//! size (`size_factors`, `intra_node_size_factors`), whether its node runs more ranks than
//! cores (`intra_node_oversubscribed_bandwidth`), and a disk access's direction and size
//! (`storage.disk_access`). The engine, the bounds and the calibration fit all ask here, so
//! the fit's equations stay the engine's. docs/MODEL.md gives the rules.

use crate::model::{Disk, DiskAccess, Network, SizeFactor};

/// The entry of `factors` (ascending `min_size`) for a message of `size` bytes: the last one
/// with min_size ≤ size, as (latency factor, bandwidth factor); (1, 1) when none applies.
pub fn size_factor(factors: &[SizeFactor], size: u64) -> (f64, f64) {
    factors
        .iter()
        .rev()
        .find(|f| f.min_size <= size)
        .map_or((1.0, 1.0), |f| (f.latency, f.bandwidth))
}

impl Network {
    /// One-way latency (ns) and copy rate (bytes/s) of a message of `bytes` between two ranks
    /// of one node; `oversubscribed`: the node runs more ranks than it has cores, where the
    /// copy rate is `intra_node_oversubscribed_bandwidth` (when set) without size factor.
    pub fn intra_node_path(&self, bytes: u64, oversubscribed: bool) -> (f64, f64) {
        let (fl, fb) = size_factor(&self.intra_node_size_factors, bytes);
        let latency = self.intra_node_latency_ns as f64 * fl;
        if oversubscribed && self.intra_node_oversubscribed_bandwidth > 0.0 {
            (latency, self.intra_node_oversubscribed_bandwidth)
        } else {
            (latency, self.intra_node_bandwidth * fb)
        }
    }
}

/// Which way a disk access goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Data read from the disk.
    Read,
    /// Data written to the disk (a write-through request or a flush).
    Write,
}

impl DiskAccess {
    /// True when every field keeps the disk as it is (the table is then left out of files).
    pub fn is_default(&self) -> bool {
        *self == DiskAccess::default()
    }

    /// The disk as it serves an `access` of `bytes`: reads take `read_latency_ns` and
    /// `read_bandwidth` where they are set (HDD: only the transfer rate; seeks are the head's,
    /// either way); a request of at least `large_above` bytes transfers at `large_factor`
    /// times the rate.
    pub fn disk_for(&self, disk: &Disk, access: Access, bytes: u64) -> Disk {
        let mut d = disk.clone();
        let read = access == Access::Read;
        let large = self.large_factor(bytes);
        match &mut d {
            Disk::Ssd {
                latency_ns,
                bandwidth,
                ..
            } => {
                if read && self.read_latency_ns > 0 {
                    *latency_ns = self.read_latency_ns;
                }
                if read && self.read_bandwidth > 0.0 {
                    *bandwidth = self.read_bandwidth;
                }
                *bandwidth *= large;
            }
            Disk::Hdd { sequential, .. } => {
                if read && self.read_bandwidth > 0.0 {
                    *sequential = self.read_bandwidth;
                }
                *sequential *= large;
            }
        }
        d
    }

    /// The requests a disk serves at once on a server of `server_threads` threads: `lanes`
    /// where set.
    pub fn lanes_or(&self, server_threads: u32) -> u32 {
        if self.lanes > 0 {
            self.lanes
        } else {
            server_threads
        }
    }

    /// The transfer rate multiplier of a request of `bytes`: `large_factor` from
    /// `large_above` on, else 1.
    fn large_factor(&self, bytes: u64) -> f64 {
        if self.large_above > 0 && bytes >= self.large_above && self.large_factor > 0.0 {
            self.large_factor
        } else {
            1.0
        }
    }

    /// The transfer rate of an `access` of `bytes` on `disk` (SSD bandwidth, HDD sequential
    /// rate).
    pub fn transfer_rate(&self, disk: &Disk, access: Access, bytes: u64) -> f64 {
        match self.disk_for(disk, access, bytes) {
            Disk::Ssd { bandwidth, .. } => bandwidth,
            Disk::Hdd { sequential, .. } => sequential,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn factors() -> Vec<SizeFactor> {
        vec![
            SizeFactor {
                min_size: 0,
                latency: 2.0,
                bandwidth: 0.5,
            },
            SizeFactor {
                min_size: 1 << 16,
                latency: 4.0,
                bandwidth: 2.0,
            },
        ]
    }

    #[test]
    fn the_last_entry_at_or_below_the_size_applies() {
        let f = factors();
        assert_eq!(size_factor(&f, 0), (2.0, 0.5));
        assert_eq!(size_factor(&f, (1 << 16) - 1), (2.0, 0.5));
        assert_eq!(size_factor(&f, 1 << 16), (4.0, 2.0));
        assert_eq!(size_factor(&f[1..], 10), (1.0, 1.0));
        assert_eq!(size_factor(&[], 10), (1.0, 1.0));
    }

    #[test]
    fn intra_node_path_by_size_and_oversubscription() {
        let mut n = crate::engine::testutil::system().network;
        n.intra_node_latency_ns = 100;
        n.intra_node_bandwidth = 1e9;
        n.intra_node_size_factors = factors();
        assert_eq!(n.intra_node_path(10, false), (200.0, 5e8));
        assert_eq!(n.intra_node_path(1 << 20, false), (400.0, 2e9));
        // Oversubscribed without its own rate: as the others.
        assert_eq!(n.intra_node_path(1 << 20, true), (400.0, 2e9));
        n.intra_node_oversubscribed_bandwidth = 2e8;
        assert_eq!(n.intra_node_path(1 << 20, true), (400.0, 2e8));
        assert_eq!(n.intra_node_path(1 << 20, false), (400.0, 2e9));
    }

    /// An SSD of 100,000 IOPS.
    fn ssd(latency_ns: u64, bandwidth: f64) -> Disk {
        Disk::Ssd {
            latency_ns,
            bandwidth,
            iops: 1e5,
        }
    }

    #[test]
    fn reads_take_their_own_rates_writes_the_disks() {
        let ssd = ssd(50_000, 3e9);
        let a = DiskAccess {
            read_latency_ns: 80_000,
            read_bandwidth: 1e9,
            ..DiskAccess::default()
        };
        assert_eq!(a.disk_for(&ssd, Access::Write, 4096), ssd);
        assert_eq!(a.disk_for(&ssd, Access::Read, 4096), self::ssd(80_000, 1e9));
        assert_eq!(
            DiskAccess::default().disk_for(&ssd, Access::Read, 4096),
            ssd
        );
        assert_eq!(a.transfer_rate(&ssd, Access::Read, 4096), 1e9);
        assert!(DiskAccess::default().is_default() && !a.is_default());
    }

    #[test]
    fn large_requests_transfer_at_the_large_factor() {
        let ssd = ssd(50_000, 2e9);
        let a = DiskAccess {
            read_bandwidth: 1e9,
            large_above: 4 << 20,
            large_factor: 0.5,
            ..DiskAccess::default()
        };
        // Below the size: the rates as they are; from it on, half (reads of their own rate).
        assert_eq!(a.transfer_rate(&ssd, Access::Write, (4 << 20) - 1), 2e9);
        assert_eq!(a.transfer_rate(&ssd, Access::Write, 4 << 20), 1e9);
        assert_eq!(a.transfer_rate(&ssd, Access::Read, 4 << 20), 5e8);
        // The latency is the disk's either way; an HDD's sequential rate scales alike.
        assert_eq!(
            a.disk_for(&ssd, Access::Write, 16 << 20),
            self::ssd(50_000, 1e9)
        );
        let hdd = Disk::Hdd {
            avg_seek_ns: 8_000_000,
            track_to_track_ns: 1_000_000,
            near_distance: 1 << 20,
            rpm: 7200,
            sequential: 1e8,
        };
        assert_eq!(a.transfer_rate(&hdd, Access::Write, 1 << 20), 1e8);
        assert_eq!(a.transfer_rate(&hdd, Access::Write, 16 << 20), 5e7);
        assert!(!a.is_default());
    }
}
