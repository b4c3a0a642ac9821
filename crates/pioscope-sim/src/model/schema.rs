//! The system model: the machine a simulation runs on, as a TOML file (every field is described
//! in docs/MODEL.md). Sizes are bytes, rates bytes per second, times nanoseconds. Presets live
//! in crates/pioscope-sim/presets/; `pioscope calibrate` writes one for the local machine.

use serde::{Deserialize, Serialize};

/// The whole model file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct System {
    /// Short name (`local`, `pvfs2-2009`, `lustre-fdr`).
    pub name: String,
    /// One line on what this machine is.
    #[serde(default)]
    pub description: String,
    /// Compute nodes and where ranks go.
    pub nodes: Nodes,
    /// The interconnect and the MPI library's protocol.
    pub network: Network,
    /// Storage servers, their disks and caches.
    pub storage: Storage,
    /// How files are striped over the servers.
    pub layout: Layout,
    /// ROMIO's defaults on this file system (hints override them).
    pub mpiio: MpiIo,
    /// How the model was obtained (calibrate fills it; presets cite their source).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration: Option<Calibration>,
    /// The Lustre client (RPC windows, extent locks, read-ahead), used when `layout.kind` is
    /// lustre. Absent (older files, other file systems): none of it is modelled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lustre: Option<Lustre>,
    /// The write-back cache of each compute node; absent (or size 0) = none.
    #[serde(default, skip_serializing_if = "ClientCache::is_default")]
    pub client_cache: ClientCache,
    /// Seeded jitter of service times and stalls (absent or all zero: exact times).
    #[serde(default, skip_serializing_if = "Variance::is_absent")]
    pub variance: Variance,
}

/// Compute nodes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Nodes {
    /// Number of compute nodes.
    pub count: u32,
    /// Ranks per node (a workload with more ranks than count × ranks_per_node is refused).
    pub ranks_per_node: u32,
    /// How ranks map to nodes.
    #[serde(default)]
    pub placement: Placement,
    /// Cores per node; 0 = at least as many as ranks. When a node runs more ranks than it has
    /// cores, MPI ranks that wait busy-poll and share the cores with the ranks they wait for.
    #[serde(default)]
    pub cores: u32,
    /// On a node with more ranks than cores: how long a rank blocked on other ranks (a
    /// Barrier, a WaitAll) takes to resume once what it waits for has happened, the
    /// scheduler's hand-off between busy-polling processes. Charged once per blocking wait.
    #[serde(default)]
    pub handoff_ns: u64,
    /// Rate at which a process fills memory it has just allocated (page faults and zeroing
    /// of fresh pages); 0 (the default) = not modelled. ROMIO allocates its collective buffer
    /// at every collective call, so an aggregator's first cycle fills fresh pages.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub fresh_memory_bandwidth: f64,
    /// CPU time of the node's client file-system stack per flow buffer of a request (a FUSE
    /// daemon's context switches and bookkeeping), on one of the node's `cores`, before the
    /// buffer goes; 0 (the default) = not modelled. docs/MODEL.md, "Node CPU".
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub client_cpu_per_request_ns: u64,
    /// Rate at which the client stack's CPU handles a buffer's bytes (its copies): a buffer of
    /// b bytes costs b / this on top of `client_cpu_per_request_ns`; 0 (the default) = no
    /// per-byte cost.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub client_cpu_bandwidth: f64,
    /// The node's file-system client lets one write or sync of a file run at a time: the
    /// Linux FUSE module holds the file's inode lock for a whole write() (its requests sent
    /// one after another) and fsync(). false (the default) = calls of one file overlap.
    /// docs/MODEL.md, "Engine", "Client file lock".
    #[serde(default, skip_serializing_if = "is_false")]
    pub client_file_lock: bool,
    /// On a node with more ranks than cores: the scheduler slice a rank woken from the client
    /// file lock waits for each thread runnable beyond the cores (the node's ranks on the CPU,
    /// the rank that released the lock and the woken one): it resumes
    /// `wakeup_slice_ns` × max(0, runnable − cores) after the release. 0 (the default) = at
    /// once. docs/MODEL.md, "Engine", "Client file lock".
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub wakeup_slice_ns: u64,
}

