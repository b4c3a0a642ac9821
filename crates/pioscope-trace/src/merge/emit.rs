//! The last step of pass 2: a rank's records, in store order, become store events: each is
//! given its parent, region, file, communicator, peer or root and collective instance, pushed
//! to the store writer and counted in the run summary's totals and the files' statistics.

use std::collections::BTreeSet;

use rustc_hash::FxHashMap;

use crate::functions::{self, Layer, OpKind};
use crate::raw::format::{flags, string_kind};
use crate::scope;
use crate::store::{Event, MpiArgs, MpiRef, StoreError, StoreWriter};

use super::messages::PointToPointCompletions;
use super::nesting::{OpenCalls, Span};
use super::reorder::Row;
use super::{is_collective_instance, ApplicationTotals, Numbering, Proc};

/// Per global file id: events and the ranks that touched it.
pub(super) type FileStats = FxHashMap<usize, (i64, BTreeSet<i32>)>;

/// What a record's children take from it.
#[derive(Clone, Copy, Debug)]
struct Enclosing {
    /// Store id; `None` for a record left out (a server's, outside the job's window).
    id: Option<i64>,
    /// Innermost region (global name index).
    region: Option<usize>,
    /// Raw function id.
    func: u16,
}

/// A function id's layer, store name, kind and the id its name has in this build's table.
#[derive(Clone)]
struct FuncFacts {
    layer: Layer,
    name: String,
    kind: OpKind,
    id: u16,
}

impl FuncFacts {
    fn of(func: u16) -> Self {
        let (layer, name) = functions::describe(func);
        FuncFacts {
            layer,
            kind: functions::kind_of(layer, &name),
            id: functions::by_name(&name).map_or(0, |f| f.id),
            name,
        }
    }
}

/// Turns records into store events (see the module); one per merge, told each rank's start.
pub(super) struct Emitter<'a> {
    procs: &'a [Proc],
    numbering: &'a Numbering<'a>,
    /// What each function id is, looked up once per id (a table by id: the lookup is per
    /// event).
    func_facts: Vec<Option<FuncFacts>>,
    /// Open records per (process, thread) of the current rank.
    open: FxHashMap<(u32, u32), OpenCalls<Enclosing>>,
    p2p: PointToPointCompletions,
    rank: i32,
    /// Totals of the application's records.
    pub totals: ApplicationTotals,
    /// Per global file id: events and ranks.
    pub file_stats: FileStats,
}

impl<'a> Emitter<'a> {
    /// An emitter for the processes `procs` numbered by `numbering`.
    pub(super) fn new(procs: &'a [Proc], numbering: &'a Numbering<'a>) -> Self {
        Emitter {
            procs,
            numbering,
            func_facts: vec![None; usize::from(u16::MAX) + 1],
            open: FxHashMap::default(),
            p2p: PointToPointCompletions::default(),
            rank: -1,
            totals: ApplicationTotals::default(),
            file_stats: FxHashMap::default(),
        }
    }

    /// Starts the records of `rank` (what was open on the previous rank's threads is over).
    pub(super) fn start_rank(&mut self, rank: i32) {
        self.rank = rank;
        self.open.clear();
        self.p2p = PointToPointCompletions::default();
    }

