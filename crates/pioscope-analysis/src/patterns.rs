//! Access patterns: per (file, rank, layer) how successive data accesses move through the file
//! (contiguous, strided with the stride, random), their alignment, and per file who shares it,
//! the read/write mix, independent against collective MPI-IO and how many POSIX requests each
//! MPI-IO request turned into; and the rate of metadata operations.
//!
//! Definitions (also in docs/CLI.md, `pioscope report`):
//! - reads and writes form separate sequences (data sieving interleaves a read and a write of
//!   the same block: each on its own is regular), and a sequence starts again at every open
//!   of the file by the rank (a program that reopens its file per step writes from the start
//!   each time: across opens that is neither strided nor random). Of two successive accesses
//!   with known
//!   offsets, the pair is *contiguous* when the second starts where the first ended, and its
//!   *stride* is the difference of their offsets. A sequence is contiguous when at least
//!   `REGULAR_SHARE` of its pairs are, else strided when one stride covers at least that share
//!   (stride 0: the same offset again and again), else random; `single` with one access;
//! - alignment: an access is misaligned when its offset is not a multiple of the file system
//!   block (`Options::block_size`, 4096: the store records no statfs block size yet) or of the
//!   stripe size (the `striping_unit` hint in force, when the MPI-IO driver reports one);
//! - a file is shared when more than one rank has records on it, else per process;
//! - application-level reads and writes of a file: data calls not inside another data call
//!   (an MPI_File_write_all, not the pwrites beneath it);
//! - POSIX per MPI-IO: POSIX/STDIO data calls whose nearest enclosing I/O call is an MPI-IO
//!   data call of the file, divided by those MPI-IO calls, apart for independent and
//!   collective calls (for collective calls only aggregators issue any: see aggregation.rs);
//! - metadata rate: POSIX and STDIO metadata calls (`IoClass::Metadata`: open, stat, seek,
//!   unlink, ...) per second of job time; MPI-IO metadata calls are counted beside.
//!
//! State is a few counters per (file, rank, layer) plus at most `MAX_STRIDES` distinct strides
//! per sequence, so a random pattern costs no more than a regular one.

use std::collections::BTreeMap;

use pioscope_trace::functions::{self, Layer, OpKind};
use pioscope_trace::store::Event;
use rustc_hash::{FxHashMap, FxHashSet};
use serde::Serialize;

use crate::class::{io_class, is_io_layer, is_open, IoClass};
use crate::hints::{self, Hints, Timeline, View};
use crate::lookup::RecentMap;
use crate::nesting::{Frame, Nesting};
use crate::pass::{Context, Visitor};
use crate::stats::PerFunc;

/// Share of pairs that makes a sequence contiguous or strided.
pub const REGULAR_SHARE: f64 = 0.8;
/// Distinct strides counted per sequence; later new strides only count as "other".
pub const MAX_STRIDES: usize = 16;
/// File system block size assumed when nothing better is known.
pub const DEFAULT_BLOCK_SIZE: u64 = 4096;

/// How successive accesses move through a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Pattern {
    /// One access (no pair to judge).
    Single,
    /// Each access starts where the previous ended.
    Contiguous,
    /// A constant offset step (`stride`).
    Strided,
    /// Neither.
    Random,
}

impl Pattern {
    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Pattern::Single => "single",
            Pattern::Contiguous => "contiguous",
            Pattern::Strided => "strided",
            Pattern::Random => "random",
        }
    }
}

/// One direction (reads or writes) of one (file, rank, layer).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Sequence {
    /// Data calls.
    pub operations: u64,
    /// Bytes moved.
    pub bytes: u64,
    /// The classification.
    pub pattern: Pattern,
    /// The dominant stride (offset difference of successive accesses), bytes.
    pub stride: Option<i64>,
    /// Successive pairs with known offsets.
    pub pairs: u64,
    /// Pairs where the second access starts at the end of the first.
    pub contiguous_pairs: u64,
    /// Pairs with the dominant stride.
    pub stride_pairs: u64,
}