/// Rank placement on nodes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Placement {
    /// Ranks 0..ranks_per_node on node 0, and so on (MPICH's default).
    #[default]
    Block,
    /// Rank r on node r mod count.
    RoundRobin,
}

/// The interconnect: every node and server has one NIC; links are full duplex.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Network {
    /// One-way latency of a small message between nodes.
    pub latency_ns: u64,
    /// NIC bandwidth, each direction.
    pub bandwidth: f64,
    /// Capacity of the switch between all nodes and servers; 0 = non-blocking.
    #[serde(default)]
    pub bisection_bandwidth: f64,
    /// Messages above this size use rendezvous: one extra round trip before the data (PVFS2
    /// writes: 16 KiB).
    pub eager_limit: u64,
    /// Latency between ranks on the same node (shared memory).
    pub intra_node_latency_ns: u64,
    /// Bandwidth between ranks on the same node.
    pub intra_node_bandwidth: f64,
    /// Message-size dependent corrections, by ascending `min_size`: a message of size s uses
    /// the last entry with min_size ≤ s. Empty = factors of 1.
    #[serde(default)]
    pub size_factors: Vec<SizeFactor>,
    /// Bandwidth between ranks of a node that runs more ranks than `nodes.cores` (ranks
    /// busy-poll, so a copy waits for the scheduler to run both ends); 0 (the default) =
    /// `intra_node_bandwidth` with its size factors.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub intra_node_oversubscribed_bandwidth: f64,
    /// Message-size dependent corrections of `intra_node_latency_ns` and
    /// `intra_node_bandwidth`, as `size_factors` (MPI's shared-memory protocols change with
    /// the size). Empty = factors of 1.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub intra_node_size_factors: Vec<SizeFactor>,
}

/// Latency and bandwidth multipliers from a message size on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SizeFactor {
    /// Smallest message size this entry applies to.
    pub min_size: u64,
    /// Multiplies the latency.
    pub latency: f64,
    /// Multiplies the bandwidth.
    pub bandwidth: f64,
}

/// Storage servers. Data servers hold stripes; metadata servers serve creates, opens, stats.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Storage {
    /// Servers holding file data.
    pub data_servers: u32,
    /// Servers handling metadata (may be the same machines: `metadata_on_data_servers`).
    pub metadata_servers: u32,
    /// Metadata servers are data servers 0..metadata_servers rather than machines of their own.
    #[serde(default)]
    pub metadata_on_data_servers: bool,
    /// Disks (targets) per data server; a stripe goes to one disk of one server.
    pub disks_per_server: u32,
    /// Server CPU time per request, before the disk.
    pub cpu_per_request_ns: u64,
    /// Requests a server serves at once: its CPU and each disk serve up to this many in
    /// parallel (kernel threads of a local file system, I/O threads of a server daemon).
    /// Absent in older files: 1, one at a time.
    #[serde(default = "one")]
    pub server_threads: u32,
    /// Largest piece of one request a server handles at a time (bigger ones are split).
    pub max_request: u64,
    /// The disk model of every disk.
    pub disk: Disk,
    /// Each server's caches.
    pub cache: Cache,
    /// Metadata operation costs on a metadata server.
    pub metadata: Metadata,
    /// Null storage (the TAS experiment, docs/SERVERS.md): disks take no time, everything else
    /// (server CPU, caches, network) is unchanged. Absent in older files: false.
    #[serde(default)]
    pub null: bool,
    /// The servers run on compute node 0 (one machine, as the GlusterFS lab's brick beside its
    /// FUSE client): their CPU spans also take a core of that node (`nodes.cores`), shared
    /// with its ranks and its client stack. Absent: false, servers of their own.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub colocated: bool,
    /// What lies between a server and its disks: RAID, the kernel's block layer, the local
    /// file system. Absent in older files: one plain disk, no overhead.
    #[serde(default, skip_serializing_if = "Volume::is_plain")]
    pub volume: Volume,
    /// How the disk serves each kind of access where it differs from `disk` (reads slower
    /// than writes, one transfer rate shared by the requests served at once). Absent: as `disk`.
    #[serde(default, skip_serializing_if = "DiskAccess::is_default")]
    pub disk_access: DiskAccess,
}

