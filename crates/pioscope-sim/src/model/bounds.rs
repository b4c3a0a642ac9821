//! Analytic ceilings of a system model: the best aggregate throughput N clients can reach
//! with requests of a given size, the component that sets it, and metadata operation rates.
//! `pioscope bounds` prints them; `simulate` and `report` print `throughput()` beside every
//! measured or simulated rate. The formulas are in docs/MODEL.md ("Bounds").
//!
//! Every bound is a best case: sequential disk access (no seek), no contention but the shared
//! capacities, caches empty at the start. A run can only be slower; how much slower is the
//! simulator's question, not this module's.

use pioscope_trace::units;

use crate::model::rates::Access;
use crate::model::{Disk, LayoutKind, Network, Placement, System};
use crate::program::IoKind;

/// One ceiling and what sets it.
#[derive(Clone, Debug, PartialEq)]
pub struct Component {
    /// Short name: "client NICs", "server NICs", "bisection", "disks", "cache flush",
    /// "per-client latency", "server CPU", "disk IOPS", "cache".
    pub name: &'static str,
    /// How it was computed, with the numbers ("4 servers x 117 MB/s").
    pub detail: String,
    /// The ceiling it puts on the aggregate rate.
    pub bytes_per_s: f64,
}

/// The aggregate throughput ceiling for a workload.
#[derive(Clone, Debug, PartialEq)]
pub struct Bound {
    /// The steady ceiling (after any write-back cache has filled).
    pub bytes_per_s: f64,
    /// The component setting it (a `Component::name`).
    pub limited_by: &'static str,
    /// Writes into a write-back cache: the faster rate while the cache absorbs them.
    pub burst: Option<Burst>,
    /// Every component considered, in the order docs/MODEL.md lists them.
    pub components: Vec<Component>,
}

/// The rate while servers' write-back caches absorb writes, and for how many bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct Burst {
    /// Aggregate rate while the caches absorb writes.
    pub bytes_per_s: f64,
    /// The component setting it.
    pub limited_by: &'static str,
    /// Bytes written (in total) before the dirty limits are reached.
    pub bytes: f64,
}

impl Bound {
    /// The ceiling on the average rate of a run that moves `total` bytes: the burst rate for
    /// what the caches absorb, the steady rate for the rest.
    pub fn for_volume(&self, total: f64) -> f64 {
        match &self.burst {
            Some(b) if total > 0.0 && b.bytes_per_s > self.bytes_per_s => {
                if total <= b.bytes {
                    b.bytes_per_s
                } else {
                    let t = b.bytes / b.bytes_per_s + (total - b.bytes) / self.bytes_per_s;
                    total / t
                }
            }
            _ => self.bytes_per_s,
        }
    }
}

/// A metadata operation rate ceiling.
#[derive(Clone, Debug, PartialEq)]
pub struct OpRate {
    /// Operations per second at most.
    pub per_s: f64,
    /// "metadata servers" or "per-client latency".
    pub limited_by: &'static str,
    /// How it was computed.
    pub detail: String,
}

/// Metadata ceilings for N clients.
#[derive(Clone, Debug, PartialEq)]
pub struct MetaBounds {
    /// File creates per second.
    pub creates: OpRate,
    /// Opens of existing files per second.
    pub opens: OpRate,
    /// Stats per second.
    pub stats: OpRate,
    /// Removes per second.
    pub removes: OpRate,
}

/// Compute nodes N clients occupy.
pub fn client_nodes(system: &System, clients: u32) -> u32 {
    let n = &system.nodes;
    let used = match n.placement {
        Placement::Block => clients.div_ceil(n.ranks_per_node.max(1)),
        Placement::RoundRobin => clients,
    };
    used.clamp(1, n.count.max(1))
}

/// Targets (disks) a file is striped over, and the servers holding them.
pub fn stripe_width(system: &System) -> (u32, u32) {
    let st = &system.storage;
    let l = &system.layout;
    match l.kind {
        LayoutKind::Pvfs => {
            let servers = if l.stripe_count == 0 {
                st.data_servers
            } else {
                l.stripe_count.min(st.data_servers)
            };
            // A PVFS datafile lives on one disk of its server.
            (servers, servers)
        }
        LayoutKind::Lustre => {
            let all = st.data_servers * st.disks_per_server;
            let targets = if l.stripe_count == 0 {
                all
            } else {
                l.stripe_count.min(all)
            };
            // Server-major order (s0d0, s1d0, s0d1, ...): targets spread over servers first.
            (targets, targets.min(st.data_servers))
        }
    }
}

