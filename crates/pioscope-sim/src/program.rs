//! What a simulated rank does: a list of primitive operations the engine executes in order
//! against the machine model. The MPI-IO layer (ROMIO's strategies), the workload generators
//! and trace replay all compile to this; the engine knows nothing of MPI-IO.
//!
//! `Begin`/`End` bracket the operations of one call as the output trace shows it (an
//! `MPI_File_write_all` with the exchanges and writes beneath it); they take no time.

/// A world rank.
pub type Rank = u32;
/// A file of the simulation (index into `Job::files`).
pub type FileId = u32;
/// A nonblocking message slot of one rank: `Isend`/`Irecv` start it, `WaitAll` completes it.
/// Slots are reused once waited for.
pub type Slot = u32;

/// One primitive operation of a rank.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// Time the model does not explain: computation, or a replayed trace's gap between calls.
    Compute {
        /// How long.
        ns: u64,
    },
    /// Starts sending `bytes` to `to`. Eager (≤ eager_limit): done when the data has left;
    /// rendezvous: a round trip first, done when delivered.
    Isend {
        /// The receiving rank.
        to: Rank,
        /// Message size.
        bytes: u64,
        /// The slot a `WaitAll` completes.
        slot: Slot,
    },
    /// Starts receiving `bytes` from `from`; messages between a pair match in order.
    Irecv {
        /// The sending rank.
        from: Rank,
        /// Message size.
        bytes: u64,
        /// The slot a `WaitAll` completes.
        slot: Slot,
    },
    /// Blocks until every listed slot completed.
    WaitAll {
        /// The slots to wait for.
        slots: Vec<Slot>,
    },
    /// Blocks until every rank of the job reached the same barrier (counted per rank: the
    /// n-th Barrier of each rank meet); costs a log2(ranks)-deep tree of small messages.
    Barrier,
    /// A blocking client access: the layout splits it over servers (and disks), the pieces go
    /// out concurrently, it completes when all have.
    Io {
        /// The file accessed.
        file: FileId,
        /// Read or write.
        kind: IoKind,
        /// File offset.
        offset: u64,
        /// Length.
        bytes: u64,
    },
    /// A blocking list access (PVFS2 list I/O: one `PVFS_sys_write`/`_read` of a list of
    /// file pieces): like `Io`, each server gets one request carrying the pieces it holds.
    /// Boxed to keep `Op` at 32 bytes.
    IoList(Box<IoList>),
    /// A metadata operation on the file's metadata server.
    Meta {
        /// The file.
        file: FileId,
        /// Which operation.
        kind: MetaKind,
    },
    /// Takes a byte-range write lock (data sieving writes; fcntl on the client's file system):
    /// waits until no other rank holds an overlapping range.
    Lock {
        /// The file.
        file: FileId,
        /// Start of the locked range.
        offset: u64,
        /// Length of the locked range.
        bytes: u64,
    },
    /// Releases the lock taken by the matching `Lock`.
    Unlock {
        /// The file.
        file: FileId,
        /// Start of the range, as locked.
        offset: u64,
        /// Length of the range, as locked.
        bytes: u64,
    },
    /// An all-to-all-v of every rank of the job simulated in aggregate (the engine's
    /// engine/exchange.rs): counted per rank like `Barrier` (the n-th Exchange of each rank
    /// meet), all leave together once the busiest NIC, the switch and the intra-node copies
    /// have moved every byte. Replaces a dense Isend/Irecv/WaitAll exchange whose per-message
    /// simulation would cost too much (10,000-rank two-phase). Boxed to keep `Op` at 32 bytes.
    Exchange(Box<Traffic>),
    /// Opens a call of the output trace; `Begin`s nest.
    /// (Boxed: a Call is 56 bytes, and jobs hold tens of millions of ops; every other op fits in 32.)
    Begin(Box<Call>),
    /// Closes the innermost open call.
    End,
}

/// The pieces of one [`Op::IoList`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IoList {
    /// The file accessed.
    pub file: FileId,
    /// Read or write.
    pub kind: IoKind,
    /// (file offset, length) of each piece, in file order, not overlapping.
    pub pieces: Vec<(u64, u64)>,
}

/// One rank's side of an aggregated [`Op::Exchange`]: what it sends and receives, split into
/// messages that cross the network (peers on other nodes) and intra-node copies (peers on its
/// own node, itself included). Totals, not messages: the engine needs no per-message state.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Traffic {
    /// Bytes this rank sends to ranks on other nodes.
    pub out_bytes: u64,
    /// Messages this rank sends to ranks on other nodes.
    pub out_msgs: u64,
    /// Bytes this rank receives from ranks on other nodes.
    pub in_bytes: u64,
    /// Messages this rank receives from ranks on other nodes.
    pub in_msgs: u64,
    /// Bytes this rank sends to ranks on its own node (itself included): memory copies.
    pub local_out_bytes: u64,
    /// Messages this rank sends to ranks on its own node (itself included).
    pub local_out_msgs: u64,
    /// Bytes this rank receives from ranks on its own node (itself included).
    pub local_in_bytes: u64,
    /// The largest single message this rank sends or receives (eager or rendezvous).
    pub largest: u64,
}