/// The disk per access: read rates of their own, and whether the requests a disk serves at
/// once (`server_threads` lanes) share its transfer rate. Every field's default keeps `disk`
/// as it is.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiskAccess {
    /// SSD latency of a read request; 0 (the default) = `disk.latency_ns`.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub read_latency_ns: u64,
    /// Transfer rate of reads (SSD `bandwidth`, HDD `sequential`); 0 (the default) = the
    /// disk's.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub read_bandwidth: f64,
    /// The transfer rate is the device's: requests served at once overlap their latency
    /// (SSD) or seek (HDD) but transfer one after another. false (the default): each lane
    /// transfers at the full rate.
    #[serde(default)]
    pub shared_bandwidth: bool,
    /// Requests of at least this many bytes transfer at `large_factor` times the rate (reads
    /// and writes): the block layer splits a large request into many pieces, and this
    /// machine's virtual disk moves large requests slower per byte. 0 (the default) = none.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub large_above: u64,
    /// Transfer rate multiplier of large requests (see `large_above`); 0 = 1.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub large_factor: f64,
    /// Requests a disk serves at once (its queue's lanes); 0 (the default) = the server's
    /// `server_threads`. A virtual disk may overlap fewer requests than the kernel has
    /// cores to copy in the page cache.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub lanes: u32,
}

/// A disk: a hard disk with seeks, or a solid-state disk.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum Disk {
    /// Rotating disk: a request not starting where the previous one ended seeks.
    Hdd {
        /// Average seek time (random request).
        avg_seek_ns: u64,
        /// Seek to a neighbouring track (nearby request, within `near_distance`).
        track_to_track_ns: u64,
        /// Distance in bytes under which a seek is track-to-track.
        near_distance: u64,
        /// Spindle speed; a random request waits half a rotation on average.
        rpm: u32,
        /// Sequential transfer rate.
        sequential: f64,
    },
    /// Flash: latency per request, bandwidth, and an IOPS ceiling.
    Ssd {
        /// Latency per request.
        latency_ns: u64,
        /// Transfer rate.
        bandwidth: f64,
        /// Requests per second at most.
        iops: f64,
    },
}

/// The volume a server keeps each disk's data on: a RAID level, the kernel's largest access,
/// the local file system's cost per access. The default is today's plain disk.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Volume {
    /// `raid1`: every disk of the model is a mirrored pair (writes go to both, reads to one).
    #[serde(default)]
    pub raid: Raid,
    /// Disk time the local file system adds to every access (block allocation, journal and
    /// inode updates of ext3 or xfs); 0 = none.
    #[serde(default)]
    pub fs_overhead_ns: u64,
    /// Largest access the kernel issues (`max_sectors_kb`): the write-back flush merges adjacent
    /// dirty data up to it; 0 = `storage.max_request`.
    #[serde(default)]
    pub max_access: u64,
}

impl Volume {
    /// Whether this is the default: one disk, no overhead, accesses up to `max_request`.
    pub fn is_plain(&self) -> bool {
        *self == Volume::default()
    }

    /// Disks that hold a copy of each byte.
    pub fn copies(&self) -> u32 {
        match self.raid {
            Raid::None => 1,
            Raid::Raid1 => 2,
        }
    }

    /// Largest access the kernel issues on a system whose servers handle requests of at most
    /// `max_request` bytes (0 = unlimited).
    pub fn max_access_or(&self, max_request: u64) -> u64 {
        match (self.max_access, max_request) {
            (0, 0) => u64::MAX,
            (0, m) => m,
            (a, _) => a,
        }
    }
}

/// RAID level of a server's volume.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Raid {
    /// Each disk on its own.
    #[default]
    None,
    /// Mirrored pairs.
    Raid1,
}