/// The size-factor entry for a message of `size` bytes: (latency factor, bandwidth factor).
pub fn size_factors(net: &Network, size: u64) -> (f64, f64) {
    crate::model::rates::size_factor(&net.size_factors, size)
}

/// A disk's sequential rate and its time for one request of `bytes` at a new position
/// (seek + half a rotation, or the SSD latency), in seconds.
fn disk_rates(disk: &Disk) -> (f64, f64) {
    match disk {
        Disk::Hdd {
            avg_seek_ns,
            rpm,
            sequential,
            ..
        } => {
            let half_rotation_s = 30.0 / f64::from((*rpm).max(1));
            (*sequential, *avg_seek_ns as f64 * 1e-9 + half_rotation_s)
        }
        Disk::Ssd {
            latency_ns,
            bandwidth,
            ..
        } => (*bandwidth, *latency_ns as f64 * 1e-9),
    }
}

/// Time one request of `bytes` spends on a disk, best case: an HDD streams (no seek), an SSD
/// pays its latency. Seconds.
pub fn disk_service_s(disk: &Disk, bytes: u64) -> f64 {
    match disk {
        Disk::Hdd { sequential, .. } => bytes as f64 / sequential,
        Disk::Ssd {
            latency_ns,
            bandwidth,
            ..
        } => *latency_ns as f64 * 1e-9 + bytes as f64 / bandwidth,
    }
}

/// Time one request of `bytes` spends on an HDD at a random position: average seek, half a
/// rotation, the transfer. Seconds. (For an SSD the same as `disk_service_s`.)
pub fn disk_random_service_s(disk: &Disk, bytes: u64) -> f64 {
    let (rate, position_s) = disk_rates(disk);
    position_s + bytes as f64 / rate
}

fn fmt_rate(r: f64) -> String {
    units::fmt_rate(r)
}