/// Access pattern of one rank on one file at one layer.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Access {
    /// The file.
    pub path: String,
    /// The rank.
    pub rank: i32,
    /// The layer.
    pub layer: Layer,
    /// Reads, if any.
    pub read: Option<Sequence>,
    /// Writes, if any.
    pub write: Option<Sequence>,
    /// Data accesses with a known offset.
    pub accesses: u64,
    /// Of those, offsets not a multiple of the block size.
    pub misaligned_block: u64,
    /// Of those, offsets not a multiple of the stripe size (None: stripe size unknown).
    pub misaligned_stripe: Option<u64>,
    /// MPI-IO: the file view in force had holes (filetype extent > size) at some access, so
    /// each call is noncontiguous in the file.
    pub noncontiguous_view: bool,
}

/// Shared by several ranks, or one file per process.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Sharing {
    /// More than one rank has records on the file.
    Shared,
    /// One rank.
    PerProcess,
}

/// Independent against collective MPI-IO on a file.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct MpiIoMix {
    /// Independent MPI-IO data calls.
    pub independent_calls: u64,
    /// Collective MPI-IO data calls (on every rank).
    pub collective_calls: u64,
    /// Bytes of independent calls.
    pub independent_bytes: u64,
    /// Bytes of collective calls.
    pub collective_bytes: u64,
    /// POSIX data calls beneath independent calls.
    pub posix_under_independent: u64,
    /// POSIX data calls beneath collective calls.
    pub posix_under_collective: u64,
    /// posix_under_independent / independent_calls.
    pub posix_per_independent: Option<f64>,
    /// posix_under_collective / collective_calls.
    pub posix_per_collective: Option<f64>,
}

/// One file.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FilePattern {
    /// Path.
    pub path: String,
    /// File system type (files.parquet).
    pub fs_type: String,
    /// Ranks with records on it.
    pub ranks: u64,
    /// Shared or per process.
    pub sharing: Sharing,
    /// Application-level read calls.
    pub reads: u64,
    /// Application-level write calls.
    pub writes: u64,
    /// Application-level bytes read.
    pub read_bytes: u64,
    /// Application-level bytes written.
    pub written_bytes: u64,
    /// MPI-IO calls by kind and POSIX calls per MPI-IO call.
    pub mpiio: MpiIoMix,
    /// The stripe size hint, if any.
    pub stripe_size: Option<u64>,
}

/// Metadata operations and their rate.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct MetadataRate {
    /// POSIX and STDIO metadata calls (what the file system serves).
    pub operations: u64,
    /// Their summed duration, ns.
    pub time_ns: i64,
    /// operations per second of job time.
    pub per_sec: Option<f64>,
    /// MPI-IO metadata calls (open, set_view, delete, ...).
    pub mpiio_operations: u64,
    /// The rank with the most POSIX/STDIO metadata calls.
    pub busiest_rank: Option<i32>,
    /// Its calls.
    pub busiest_rank_operations: u64,
    /// POSIX/STDIO metadata calls by function, most first.
    pub by_function: Vec<(String, u64)>,
}

/// The access patterns of a trace.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Patterns {
    /// Block size used for alignment, bytes.
    pub block_size: u64,
    /// Files with data or metadata records, by path.
    pub files: Vec<FilePattern>,
    /// Per (file, rank, layer) with data accesses, by path, layer, rank.
    pub accesses: Vec<Access>,
    /// Metadata operations.
    pub metadata: MetadataRate,
}

#[derive(Debug, Default)]
struct SeqAcc {
    operations: u64,
    bytes: u64,
    last: Option<(i64, i64)>,
    pairs: u64,
    contiguous: u64,
    /// Each stride and its pairs, at most `MAX_STRIDES`: a short list, searched faster than
    /// a map.
    strides: Vec<(i64, u64)>,
}

/// `off` is not a multiple of `unit` (not 0): a mask for a power of two, not a division (the
/// block and stripe sizes nearly always are).
#[inline]
fn misaligned(off: i64, unit: i64) -> bool {
    if unit > 0 && unit & (unit - 1) == 0 {
        return off & (unit - 1) != 0;
    }
    off % unit != 0
}