/// A server's caches. Writes land in the write-back cache until it holds `dirty_limit` bytes;
/// then writers wait for the flush (at `flush_rate`, not faster than the disk).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cache {
    /// Write-back cache size; 0 = write-through.
    pub write_back: u64,
    /// Dirty bytes at which writers block.
    pub dirty_limit: u64,
    /// Rate at which dirty data drains to disk.
    pub flush_rate: f64,
    /// Read cache size; 0 = none. Data written or read recently is served from memory.
    pub read_cache: u64,
    /// Memory copy rate for cached writes (and cache hits unless `read_memory_bandwidth`).
    pub memory_bandwidth: f64,
    /// Memory copy rate for read cache hits; 0 (the default) = `memory_bandwidth`. Page-cache
    /// reads copy out of pages that exist, several times faster than writes that allocate them.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub read_memory_bandwidth: f64,
    /// Memory copy rate for cached writes into data the cache holds (an overwrite); 0 (the
    /// default) = `memory_bandwidth`. Writing into pages that exist skips their allocation.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rewrite_memory_bandwidth: f64,
    /// Copies of at least this many bytes run at `large_copy_factor` times the rates above;
    /// 0 (the default) = every copy at them. Large copies no longer fit the CPU's caches.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub large_copy_above: u64,
    /// Rate multiplier of large copies (see `large_copy_above`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub large_copy_factor: f64,
    /// Dirty bytes above which the flush starts on its own (Linux's
    /// vm.dirty_background_ratio of the server's memory); below it, dirty data waits for a
    /// sync or for writers waiting for room. 0 (the default) = the flush starts at once.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub background_dirty: u64,
}

impl Cache {
    /// The copy rate of a read cache hit.
    pub fn read_copy_rate(&self) -> f64 {
        if self.read_memory_bandwidth > 0.0 {
            self.read_memory_bandwidth
        } else {
            self.memory_bandwidth
        }
    }

    /// `rate` for a copy of `bytes`: times `large_copy_factor` from `large_copy_above` on.
    pub fn sized(&self, rate: f64, bytes: u64) -> f64 {
        if self.large_copy_above > 0
            && bytes >= self.large_copy_above
            && self.large_copy_factor > 0.0
        {
            rate * self.large_copy_factor
        } else {
            rate
        }
    }

    /// The copy rate of a cached write into data the cache holds.
    pub fn rewrite_copy_rate(&self) -> f64 {
        if self.rewrite_memory_bandwidth > 0.0 {
            self.rewrite_memory_bandwidth
        } else {
            self.memory_bandwidth
        }
    }
}

fn one() -> u32 {
    1
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

fn is_false(x: &bool) -> bool {
    !*x
}

fn is_zero_u64(x: &u64) -> bool {
    *x == 0
}

/// Metadata costs on a metadata server, each serialized on that server.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Metadata {
    /// One synced metadata update (a create is `create_syncs` of them).
    pub sync_op_ns: u64,
    /// Synced updates per create (PVFS2: create the metafile and datafiles, set attributes).
    pub create_syncs: u32,
    /// Open or lookup of an existing file.
    pub open_ns: u64,
    /// Stat / getattr.
    pub stat_ns: u64,
    /// Close (PVFS has none; Lustre releases the open handle).
    pub close_ns: u64,
    /// Unlink.
    pub remove_ns: u64,
}

/// File striping.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Layout {
    /// PVFS-style (stripes round-robin over data servers, starting at a per-file server) or
    /// Lustre-style (over `stripe_count` targets, each a disk of a server).
    pub kind: LayoutKind,
    /// Stripe size.
    pub stripe_size: u64,
    /// Servers (PVFS) or targets (Lustre) a file spans; 0 = all.
    pub stripe_count: u32,
    /// Where the first stripe goes: the same server for every file, or rotating per file.
    #[serde(default)]
    pub start: StripeStart,
}

/// PVFS-style or Lustre-style layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LayoutKind {
    /// Stripes over data servers.
    Pvfs,
    /// Stripes over targets (disks of servers, server-major order: s0d0, s1d0, s0d1, ...).
    Lustre,
}

/// First server or target of a file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StripeStart {
    /// Always the first.
    #[default]
    First,
    /// File n starts at n mod servers.
    RoundRobin,
}