/// The aggregate throughput ceiling for `clients` ranks each issuing blocking requests of
/// `request_size` bytes (one outstanding per client) of `kind`.
pub fn throughput(system: &System, clients: u32, request_size: u64, kind: IoKind) -> Bound {
    let clients = clients.max(1);
    let size = request_size.max(1);
    let net = &system.network;
    let st = &system.storage;
    let (targets, servers) = stripe_width(system);
    let nodes = client_nodes(system, clients);
    // Targets one request touches; each gets one request of its share, served in flow
    // buffers of at most the server's largest request: the pieces it handles.
    let stripes = size.div_ceil(system.layout.stripe_size.max(1));
    let touched = (stripes.min(u64::from(targets)) as u32).max(1);
    let piece = size.div_ceil(u64::from(touched)).min(st.max_request).max(1);
    let (lat_f, bw_f) = size_factors(net, piece);
    let nic = net.bandwidth * bw_f;

    let mut c = Vec::new();
    c.push(Component {
        name: "client NICs",
        detail: format!("{nodes} node(s) x {}", fmt_rate(nic)),
        bytes_per_s: f64::from(nodes) * nic,
    });
    c.push(Component {
        name: "server NICs",
        detail: format!("{servers} server(s) x {}", fmt_rate(nic)),
        bytes_per_s: f64::from(servers) * nic,
    });
    if net.bisection_bandwidth > 0.0 {
        c.push(Component {
            name: "bisection",
            detail: format!("switch {}", fmt_rate(net.bisection_bandwidth)),
            bytes_per_s: net.bisection_bandwidth,
        });
    }
    // The disk as it serves this kind of access (reads may have rates of their own). Null
    // storage (`storage.null`): no disk, so no disk or flush ceiling. Reads on RAID-1 can use
    // both disks of a pair.
    let access = if kind == IoKind::Read {
        Access::Read
    } else {
        Access::Write
    };
    let disk = st.disk_access.disk_for(&st.disk, access, piece);
    let (disk_rate, _) = disk_rates(&disk);
    let disks = match kind {
        IoKind::Read => targets * st.volume.copies(),
        IoKind::Write => targets,
    };
    if !st.null {
        c.push(Component {
            name: "disks",
            detail: format!("{disks} disk(s) x {} sequential", fmt_rate(disk_rate)),
            bytes_per_s: f64::from(disks) * disk_rate,
        });
    }
    let cache = &st.cache;
    let write_back =
        kind == IoKind::Write && cache.write_back > 0 && cache.dirty_limit > 0 && !st.null;
    if write_back {
        c.push(Component {
            name: "cache flush",
            detail: format!("{servers} server(s) x {} flush", fmt_rate(cache.flush_rate)),
            bytes_per_s: f64::from(servers) * cache.flush_rate,
        });
    }

    // Servers touched by one request, and the time one client waits per request.
    let touched_servers = touched.min(servers).max(1);
    let per_request = |absorbed: bool| -> f64 {
        let latency_s = net.latency_ns as f64 * 1e-9 * lat_f;
        let rendezvous_s = if kind == IoKind::Write && size > net.eager_limit {
            2.0 * latency_s
        } else {
            0.0
        };
        let wire = size as f64 / nic.min(f64::from(touched_servers) * nic);
        let service = if absorbed {
            piece as f64 / cache.memory_bandwidth
        } else if st.null {
            0.0
        } else {
            disk_service_s(&disk, piece)
        };
        let pieces_per_target = (size as f64 / (piece as f64 * f64::from(touched))).ceil();
        // Best case: the servers pipeline the transfer with the disk (PVFS2 flows, Lustre
        // bulk RPCs), so the longer of the two counts.
        system.mpiio.call_overhead_ns as f64 * 1e-9
            + 2.0 * latency_s
            + rendezvous_s
            + wire.max(pieces_per_target * (st.cpu_per_request_ns as f64 * 1e-9 + service))
    };
    let latency_component = |absorbed: bool| {
        let t = per_request(absorbed);
        Component {
            name: "per-client latency",
            detail: format!(
                "{clients} client(s) x {} / {} per request",
                units::fmt_size(size as f64),
                units::fmt_time_ns(t * 1e9)
            ),
            bytes_per_s: f64::from(clients) * size as f64 / t,
        }
    };
    c.push(latency_component(false));
    if st.cpu_per_request_ns > 0 {
        let per_s = f64::from(servers) / (st.cpu_per_request_ns as f64 * 1e-9);
        c.push(Component {
            name: "server CPU",
            detail: format!(
                "{servers} server(s) / {} per request of {}",
                units::fmt_time_ns(st.cpu_per_request_ns as f64),
                units::fmt_size(piece as f64)
            ),
            bytes_per_s: per_s * piece as f64,
        });
    }
    if let (Disk::Ssd { iops, .. }, false) = (&st.disk, st.null) {
        let iops = *iops;
        c.push(Component {
            name: "disk IOPS",
            detail: format!(
                "{disks} disk(s) x {iops:.0} IOPS x {}",
                units::fmt_size(piece as f64)
            ),
            bytes_per_s: f64::from(disks) * iops * piece as f64,
        });
    }

    let min_of = |cs: &[Component], skip: &[&str]| -> (f64, &'static str) {
        cs.iter()
            .filter(|x| !skip.contains(&x.name))
            .fold((f64::INFINITY, "none"), |(r, n), x| {
                if x.bytes_per_s < r {
                    (x.bytes_per_s, x.name)
                } else {
                    (r, n)
                }
            })
    };
    let (steady, limited_by) = min_of(&c, &[]);

    let burst = if write_back {
        // While the caches absorb: no disk, flush or IOPS limit; the servers copy to memory.
        let mut bc: Vec<Component> = c
            .iter()
            .filter(|x| !matches!(x.name, "disks" | "cache flush" | "disk IOPS"))
            .filter(|x| x.name != "per-client latency")
            .cloned()
            .collect();
        bc.push(latency_component(true));
        bc.push(Component {
            name: "cache",
            detail: format!(
                "{servers} server(s) x {} memory",
                fmt_rate(cache.memory_bandwidth)
            ),
            bytes_per_s: f64::from(servers) * cache.memory_bandwidth,
        });
        let (rate, by) = min_of(&bc, &[]);
        let drain = (f64::from(servers) * cache.flush_rate).min(f64::from(targets) * disk_rate);
        if rate > drain {
            // Dirty data grows at (rate - drain) until every server holds dirty_limit.
            let dirty = f64::from(servers) * cache.dirty_limit as f64;
            Some(Burst {
                bytes_per_s: rate,
                limited_by: by,
                bytes: rate * dirty / (rate - drain),
            })
        } else {
            None
        }
    } else {
        None
    };
    Bound {
        bytes_per_s: steady,
        limited_by,
        burst,
        components: c,
    }
}