    /// Takes the rank's next record in store order and writes it (if kept).
    pub(super) fn emit(&mut self, r: &Row, writer: &mut StoreWriter) -> Result<(), StoreError> {
        let procs = self.procs;
        let p = &procs[r.process as usize];
        let span = Span {
            start: r.raw.start,
            end: r.raw.start.saturating_add(r.raw.duration),
            depth: r.raw.depth,
        };
        let FuncFacts {
            layer,
            name,
            kind,
            id: func_id,
        } = self.func_facts[usize::from(r.raw.func)]
            .get_or_insert_with(|| FuncFacts::of(r.raw.func));
        let (layer, kind, func_id) = (*layer, *kind, *func_id);
        let lookup = |kind: u16| -> Option<usize> {
            if r.raw.object == 0 {
                None
            } else {
                p.strings.get(&(kind, r.raw.object)).copied()
            }
        };
        let own_region = if layer == Layer::Region {
            lookup(string_kind::REGION)
        } else {
            None
        };
        let id = writer.rows() as i64;
        let mut me = Enclosing {
            id: r.kept.then_some(id),
            region: None,
            func: r.raw.func,
        };
        let open = self.open.entry((r.process, r.raw.thread)).or_default();
        let parent = open.enter(span, me).copied().filter(|e| e.id.is_some());
        if !r.kept {
            return Ok(());
        }
        me.region = own_region.or(parent.and_then(|e| e.region));
        open.set_innermost(me);
        let p2p_completion = self.p2p.observe(r, parent.map(|e| e.func));
        let Numbering {
            instance_of,
            names,
            system_files,
            ..
        } = *self.numbering;
        let file_id = match layer {
            Layer::Tracer if p2p_completion => None,
            Layer::Posix
            | Layer::Stdio
            | Layer::MpiIo
            | Layer::Hdf5
            | Layer::Pnetcdf
            | Layer::Tracer => lookup(string_kind::FILE),
            _ => None,
        };
        let comm = if layer == Layer::Mpi || p2p_completion {
            lookup(string_kind::COMMUNICATOR)
        } else {
            None
        };
        let hi = (r.raw.offset >> 32) as u32 as i32;
        let lo = r.raw.offset as u32 as i32;
        let (mut peer, mut tag, mut root, mut comm_size) = (None, None, None, None);
        if p2p_completion {
            (peer, tag) = (Some(hi), Some(lo));
        } else if layer == Layer::Mpi {
            if functions::is_point_to_point(name) {
                (peer, tag) = (Some(hi), Some(lo));
            } else if functions::is_mpi_collective(name) || r.raw.flags & flags::COLLECTIVE != 0 {
                (root, comm_size) = (Some(hi), Some(lo));
            }
        }
        let file_layer = layer.is_file_layer();
        let mpi = MpiArgs {
            request: (r.raw.flags & (flags::NONBLOCKING | flags::COMPLETION) != 0
                && r.raw.link != 0)
                .then_some(r.raw.link as i64),
            peer,
            tag,
            root,
            comm_size,
        };
        let event = Event {
            id,
            rank: self.rank,
            process: r.process as i32,
            thread: r.raw.thread as i32,
            start_ns: r.start_ns,
            duration_ns: r.duration_ns,
            layer,
            func: name,
            func_id,
            depth: r.raw.depth,
            parent: parent.and_then(|e| e.id),
            file_id: file_id.map(|f| f as i32),
            offset: (file_layer && r.raw.flags & flags::OFFSET_UNKNOWN == 0)
                .then_some(r.raw.offset as i64),
            size: r.raw.size as i64,
            result: r.raw.result,
            error: r.raw.error,
            flags: r.raw.flags,
            collective: r.raw.flags & flags::COLLECTIVE != 0,
            instance: if is_collective_instance(r.raw.func, r.raw.flags, r.raw.link) {
                instance_of.get(&r.raw.link).copied()
            } else {
                None
            },
            mpi: MpiRef::to(&mpi),
            comm: comm.map(|c| names[c].as_str()),
            region: me.region.map(|n| names[n].as_str()),
        };
        writer.push(&event)?;

        let system_file = file_id.map(|f| system_files[f]);
        let server = p.server.is_some();
        if server {
            // A server's records are not the application's.
        } else if !scope::is_application_record(layer, system_file) {
            self.totals.left_out += 1;
        } else {
            let t = self.totals.layers.entry(layer).or_default();
            t.operations += 1;
            match kind {
                OpKind::Read => {
                    t.bytes_read += functions::bytes_moved(r.raw.size, r.raw.result, r.raw.error)
                }
                OpKind::Write => {
                    t.bytes_written += functions::bytes_moved(r.raw.size, r.raw.result, r.raw.error)
                }
                _ => {}
            }
        }
        if let Some(f) = file_id {
            let s = self.file_stats.entry(f).or_default();
            s.0 += 1;
            if !server {
                s.1.insert(self.rank);
            }
        }
        Ok(())
    }
}