/// ROMIO's settings on this file system, as the hints of the same names. The same struct
/// holds one file's settings once its hints are applied (`mpiio::romio::Hints`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MpiIo {
    /// Collective buffer per aggregator and cycle (`cb_buffer_size`).
    pub cb_buffer_size: u64,
    /// Aggregators at most (`cb_nodes`); 0 = no limit beyond `cb_per_node` per node.
    pub cb_nodes: u32,
    /// Aggregators per node at most (`cb_config_list` "*:N"); 0 = every rank ("*:*").
    pub cb_per_node: u32,
    /// Aggregator order: blocked per node or round-robin across nodes.
    pub aggregator_placement: AggregatorPlacement,
    /// File domains: an even split of the accessed range, or stripe-aligned (ROMIO's Lustre
    /// driver).
    pub file_domain: FileDomain,
    /// Data-sieving buffer for independent writes (`ind_wr_buffer_size`).
    pub ind_wr_buffer_size: u64,
    /// Data-sieving buffer for independent reads (`ind_rd_buffer_size`).
    pub ind_rd_buffer_size: u64,
    /// Data sieving for writes (`romio_ds_write`): enable, disable or automatic.
    pub ds_write: Toggle,
    /// Data sieving for reads (`romio_ds_read`).
    pub ds_read: Toggle,
    /// Collective buffering for writes (`romio_cb_write`).
    pub cb_write: Toggle,
    /// Collective buffering for reads (`romio_cb_read`).
    pub cb_read: Toggle,
    /// Overlap the exchange of cycle n+1 with the I/O of cycle n.
    #[serde(default)]
    pub overlap_exchange: bool,
    /// Client-side CPU time per MPI-IO call (flattening, bookkeeping).
    pub call_overhead_ns: u64,
    /// Client CPU time per contiguous piece of a two-phase exchange message that the MPI
    /// library unpacks into (writes) or packs from (reads) the aggregator's collective buffer
    /// (MPI datatype processing, ROMIO's hindexed types). Absent in older files: 0.
    #[serde(default)]
    pub exchange_piece_ns: u64,
    /// Two-phase exchanges with more (ranks × aggregators) pairs than this are simulated in
    /// aggregate (`Op::Exchange`: per-node byte totals, no per-message events); 0 = never.
    /// Not a ROMIO hint: a simulator knob. Absent in older files: 1048576.
    #[serde(default = "default_aggregate_exchange_above")]
    pub aggregate_exchange_above: u64,
    /// ROMIO's Lustre driver (`romio_lustre_co_ratio`): clients per OST in collective writes
    /// with stripe-aligned domains; the driver keeps the first stripe_count × min(candidates /
    /// stripe_count, this) aggregators (or a divisor of stripe_count when fewer), so each OST
    /// is written by at most this many clients. 0 = every candidate aggregates (the model
    /// before it). Absent in older files: 0.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub lustre_co_ratio: u32,
    /// ROMIO's driver for the file system: how independent noncontiguous accesses are made.
    /// Absent in older files: generic.
    #[serde(default)]
    pub driver: Driver,
    /// ad_pvfs2's strided-access hints (`romio_pvfs2_*`): ROMIO's defaults, all disabled.
    #[serde(default)]
    pub pvfs2: Pvfs2Hints,
}

/// The ROMIO driver (ADIO file system) of the model's file system.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Driver {
    /// The generic strided code (ad_ufs, ad_lustre, ...): data sieving, or one access per
    /// piece without it.
    #[default]
    Generic,
    /// ad_pvfs2: list I/O (64 pieces per request) unless a `romio_pvfs2_*` hint says otherwise;
    /// never data sieving.
    Pvfs2,
}