impl SeqAcc {
    fn add(&mut self, offset: Option<i64>, size: i64, moved: u64) {
        self.operations += 1;
        self.bytes += moved;
        let Some(off) = offset else {
            self.last = None;
            return;
        };
        if let Some((lo, ls)) = self.last {
            self.pairs += 1;
            if off == lo + ls {
                self.contiguous += 1;
            }
            let stride = off - lo;
            if let Some(i) = self.strides.iter().position(|(s, _)| *s == stride) {
                self.strides[i].1 += 1;
                // The stride seen most moves to the front, where the search finds it first.
                if i > 0 && self.strides[i].1 > self.strides[i - 1].1 {
                    self.strides.swap(i, i - 1);
                }
            } else if self.strides.len() < MAX_STRIDES {
                self.strides.push((stride, 1));
            }
        }
        self.last = Some((off, size.max(0)));
    }

    fn result(&self) -> Option<Sequence> {
        if self.operations == 0 {
            return None;
        }
        // Dominant stride; ties to the smaller magnitude, then the positive, for stable output.
        // Distinct strides: the order of the list does not matter.
        let top = self
            .strides
            .iter()
            .max_by(|a, b| {
                a.1.cmp(&b.1)
                    .then_with(|| b.0.unsigned_abs().cmp(&a.0.unsigned_abs()))
                    .then_with(|| a.0.cmp(&b.0))
            })
            .copied();
        let regular = |n: u64| self.pairs > 0 && n as f64 >= REGULAR_SHARE * self.pairs as f64;
        let pattern = if self.pairs == 0 {
            Pattern::Single
        } else if regular(self.contiguous) {
            Pattern::Contiguous
        } else if top.is_some_and(|(_, c)| regular(c)) {
            Pattern::Strided
        } else {
            Pattern::Random
        };
        Some(Sequence {
            operations: self.operations,
            bytes: self.bytes,
            pattern,
            stride: top.map(|(s, _)| s),
            pairs: self.pairs,
            contiguous_pairs: self.contiguous,
            stride_pairs: top.map_or(0, |(_, c)| c),
        })
    }
}

#[derive(Debug, Default)]
struct AccessAcc {
    read: SeqAcc,
    write: SeqAcc,
    accesses: u64,
    misaligned_block: u64,
    misaligned_stripe: u64,
    stripe_known: bool,
    noncontiguous_view: bool,
    /// The hints of its rank and file, read once, at its first access that asks.
    hints: Option<AccessHints>,
}

/// The hints an access consults at every data call, parsed once per (file, rank, layer).
#[derive(Debug)]
struct AccessHints {
    stripe: Timeline<u64>,
    view_size: Timeline<u64>,
    view_extent: Timeline<u64>,
}

impl AccessHints {
    fn new(h: &Hints, rank: i32, file: i32) -> Self {
        AccessHints {
            stripe: h.timeline(rank, file, hints::STRIPING_UNIT),
            view_size: h.timeline(rank, file, hints::VIEW_FILETYPE_SIZE),
            view_extent: h.timeline(rank, file, hints::VIEW_FILETYPE_EXTENT),
        }
    }

    /// As [`Hints::noncontiguous_view`].
    fn noncontiguous_view(&self, t: i64) -> Option<bool> {
        let (size, extent) = (self.view_size.at(t)?, self.view_extent.at(t)?);
        Some(View { size, extent }.noncontiguous())
    }
}

#[derive(Debug, Default)]
struct FileAcc {
    ranks: FxHashSet<i32>,
    /// The rank added last: records come in runs of one rank (the store order), so only the
    /// first of a run touches `ranks`.
    last_rank: Option<i32>,
    reads: u64,
    writes: u64,
    read_bytes: u64,
    written_bytes: u64,
    mix: MpiIoMix,
}

/// What an open call is, for its descendants.
#[derive(Clone, Copy, Debug)]
struct Open {
    /// An I/O layer call.
    io: bool,
    /// A data call.
    data: bool,
    /// MPI-IO data call: (file, collective).
    mpiio_data: Option<(Option<i32>, bool)>,
}

/// Options of the pattern analysis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// File system block size for alignment, bytes.
    pub block_size: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            block_size: DEFAULT_BLOCK_SIZE,
        }
    }
}

/// The pattern visitor.
#[derive(Debug)]
pub struct PatternsVisitor {
    options: Options,
    kinds: PerFunc<(OpKind, Option<IoClass>, bool)>,
    nesting: Nesting<Open>,
    /// Per (file, rank, layer) with records.
    accesses: RecentMap<(i32, i32, Layer), AccessAcc>,
    /// Per file with records.
    files: RecentMap<i32, FileAcc>,
    metadata: MetadataRate,
    metadata_by_rank: FxHashMap<i32, u64>,
    metadata_by_func: FxHashMap<u32, u64>,
}