impl Traffic {
    /// Bytes sent plus bytes received, on and off the node (the size of the traced call).
    pub fn total_bytes(&self) -> u64 {
        self.out_bytes + self.in_bytes + self.local_out_bytes + self.local_in_bytes
    }

    /// Messages sent, on and off the node.
    pub fn sent_msgs(&self) -> u64 {
        self.out_msgs + self.local_out_msgs
    }
}

/// Direction of a data access.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IoKind {
    /// Data from the file to the client.
    Read,
    /// Data from the client to the file.
    Write,
}

/// Metadata operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MetaKind {
    /// Create a file (`create_syncs` synced updates on the metadata server).
    Create,
    /// Open or look up an existing file.
    Open,
    /// Close.
    Close,
    /// Stat / getattr.
    Stat,
    /// Unlink.
    Remove,
    /// fsync: waits for the file's dirty data on every server to reach disk.
    Sync,
}

/// A call as the output trace records it (one events.parquet row per Begin/End pair).
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    /// functions.def id (e.g. MPI_File_write_all, pwrite, MPI_Alltoallv).
    pub func: u16,
    /// The file, for I/O calls.
    pub file: Option<FileId>,
    /// File offset (I/O) — for replayed calls, the traced value.
    pub offset: Option<u64>,
    /// Bytes requested or sent.
    pub size: u64,
    /// Collective MPI-IO call.
    pub collective: bool,
    /// Collective instance number (equal on every rank of one collective call).
    pub instance: Option<u32>,
    /// Peer world rank of a message.
    pub peer: Option<Rank>,
    /// The id of the observed event this call replays (`pioscope compare` matches on it).
    pub observed_id: Option<i64>,
}

/// Everything the engine runs: per-rank programs and the files they use.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Job {
    /// Program of rank r at index r.
    pub programs: Vec<Vec<Op>>,
    /// File paths by FileId (the output trace's files.parquet).
    pub files: Vec<String>,
    /// Command line or workload spec, for meta.json.
    pub description: String,
}

/// What the engine reports as it runs, in completion order (not sorted by start time). The
/// output module turns it into a trace store; tests and benchmarks count it.
pub trait Recorder {
    /// A call (a `Begin`..`End` pair) of `rank` finished; `depth` 0 is outermost.
    fn call(&mut self, rank: Rank, depth: u8, call: &Call, start_ns: u64, end_ns: u64);
    /// A storage server finished serving one flow buffer of a request (`func`: a SERVER function of
    /// functions.def, e.g. server_write) for client `client`.
    fn server(&mut self, activity: &ServerActivity);
    /// A disk finished one access (`func`: disk_read or disk_write).
    fn disk(&mut self, activity: &DiskActivity);
    /// A storage server's CPU was busy (the output trace samples it as the server's CPU
    /// counters); a recorder that keeps no counters ignores it.
    fn server_cpu(&mut self, _activity: &CpuActivity) {}
}

/// What a server's CPU was busy with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpuWork {
    /// A request's own CPU time (`storage.cpu_per_request_ns`): the daemon, user time.
    Request,
    /// A memory copy (a cache hit, an absorbed write): the kernel, system time.
    Copy,
}

/// One span of a server CPU thread.
#[derive(Clone, Debug, PartialEq)]
pub struct CpuActivity {
    /// The storage server (0-based).
    pub server: u32,
    /// What the CPU did.
    pub work: CpuWork,
    /// When the thread started it.
    pub start_ns: u64,
    /// When it finished.
    pub end_ns: u64,
}

/// One flow buffer of a request (or a metadata operation) served by a server.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerActivity {
    /// The storage server (0-based).
    pub server: u32,
    /// functions.def id of the SERVER function (server_write, server_create, ...).
    pub func: u16,
    /// The client rank the request came from.
    pub client: Rank,
    /// The file.
    pub file: FileId,
    /// Offset in the file.
    pub offset: u64,
    /// Bytes of the piece.
    pub bytes: u64,
    /// When the server started serving it.
    pub start_ns: u64,
    /// When it finished.
    pub end_ns: u64,
}

/// One access served by a disk.
#[derive(Clone, Debug, PartialEq)]
pub struct DiskActivity {
    /// The storage server holding the disk.
    pub server: u32,
    /// The disk of that server (0-based).
    pub disk: u32,
    /// functions.def id: disk_read or disk_write.
    pub func: u16,
    /// Offset on the disk.
    pub offset: u64,
    /// Length.
    pub bytes: u64,
    /// When the disk started the access.
    pub start_ns: u64,
    /// When it finished.
    pub end_ns: u64,
}