/// Metadata ceilings for `clients` ranks each issuing one operation at a time.
pub fn metadata(system: &System, clients: u32) -> MetaBounds {
    let clients = f64::from(clients.max(1));
    let st = &system.storage;
    let md = &st.metadata;
    let mds = f64::from(st.metadata_servers.max(1));
    let rtt_s = 2.0 * system.network.latency_ns as f64 * 1e-9;
    // As the engine does: a round trip to the metadata server and the operation's cost there
    // (no per-request CPU: metadata costs include it).
    let rate = |what: &str, service_ns: f64| -> OpRate {
        let service_s = service_ns * 1e-9;
        let servers = if service_s > 0.0 {
            mds / service_s
        } else {
            f64::INFINITY
        };
        let per_client = clients / (rtt_s + service_s);
        if servers <= per_client {
            OpRate {
                per_s: servers,
                limited_by: "metadata servers",
                detail: format!(
                    "{mds} server(s) / {} per {what}",
                    units::fmt_time_ns(service_ns)
                ),
            }
        } else {
            OpRate {
                per_s: per_client,
                limited_by: "per-client latency",
                detail: format!(
                    "{clients} client(s) / {} per {what} (round trip + service)",
                    units::fmt_time_ns((rtt_s + service_s) * 1e9)
                ),
            }
        }
    };
    MetaBounds {
        creates: rate("create", f64::from(md.create_syncs) * md.sync_op_ns as f64),
        opens: rate("open", md.open_ns as f64),
        stats: rate("stat", md.stat_ns as f64),
        removes: rate("remove", md.remove_ns as f64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::load;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    fn pvfs(sets: &[&str]) -> System {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        load::system("pvfs2-2009", &sets).unwrap()
    }

    #[test]
    fn large_reads_are_disk_bound_on_pvfs() {
        // 4 data servers x a RAID-1 pair of 40 MB/s IDE disks, reads from both = 320 MB/s,
        // below 4 x 117 MB/s of NICs; without RAID, 160 MB/s.
        let s = pvfs(&[]);
        let b = throughput(&s, 8, 4 << 20, IoKind::Read);
        assert_eq!(b.limited_by, "disks");
        assert!(close(b.bytes_per_s, 320e6), "{}", b.bytes_per_s);
        assert!(b.burst.is_none());
        let s = pvfs(&["storage.volume.raid=none"]);
        let b = throughput(&s, 8, 4 << 20, IoKind::Read);
        assert!(close(b.bytes_per_s, 160e6), "{}", b.bytes_per_s);
    }

    #[test]
    fn one_blocking_client_is_latency_bound() {
        // One client, 4 MiB reads: the wire time (4 MiB / 117 MB/s) is longer than the disk
        // time of the 4 flow buffers of 256 KiB each server serves its 1 MiB request in; 2 us
        // call + 2 x 50 us on top.
        let s = pvfs(&[]);
        let b = throughput(&s, 1, 4 << 20, IoKind::Read);
        let size = 4194304.0;
        let t = 2e-6 + 100e-6 + (size / 117e6_f64).max(4.0 * (30e-6 + 262144.0 / 40e6));
        assert_eq!(b.limited_by, "per-client latency");
        assert!(close(b.bytes_per_s, size / t));
        let nic = b
            .components
            .iter()
            .find(|c| c.name == "client NICs")
            .unwrap();
        assert!(close(nic.bytes_per_s, 117e6));
    }

    /// Issue 14: on null storage no disk limits, so 64 readers of 4 MiB meet the servers'
    /// NICs, as with disks of 1 GB/s.
    #[test]
    fn null_storage_has_no_disk_ceiling() {
        let s = pvfs(&["storage.null=true", "nodes=32"]);
        let b = throughput(&s, 64, 4 << 20, IoKind::Read);
        assert_eq!(b.limited_by, "server NICs");
        assert!(close(b.bytes_per_s, 4.0 * 117e6));
        assert!(b
            .components
            .iter()
            .all(|c| !matches!(c.name, "disks" | "disk IOPS" | "cache flush")));
    }

    #[test]
    fn fast_disks_make_the_servers_nics_the_limit() {
        let s = pvfs(&["storage.disk.sequential=1GB/s", "nodes=32"]);
        let b = throughput(&s, 64, 4 << 20, IoKind::Read);
        assert_eq!(b.limited_by, "server NICs");
        assert!(close(b.bytes_per_s, 4.0 * 117e6));
        let s = pvfs(&[
            "storage.disk.sequential=1GB/s",
            "bisection_bandwidth=200MB/s",
        ]);
        let b = throughput(&s, 64, 4 << 20, IoKind::Read);
        assert_eq!(b.limited_by, "bisection");
        assert!(close(b.bytes_per_s, 200e6));
    }

    #[test]
    fn small_requests_are_latency_bound() {
        // One client, 4 KiB reads: call 2 us + 2 x 50 us + 4096 / (0.5 x 117 MB/s) + 30 us
        // CPU + 4096 / 40 MB/s on the disk.
        let s = pvfs(&[]);
        let b = throughput(&s, 1, 4096, IoKind::Read);
        let t = 2e-6 + 100e-6 + (4096.0 / 58.5e6_f64).max(30e-6 + 4096.0 / 40e6);
        assert_eq!(b.limited_by, "per-client latency");
        assert!(
            close(b.bytes_per_s, 4096.0 / t),
            "{} vs {}",
            b.bytes_per_s,
            4096.0 / t
        );
        // Writes above the eager limit pay a rendezvous round trip: 32 KiB, 8K..64K factor 0.8.
        let w = throughput(&s, 1, 32768, IoKind::Write);
        let comp = w
            .components
            .iter()
            .find(|c| c.name == "per-client latency")
            .unwrap();
        let t = 2e-6 + 200e-6 + (32768.0 / (0.8 * 117e6_f64)).max(30e-6 + 32768.0 / 40e6);
        assert!(close(comp.bytes_per_s, 32768.0 / t));
    }

    #[test]
    fn server_cpu_caps_many_small_requests() {
        // 1000 clients of 4 KiB: 4 servers / 30 us x 4 KiB = 546 MB/s ... but the disks (160
        // MB/s) are lower; with fast disks and NICs, CPU is the limit.
        let s = pvfs(&[
            "storage.disk.sequential=10GB/s",
            "bandwidth=10GB/s",
            "latency=1us",
            "nodes=1000",
            "ppn=1",
        ]);
        let b = throughput(&s, 1000, 4096, IoKind::Read);
        assert_eq!(b.limited_by, "server CPU");
        assert!(close(b.bytes_per_s, 4.0 / 30e-6 * 4096.0));
    }

    #[test]
    fn write_back_cache_gives_a_burst() {
        // 16 clients (8 nodes), 4 MiB writes: steady = disks (160 MB/s, flush 4 x 40 MB/s = 160 MB/s);
        // burst = server NICs 4 x 117 MB/s (memory 2 GB/s per server). Caches fill after
        // 468e6 x (4 x 400 MiB) / (468e6 - 160e6) bytes.
        let s = pvfs(&[]);
        let b = throughput(&s, 16, 4 << 20, IoKind::Write);
        assert!(close(b.bytes_per_s, 160e6));
        let burst = b.burst.clone().unwrap();
        assert_eq!(burst.limited_by, "server NICs");
        assert!(close(burst.bytes_per_s, 468e6));
        let dirty = 4.0 * 400.0 * 1048576.0;
        assert!(close(burst.bytes, 468e6 * dirty / (468e6 - 160e6)));
        assert!(close(b.for_volume(1e6), 468e6));
        let total = burst.bytes * 2.0;
        let t = burst.bytes / 468e6 + burst.bytes / 160e6;
        assert!(close(b.for_volume(total), total / t));
    }

    #[test]
    fn lustre_width_and_iops() {
        let s = load::system("lustre-fdr", &[]).unwrap();
        assert_eq!(stripe_width(&s), (4, 2));
        let b = throughput(&s, 64, 16 << 20, IoKind::Write);
        // 4 OSTs x 1.5 GB/s = 6 GB/s < 2 OSS x 6 GB/s.
        assert_eq!(b.limited_by, "disks");
        assert!(close(b.bytes_per_s, 6e9));
        let s1 = load::system("lustre-fdr", &["stripe_count=1".to_string()]).unwrap();
        assert_eq!(stripe_width(&s1), (1, 1));
        let b = throughput(&s1, 64, 16 << 20, IoKind::Write);
        assert!(close(b.bytes_per_s, 1.5e9));
    }

    #[test]
    fn metadata_rates() {
        // PVFS2: 1 server / (4 x 2.5 ms) = 100 creates/s.
        let s = pvfs(&[]);
        let m = metadata(&s, 64);
        assert_eq!(m.creates.limited_by, "metadata servers");
        assert!(close(m.creates.per_s, 100.0));
        assert!(close(m.stats.per_s, 1.0 / 200e-6));
        // One client waits a round trip + the service per create.
        let m1 = metadata(&s, 1);
        assert_eq!(m1.creates.limited_by, "per-client latency");
        assert!(close(m1.creates.per_s, 1.0 / (100e-6 + 10e-3)));
        let s2 = pvfs(&["storage.metadata.sync_op_ns=1us"]);
        let m2 = metadata(&s2, 1);
        assert_eq!(m2.creates.limited_by, "per-client latency");
        assert!(close(m2.creates.per_s, 1.0 / (100e-6 + 4e-6)));
    }
}