impl PatternsVisitor {
    /// A new visitor.
    pub fn new(options: Options) -> Self {
        PatternsVisitor {
            options,
            kinds: PerFunc::new(|l, f| (functions::kind_of(l, f), io_class(l, f), is_open(f))),
            nesting: Nesting::new(),
            accesses: RecentMap::default(),
            files: RecentMap::default(),
            metadata: MetadataRate::default(),
            metadata_by_rank: FxHashMap::default(),
            metadata_by_func: FxHashMap::default(),
        }
    }

    /// The result, after the pass.
    pub fn result(&self, ctx: &Context<'_>) -> Patterns {
        let path = |f: i32| ctx.trace.file_path(f).unwrap_or("?").to_string();
        let mut files: Vec<FilePattern> = self
            .files
            .iter()
            .map(|&(f, ref a)| {
                let mut mix = a.mix.clone();
                let ratio = |n: u64, d: u64| (d > 0).then(|| n as f64 / d as f64);
                mix.posix_per_independent =
                    ratio(mix.posix_under_independent, mix.independent_calls);
                mix.posix_per_collective = ratio(mix.posix_under_collective, mix.collective_calls);
                let files = &ctx.trace.files;
                let fs_type = files
                    .binary_search_by_key(&f, |r| r.file_id)
                    .map_or_else(|_| String::new(), |i| files[i].fs_type.clone());
                FilePattern {
                    path: path(f),
                    fs_type,
                    ranks: a.ranks.len() as u64,
                    sharing: if a.ranks.len() > 1 {
                        Sharing::Shared
                    } else {
                        Sharing::PerProcess
                    },
                    reads: a.reads,
                    writes: a.writes,
                    read_bytes: a.read_bytes,
                    written_bytes: a.written_bytes,
                    mpiio: mix,
                    stripe_size: ctx
                        .hints
                        .any(f, hints::STRIPING_UNIT)
                        .and_then(|v| v.trim().parse().ok()),
                }
            })
            .collect();
        files.sort_by(|a, b| a.path.cmp(&b.path));
        let mut accesses: Vec<Access> = self
            .accesses
            .iter()
            .map(|&((f, rank, layer), ref a)| Access {
                path: path(f),
                rank,
                layer,
                read: a.read.result(),
                write: a.write.result(),
                accesses: a.accesses,
                misaligned_block: a.misaligned_block,
                misaligned_stripe: a.stripe_known.then_some(a.misaligned_stripe),
                noncontiguous_view: a.noncontiguous_view,
            })
            .collect();
        accesses.sort_by(|a, b| (&a.path, a.layer, a.rank).cmp(&(&b.path, b.layer, b.rank)));
        let mut metadata = self.metadata.clone();
        let secs = ctx.trace.meta.job.duration_ns as f64 / 1e9;
        metadata.per_sec = (secs > 0.0).then(|| metadata.operations as f64 / secs);
        // Busiest rank: most calls, then the lowest rank.
        if let Some((&r, &n)) = self
            .metadata_by_rank
            .iter()
            .max_by(|a, b| a.1.cmp(b.1).then_with(|| b.0.cmp(a.0)))
        {
            metadata.busiest_rank = Some(r);
            metadata.busiest_rank_operations = n;
        }
        let mut by_func: Vec<(String, u64)> = self
            .metadata_by_func
            .iter()
            .map(|(&k, &v)| (self.kinds.name(k).to_string(), v))
            .collect();
        by_func.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        metadata.by_function = by_func;
        Patterns {
            block_size: self.options.block_size,
            files,
            accesses,
            metadata,
        }
    }
}