/// The `romio_pvfs2_{posix,dtype,listio}_{read,write}` hints of ad_pvfs2 (ADIOI_PVFS2_SetInfo
/// sets every one to disable). For writes (reads alike) ADIOI_PVFS2_WriteStrided takes the
/// first enabled of posix (one access per piece), dtype (the whole access as one request),
/// listio (list I/O of 64 pieces per request); with none, classic list I/O (64 pieces too).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pvfs2Hints {
    /// `romio_pvfs2_posix_read`.
    #[serde(default)]
    pub posix_read: bool,
    /// `romio_pvfs2_posix_write`.
    #[serde(default)]
    pub posix_write: bool,
    /// `romio_pvfs2_dtype_read`.
    #[serde(default)]
    pub dtype_read: bool,
    /// `romio_pvfs2_dtype_write`.
    #[serde(default)]
    pub dtype_write: bool,
    /// `romio_pvfs2_listio_read`.
    #[serde(default)]
    pub listio_read: bool,
    /// `romio_pvfs2_listio_write`.
    #[serde(default)]
    pub listio_write: bool,
}

/// Above a million rank × aggregator pairs (e.g. 1,024 ranks with 1,024 aggregators) the
/// per-message exchange costs seconds to simulate; below it stays exact.
fn default_aggregate_exchange_above() -> u64 {
    1 << 20
}

impl MpiIo {
    /// ROMIO's own defaults (its generic driver, one aggregator per node, no client costs):
    /// the starting point of calibrated models and of tests.
    pub fn romio_defaults() -> MpiIo {
        MpiIo {
            cb_buffer_size: 16 << 20,
            cb_nodes: 0,
            cb_per_node: 1,
            aggregator_placement: AggregatorPlacement::Blocked,
            file_domain: FileDomain::Even,
            ind_wr_buffer_size: 512 << 10,
            ind_rd_buffer_size: 4 << 20,
            ds_write: Toggle::Automatic,
            ds_read: Toggle::Automatic,
            cb_write: Toggle::Automatic,
            cb_read: Toggle::Automatic,
            overlap_exchange: false,
            call_overhead_ns: 0,
            exchange_piece_ns: 0,
            aggregate_exchange_above: default_aggregate_exchange_above(),
            driver: Driver::Generic,
            pvfs2: Pvfs2Hints::default(),
            lustre_co_ratio: 0,
        }
    }
}

/// Aggregator placement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AggregatorPlacement {
    /// The first ranks of each node, node by node.
    Blocked,
    /// One rank per node in turn.
    RoundRobin,
}

/// How two-phase I/O splits the accessed range among aggregators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FileDomain {
    /// Equal contiguous pieces (ROMIO's generic driver).
    Even,
    /// Whole stripes, each aggregator owning the stripes of its targets (Lustre driver).
    StripeAligned,
}

/// A ROMIO enable/disable/automatic switch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Toggle {
    /// Always.
    Enable,
    /// Never.
    Disable,
    /// ROMIO decides (collective buffering when accesses interleave; sieving for holes).
    Automatic,
}

/// Variance of service times, drawn from the run's seed (docs/MODEL.md, "Variance"): each
/// network transfer's and disk access's time is multiplied by a factor uniform in
/// [1 − jitter, 1 + jitter] (mean 1), and with `stall_probability` also delayed by `stall_ns`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Variance {
    /// Relative spread of a network transfer's time (0 to 1).
    #[serde(default)]
    pub network_jitter: f64,
    /// Relative spread of a disk access's service time (0 to 1).
    #[serde(default)]
    pub disk_jitter: f64,
    /// Probability that a network transfer or a disk access stalls (0 to 1).
    #[serde(default)]
    pub stall_probability: f64,
    /// How much longer a stalled transfer or access takes.
    #[serde(default)]
    pub stall_ns: u64,
}

impl Variance {
    /// Every field at its default: a model file without the table.
    pub fn is_absent(&self) -> bool {
        *self == Variance::default()
    }
}

/// Where a model's numbers come from, and how well calibration fitted them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Calibration {
    /// Source: "pioscope calibrate on HOST at DATE", or the study a preset follows.
    pub source: String,
    /// Per fitted quantity: name, measured, model, relative error.
    #[serde(default)]
    pub fits: Vec<Fit>,
}

/// One fitted quantity.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fit {
    /// What was measured ("ping-pong 1 MiB", "write 64 KiB x 4 clients").
    pub name: String,
    /// The measurement (seconds, or bytes/s as `unit` says).
    pub measured: f64,
    /// What the fitted model gives for it.
    pub model: f64,
    /// "s" or "B/s".
    pub unit: String,
}