impl Visitor for PatternsVisitor {
    fn visit(&mut self, e: &Event<'_>, ctx: &Context<'_>) {
        let (func, (kind, class, open)) = self.kinds.entry(e);
        let stack = self.nesting.enter(e, |_| {});
        let data = matches!(kind, OpKind::Read | OpKind::Write) && is_io_layer(e.layer);
        let mpiio_data = (data && e.layer == Layer::MpiIo).then_some((e.file_id, e.collective));
        let top_level_data = data && !stack.iter().any(|f| f.data.data);
        let enclosing_io = stack.iter().rev().find(|f| f.data.io).map(|f| f.data);
        stack.push(Frame::of(
            e,
            Open {
                io: is_io_layer(e.layer),
                data,
                mpiio_data,
            },
        ));

        // Metadata calls and their rate.
        if class == Some(IoClass::Metadata) {
            if e.layer == Layer::MpiIo {
                self.metadata.mpiio_operations += 1;
            } else {
                self.metadata.operations += 1;
                self.metadata.time_ns += e.duration_ns;
                *self.metadata_by_rank.entry(e.rank).or_default() += 1;
                *self.metadata_by_func.entry(func).or_default() += 1;
            }
        }

        let Some(file) = e.file_id else { return };
        if class == Some(IoClass::Metadata) && open {
            for layer in [Layer::Posix, Layer::Stdio, Layer::MpiIo] {
                if let Some(a) = self.accesses.get_mut((file, e.rank, layer)) {
                    a.read.last = None;
                    a.write.last = None;
                }
            }
        }
        let fa = self.files.entry(file);
        if fa.last_rank != Some(e.rank) {
            fa.ranks.insert(e.rank);
            fa.last_rank = Some(e.rank);
        }
        if !data {
            return;
        }
        let size = e.size.max(0) as u64;
        let moved = functions::bytes_moved(size, e.result, e.error);
        if top_level_data {
            if kind == OpKind::Read {
                fa.reads += 1;
                fa.read_bytes += moved;
            } else {
                fa.writes += 1;
                fa.written_bytes += moved;
            }
        }
        if e.layer == Layer::MpiIo {
            if e.collective {
                fa.mix.collective_calls += 1;
                fa.mix.collective_bytes += moved;
            } else {
                fa.mix.independent_calls += 1;
                fa.mix.independent_bytes += moved;
            }
        } else if let Some(Open {
            mpiio_data: Some((pf, collective)),
            ..
        }) = enclosing_io
        {
            let parent_file = pf.unwrap_or(file);
            let pa = self.files.entry(parent_file);
            if collective {
                pa.mix.posix_under_collective += 1;
            } else {
                pa.mix.posix_under_independent += 1;
            }
        }

        let acc = self.accesses.entry((file, e.rank, e.layer));
        let seq = if kind == OpKind::Read {
            &mut acc.read
        } else {
            &mut acc.write
        };
        seq.add(e.offset, e.size, moved);
        let mpiio = e.layer == Layer::MpiIo;
        if e.offset.is_none() && (!mpiio || acc.noncontiguous_view) {
            return;
        }
        let found = (acc.hints).get_or_insert_with(|| AccessHints::new(&ctx.hints, e.rank, file));
        if let Some(off) = e.offset {
            acc.accesses += 1;
            let block = self.options.block_size.max(1) as i64;
            if misaligned(off, block) {
                acc.misaligned_block += 1;
            }
            if let Some(stripe) = found.stripe.at(e.start_ns) {
                acc.stripe_known = true;
                if stripe > 0 && misaligned(off, stripe as i64) {
                    acc.misaligned_stripe += 1;
                }
            }
        }
        if mpiio && !acc.noncontiguous_view {
            if let Some(v) = found.noncontiguous_view(e.start_ns) {
                acc.noncontiguous_view = v;
            }
        }
    }
}

/// Groups of ranks by pattern for one (file, layer, direction), for summaries: (pattern,
/// stride, ranks), most ranks first.
pub fn rank_groups(
    accesses: &[Access],
    path: &str,
    layer: Layer,
    write: bool,
) -> Vec<(Pattern, Option<i64>, u64)> {
    let mut groups: BTreeMap<(Pattern, Option<i64>), u64> = BTreeMap::new();
    for a in accesses
        .iter()
        .filter(|a| a.path == path && a.layer == layer)
    {
        let s = if write { &a.write } else { &a.read };
        if let Some(s) = s {
            let stride = (s.pattern == Pattern::Strided)
                .then_some(s.stride)
                .flatten();
            *groups.entry((s.pattern, stride)).or_default() += 1;
        }
    }
    let mut v: Vec<(Pattern, Option<i64>, u64)> =
        groups.into_iter().map(|((p, s), n)| (p, s, n)).collect();
    v.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| (a.0, a.1).cmp(&(b.0, b.1))));
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{self, coll, ev, io, FILE_A, FILE_B};

    fn find<'a>(p: &'a Patterns, path: &str, rank: i32, layer: Layer) -> &'a Access {
        p.accesses
            .iter()
            .find(|a| a.path == path && a.rank == rank && a.layer == layer)
            .unwrap_or_else(|| panic!("no {path} r{rank} {layer}"))
    }

    /// rank 0 on /data/a: writes strided by 1000 (4 x 100 B), reads contiguous (3 x 512 B),
    /// then reopens and writes at 4000 (a new sequence). rank 1 on /data/a: random reads.
    /// rank 1 alone on /data/b.
    fn job(dir: &std::path::Path) -> pioscope_trace::store::Trace {
        let mut a = testutil::rank(0, 2, "n1");
        a.settings(
            FILE_A,
            testutil::id("MPI_File_open"),
            0,
            &[("striping_unit", "1000")],
        );
        a.events(
            0,
            &[
                ev("open", 10, 5).object(FILE_A).result(3),
                io("pwrite", 100, 10, FILE_A, 0, 100),
                io("pwrite", 200, 10, FILE_A, 1000, 100),
                io("pwrite", 300, 10, FILE_A, 2000, 100),
                io("pwrite", 400, 10, FILE_A, 3000, 100),
                io("pread", 500, 10, FILE_A, 4096, 512),
                io("pread", 600, 10, FILE_A, 4608, 512),
                io("pread", 700, 10, FILE_A, 5120, 512),
                ev("open", 800, 5).object(FILE_A).result(3),
                io("pwrite", 900, 10, FILE_A, 4000, 100),
                ev("stat", 950, 5).object(FILE_A),
            ],
        );
        let mut b = testutil::rank(1, 2, "n1");
        b.events(
            0,
            &[
                io("pread", 100, 10, FILE_A, 5000, 10),
                io("pread", 200, 10, FILE_A, 100, 10),
                io("pread", 300, 10, FILE_A, 9000, 10),
                io("pread", 400, 10, FILE_A, 300, 10),
                io("pread", 500, 10, FILE_A, 7000, 10),
                io("pwrite", 600, 10, FILE_B, 0, 10),
            ],
        );
        testutil::trace(dir, vec![a, b])
    }

    #[test]
    fn strided_contiguous_random_and_alignment() {
        let dir = tempfile::tempdir().expect("tmp");
        let t = job(dir.path());
        let p = testutil::run(&t, PatternsVisitor::new(Options::default()), |v, c| {
            v.result(c)
        });
        let a0 = find(&p, "/data/a", 0, Layer::Posix);
        let w = a0.write.as_ref().expect("writes");
        assert_eq!(
            (
                w.operations,
                w.bytes,
                w.pattern,
                w.stride,
                w.pairs,
                w.stride_pairs
            ),
            (5, 500, Pattern::Strided, Some(1000), 3, 3),
            "the write at 4000 after the reopen starts a new sequence"
        );
        let r = a0.read.as_ref().expect("reads");
        assert_eq!(
            (r.pattern, r.pairs, r.contiguous_pairs, r.stride),
            (Pattern::Contiguous, 2, 2, Some(512))
        );
        // Offsets 0 and 4096 are block-aligned, the other 6 are not; the stripe is 1000 B:
        // 0, 1000, 2000, 3000, 4000 aligned; 4096, 4608, 5120 not.
        assert_eq!(
            (a0.accesses, a0.misaligned_block, a0.misaligned_stripe),
            (8, 6, Some(3))
        );
        let r1 = find(&p, "/data/a", 1, Layer::Posix)
            .read
            .as_ref()
            .expect("reads");
        assert_eq!(
            (r1.pattern, r1.pairs, r1.contiguous_pairs),
            (Pattern::Random, 4, 0)
        );
        assert_eq!(
            find(&p, "/data/a", 1, Layer::Posix).misaligned_stripe,
            None,
            "no striping hint for rank 1"
        );
        let b1 = find(&p, "/data/b", 1, Layer::Posix)
            .write
            .as_ref()
            .expect("w");
        assert_eq!((b1.pattern, b1.stride), (Pattern::Single, None));
        assert_eq!(
            rank_groups(&p.accesses, "/data/a", Layer::Posix, false).len(),
            2
        );
    }

    #[test]
    fn files_sharing_mix_and_metadata() {
        let dir = tempfile::tempdir().expect("tmp");
        let t = job(dir.path());
        let p = testutil::run(&t, PatternsVisitor::new(Options::default()), |v, c| {
            v.result(c)
        });
        assert_eq!(p.block_size, 4096);
        let fa = &p.files[0];
        assert_eq!(
            (fa.path.as_str(), fa.ranks, fa.sharing, fa.stripe_size),
            ("/data/a", 2, Sharing::Shared, Some(1000))
        );
        assert_eq!(
            (fa.reads, fa.read_bytes, fa.writes, fa.written_bytes),
            (8, 1586, 5, 500)
        );
        let fb = &p.files[1];
        assert_eq!(
            (fb.ranks, fb.sharing, fb.fs_type.as_str()),
            (1, Sharing::PerProcess, "ext4")
        );
        // Metadata: 2 opens + 1 stat, job of 955 ns.
        let m = &p.metadata;
        assert_eq!((m.operations, m.time_ns, m.mpiio_operations), (3, 15, 0));
        assert_eq!((m.busiest_rank, m.busiest_rank_operations), (Some(0), 3));
        assert_eq!(
            m.by_function,
            vec![("open".to_string(), 2), ("stat".to_string(), 1)]
        );
        assert_eq!(m.per_sec, Some(3.0 / 955e-9));
    }

    /// Independent write_at with 3 pwrites beneath (one inside an MPI call inside it, still
    /// its child), a collective write_at_all with 1 pwrite beneath on rank 0 and none on
    /// rank 1; an MPI_File_close with a POSIX write beneath is not a data parent.
    #[test]
    fn independent_collective_and_children_per_parent() {
        let dir = tempfile::tempdir().expect("tmp");
        let mut a = testutil::rank(0, 2, "n1");
        a.settings(
            FILE_A,
            testutil::id("MPI_File_set_view"),
            0,
            &[
                ("view.filetype_size", "32"),
                ("view.filetype_extent", "128"),
            ],
        );
        a.events(
            0,
            &[
                io("MPI_File_write_at", 100, 100, FILE_A, 32, 96),
                io("pwrite", 110, 10, FILE_A, 32, 32).depth(1),
                io("pwrite", 130, 10, FILE_A, 160, 32).depth(1),
                ev("MPI_Allreduce", 150, 20).size(4).depth(1),
                io("pwrite", 155, 5, FILE_A, 288, 32).depth(2),
                coll(io("MPI_File_write_at_all", 300, 100, FILE_A, 0, 64), 2),
                io("pwrite", 310, 10, FILE_A, 0, 256).depth(1),
                coll(ev("MPI_File_close", 500, 50).object(FILE_A), 3),
                io("write", 510, 10, FILE_A, 4096, 8).depth(1),
            ],
        );
        let mut b = testutil::rank(1, 2, "n1");
        b.events(
            0,
            &[coll(
                io("MPI_File_write_at_all", 300, 100, FILE_A, 64, 64),
                2,
            )],
        );
        let t = testutil::trace(dir.path(), vec![a, b]);
        let p = testutil::run(&t, PatternsVisitor::new(Options::default()), |v, c| {
            v.result(c)
        });
        let m = &p.files[0].mpiio;
        assert_eq!(
            (
                m.independent_calls,
                m.collective_calls,
                m.independent_bytes,
                m.collective_bytes
            ),
            (1, 2, 96, 128)
        );
        assert_eq!(
            (m.posix_under_independent, m.posix_under_collective),
            (3, 1)
        );
        assert_eq!(m.posix_per_independent, Some(3.0));
        assert_eq!(m.posix_per_collective, Some(0.5));
        // Application level: the three MPI-IO calls and the write inside close.
        assert_eq!((p.files[0].writes, p.files[0].written_bytes), (4, 232));
        assert!(find(&p, "/data/a", 0, Layer::MpiIo).noncontiguous_view);
        assert!(!find(&p, "/data/a", 1, Layer::MpiIo).noncontiguous_view);
    }
}