/// The Lustre client of every compute node (one per node, shared by its ranks): its I/O to an
/// OST goes in RPCs of `max_pages_per_rpc` pages with at most `max_rpcs_in_flight` in flight
/// per OST; it takes extent locks on the OST objects it writes; it reads ahead of sequential
/// reads. Defaults are Lustre's own.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lustre {
    /// Pages (4 KiB) per bulk RPC at most (`osc.*.max_pages_per_rpc`).
    #[serde(default = "default_max_pages_per_rpc")]
    pub max_pages_per_rpc: u32,
    /// RPCs in flight per OST connection at most (`osc.*.max_rpcs_in_flight`).
    #[serde(default = "default_max_rpcs_in_flight")]
    pub max_rpcs_in_flight: u32,
    /// Extent locks (LDLM) on OST objects: a client writing where another client holds a
    /// lock waits for its revocation.
    #[serde(default = "yes")]
    pub extent_locks: bool,
    /// Read-ahead window per file and node (`llite.*.max_read_ahead_per_file_mb`); 0 = none.
    #[serde(default = "default_read_ahead")]
    pub read_ahead: u64,
}

impl Default for Lustre {
    fn default() -> Lustre {
        Lustre {
            max_pages_per_rpc: default_max_pages_per_rpc(),
            max_rpcs_in_flight: default_max_rpcs_in_flight(),
            extent_locks: true,
            read_ahead: default_read_ahead(),
        }
    }
}

/// The write-back cache of each compute node (the client's page cache): a write is a memory
/// copy while the node's dirty data stays under `dirty_limit`, and the data flows to the
/// servers in the background; close and sync wait for their file's dirty data, writers beyond
/// the limit wait for room. Size 0 (the default): writes go to the servers as they are made.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClientCache {
    /// Memory of a node for dirty file data; 0 = no client cache.
    #[serde(default)]
    pub size: u64,
    /// Dirty bytes of a node at which its writers wait for the flush; 0 = `size`.
    #[serde(default)]
    pub dirty_limit: u64,
    /// Rate at which a node's dirty data flows to the servers at most; 0 = as fast as the
    /// network and servers take it.
    #[serde(default)]
    pub flush_rate: f64,
    /// Memory copy rate of a cached write; 0 = `storage.cache.memory_bandwidth`.
    #[serde(default)]
    pub memory_bandwidth: f64,
    /// The most bytes a node's flusher has in flight: one write of up to this many
    /// contiguous bytes of a file, cut by the layout into requests to its servers.
    #[serde(default = "default_flush_chunk")]
    pub flush_chunk: u64,
}

/// Linux 2.6's writeback writes at most MAX_WRITEBACK_PAGES (1024 pages of 4 KiB) of a file
/// per pass.
fn default_flush_chunk() -> u64 {
    4 << 20
}

impl Default for ClientCache {
    fn default() -> ClientCache {
        ClientCache {
            size: 0,
            dirty_limit: 0,
            flush_rate: 0.0,
            memory_bandwidth: 0.0,
            flush_chunk: default_flush_chunk(),
        }
    }
}

/// Lustre's page size: `max_pages_per_rpc` counts these.
pub const LUSTRE_PAGE: u64 = 4096;

fn default_max_pages_per_rpc() -> u32 {
    256
}

fn default_max_rpcs_in_flight() -> u32 {
    8
}

fn default_read_ahead() -> u64 {
    40 << 20
}

fn yes() -> bool {
    true
}

fn is_zero_u32(v: &u32) -> bool {
    *v == 0
}

impl ClientCache {
    /// Whether nodes cache writes.
    pub fn on(&self) -> bool {
        self.size > 0
    }

    /// Dirty bytes at which a node's writers wait: `dirty_limit` (0 = `size`), at most `size`.
    pub fn limit(&self) -> u64 {
        if self.dirty_limit == 0 {
            self.size
        } else {
            self.dirty_limit.min(self.size)
        }
    }

    fn is_default(&self) -> bool {
        *self == ClientCache::default()
    }
}
