//! A synthetic HPIO-like trace store of any size, streamed through the store writer (for the
//! scale benchmarks of `report` and the viewer: `pioscope synth`).
//!
//! Design: every rank runs the same sequence of steps on a shared timeline. The timeline of a
//! step (when each collective phase ends, how long each two-phase cycle takes) comes from an
//! RNG seeded by (seed, step), so every rank recomputes the same skeleton without any state
//! shared between ranks; per-rank noise comes from an RNG seeded by (seed, rank). Ranks are
//! written one after the other in time order, so the store order (rank, start) comes for free
//! and the events need no memory; the store writer keeps the point-to-point records until it
//! pairs the messages at the end (6% of the events here).

use std::path::Path;

use pioscope_trace::functions::{self, Layer};
use pioscope_trace::raw::format::flags;
use pioscope_trace::store::meta::{ClockMeta, ContainerKind, JobMeta, Meta, ProcessMeta};
use pioscope_trace::store::{
    Event, FileRow, FinishedStore, MpiArgs, MpiRef, SettingRow, StoreError, StoreWriter,
};
use thiserror::Error;

/// Why a synthetic trace cannot be written.
#[derive(Debug, Error)]
pub enum SynthError {
    /// Fewer events than one step of every rank takes.
    #[error(
        "--events {events} is too small for {ranks} ranks: at least {min} (one step per rank)"
    )]
    TooFewEvents {
        /// Events asked for.
        events: u64,
        /// Ranks asked for.
        ranks: u32,
        /// The least that works.
        min: u64,
    },
    /// No ranks.
    #[error("--ranks must be at least 1")]
    NoRanks,
    /// More ranks than a synthetic trace is written for.
    #[error("--ranks {ranks} is too many: at most {MAX_RANKS}")]
    TooManyRanks {
        /// Ranks asked for.
        ranks: u32,
    },
    /// Writing the store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What was written.
#[derive(Debug, Clone)]
pub struct SynthSummary {
    /// Steps per rank.
    pub steps: u64,
    /// What the store writer wrote (meta.json with the counts and the job's duration, the
    /// level-of-detail index).
    pub store: FinishedStore,
}

const RANKS_PER_HOST: u32 = 4;
/// The most ranks of a synthetic trace: every collective step involves all ranks and the
/// store keeps per-rank tables, so a million ranks exhausts memory before the first event.
pub const MAX_RANKS: u32 = 16_384;
const FILES: u64 = 4;
const CYCLES: u64 = 4;
const MIB: i64 = 1 << 20;
/// Bytes each rank contributes to one write_all (the aggregator writes 4 MiB per cycle).
const RANK_BYTES: i64 = CYCLES as i64 * MIB * 4 / RANKS_PER_HOST as i64;
const INDEP_WRITES: u64 = 3;
const INDEP_SIZE: i64 = 100_000;
const SIEVE_ALIGN: i64 = 4096;
/// Upper bound of one independent write and its children, gap included.
const INDEP_SLOT_NS: i64 = 120_000;
const US: i64 = 1_000;

const COMM: &str = "MPI_COMM_WORLD";

/// Events of one step on an aggregator and on another rank (without the extra writes).
fn step_events(aggregator: bool) -> u64 {
    // open, set_view, sync, close + write_all + cycles + 3 writes with pread+pwrite
    let cycle = if aggregator {
        1 + 3 + 1 + 3 + 1 // Alltoall, 3 Irecv, Waitall + 3 completions, pwrite
    } else {
        1 + 1 + 1 + 1 // Alltoall, Isend, Waitall + 1 completion
    };
    4 + 1 + CYCLES * cycle + INDEP_WRITES * 3
}

/// xorshift64*: small, fast, deterministic.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        // splitmix64 of the seed, so nearby seeds give unrelated streams (never 0).
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        Rng((z ^ (z >> 31)) | 1)
    }
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in [lo, hi].
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % ((hi - lo) as u64 + 1)) as i64
    }
}

/// The shared timeline of one step, identical on every rank.
struct Skeleton {
    open_end: i64,
    view_end: i64,
    wa_start: i64,
    cycles: [(i64, i64); CYCLES as usize],
    wa_end: i64,
    indep_start: i64,
    sync_end: i64,
    close_end: i64,
    next: i64,
}

impl Skeleton {
    fn new(seed: u64, step: u64, t: i64, indep_slots: i64) -> Self {
        let mut g = Rng::new(seed ^ step.wrapping_mul(0xA24B_AED4_963E_E407) ^ 0x5EED);
        let open_end = t + g.range(150, 450) * US;
        let view_end = open_end + g.range(20, 80) * US;
        let wa_start = view_end + 5 * US;
        let mut c = wa_start + 20 * US;
        let mut cycles = [(0, 0); CYCLES as usize];
        for cy in cycles.iter_mut() {
            let len = g.range(2_000, 3_500) * US;
            *cy = (c, c + len);
            c += len;
        }
        let wa_end = c + 50 * US;
        let indep_start = wa_end + 5 * US;
        let indep_end = indep_start + indep_slots * INDEP_SLOT_NS + 20 * US;
        // Sync now and then waits much longer (the file system flushing).
        let sync_len = if g.range(0, 99) < 3 {
            g.range(5_000, 30_000)
        } else {
            g.range(500, 2_500)
        } * US;
        let sync_end = indep_end + sync_len;
        let close_end = sync_end + g.range(50, 250) * US;
        let next = close_end + g.range(20, 120) * US;
        Skeleton {
            open_end,
            view_end,
            wa_start,
            cycles,
            wa_end,
            indep_start,
            sync_end,
            close_end,
            next,
        }
    }
}

/// Per-rank generator state: the writer, row ids, the parent stack.
struct RankGen<'w> {
    w: &'w mut StoreWriter,
    rng: Rng,
    rank: i32,
    next_request: i64,
    file_events: &'w mut [i64],
    max_end: i64,
}

/// One row to push (fields not set are the defaults of a top-level call).
struct Row<'a> {
    start: i64,
    dur: i64,
    layer: Layer,
    func: &'a str,
    depth: u8,
    parent: Option<i64>,
    file: Option<i32>,
    offset: Option<i64>,
    size: i64,
    flags: u8,
    instance: Option<i32>,
    request: Option<i64>,
    peer: Option<i32>,
    root: Option<i32>,
    comm_size: Option<i32>,
}

impl<'a> Row<'a> {
    fn new(layer: Layer, func: &'a str, start: i64, dur: i64) -> Self {
        Row {
            start,
            dur,
            layer,
            func,
            depth: 0,
            parent: None,
            file: None,
            offset: None,
            size: 0,
            flags: 0,
            instance: None,
            request: None,
            peer: None,
            root: None,
            comm_size: None,
        }
    }
    fn child(mut self, parent: i64, depth: u8) -> Self {
        self.parent = Some(parent);
        self.depth = depth;
        self
    }
}

impl RankGen<'_> {
    fn push(&mut self, r: Row<'_>) -> Result<i64, StoreError> {
        let id = self.w.rows() as i64;
        let is_mpi = r.layer == Layer::Mpi;
        if let Some(f) = r.file {
            self.file_events[f as usize] += 1;
        }
        self.max_end = self.max_end.max(r.start + r.dur);
        self.w.push(&Event {
            id,
            rank: self.rank,
            process: self.rank,
            thread: 0,
            start_ns: r.start,
            duration_ns: r.dur,
            layer: r.layer,
            func: r.func,
            func_id: functions::by_name(r.func).map_or(0, |f| f.id),
            depth: r.depth,
            parent: r.parent,
            file_id: r.file,
            offset: r.offset,
            size: r.size,
            result: r.size,
            error: 0,
            flags: r.flags,
            collective: r.flags & flags::COLLECTIVE != 0,
            instance: r.instance,
            mpi: MpiRef::to(&MpiArgs {
                request: r.request,
                peer: r.peer,
                tag: r.peer.map(|_| 7),
                root: r.root,
                comm_size: r.comm_size,
            }),
            comm: if is_mpi { Some(COMM) } else { None },
            region: None,
        })?;
        Ok(id)
    }

    /// A collective MPI-IO call in the shared window [phase_start, phase_end).
    fn collective(
        &mut self,
        func: &str,
        phase_start: i64,
        phase_end: i64,
        file: i32,
        instance: i32,
    ) -> Result<(i64, i64), StoreError> {
        let start = phase_start + self.rng.range(0, 10 * US);
        let end = phase_end - self.rng.range(0, 2 * US);
        let mut row = Row::new(Layer::MpiIo, func, start, end - start);
        row.file = Some(file);
        row.flags = flags::COLLECTIVE;
        row.instance = Some(instance);
        Ok((self.push(row)?, start))
    }

    /// One independent MPI_File_write of `events` rows (1: no children, 2: pwrite, 3: data
    /// sieving pread + pwrite) starting at t; returns its end.
    fn indep_write(
        &mut self,
        t: i64,
        file: i32,
        offset: i64,
        events: u64,
    ) -> Result<i64, StoreError> {
        let children = events.saturating_sub(1);
        let start = t + self.rng.range(US, 10 * US);
        let mut c = start + self.rng.range(2 * US, 6 * US);
        let lo = offset / SIEVE_ALIGN * SIEVE_ALIGN;
        let hi = (offset + INDEP_SIZE + SIEVE_ALIGN - 1) / SIEVE_ALIGN * SIEVE_ALIGN;
        let mut kids = Vec::with_capacity(2);
        if children >= 2 {
            kids.push(("pread", self.rng.range(15 * US, 40 * US)));
        }
        if children >= 1 {
            kids.push(("pwrite", self.rng.range(15 * US, 40 * US)));
        }
        let total: i64 = kids.iter().map(|k| k.1 + 2 * US).sum();
        let end = c + total + self.rng.range(2 * US, 8 * US);
        let mut row = Row::new(Layer::MpiIo, "MPI_File_write", start, end - start);
        row.file = Some(file);
        row.offset = Some(offset);
        row.size = INDEP_SIZE;
        let id = self.push(row)?;
        for (func, dur) in kids {
            let mut k = Row::new(Layer::Posix, func, c, dur).child(id, 1);
            k.file = Some(file);
            k.offset = Some(lo);
            k.size = if children >= 2 { hi - lo } else { INDEP_SIZE };
            if children < 2 {
                k.offset = Some(offset);
            }
            self.push(k)?;
            c += dur + 2 * US;
        }
        Ok(end)
    }
}

/// Writes a synthetic trace store of exactly `events` events over `ranks` ranks at `out`
/// (which must not exist).
pub fn synthesize(
    out: &Path,
    events: u64,
    ranks: u32,
    seed: u64,
) -> Result<SynthSummary, SynthError> {
    if ranks == 0 {
        return Err(SynthError::NoRanks);
    }
    if ranks > MAX_RANKS {
        return Err(SynthError::TooManyRanks { ranks });
    }
    let r = ranks as u64;
    let min = r * step_events(true);
    if events < min {
        return Err(SynthError::TooFewEvents { events, ranks, min });
    }
    let budget = |rank: u64| events / r + u64::from(rank < events % r);
    let is_agg = |rank: u64| rank % RANKS_PER_HOST as u64 == 0;
    // Same number of steps on every rank, so every collective has all ranks; what is left of a
    // rank's share becomes extra independent writes, spread evenly over its steps.
    let steps = (events / r) / step_events(true);
    let leftover = |rank: u64| budget(rank) - steps * step_events(is_agg(rank));
    let max_extra = (0..r)
        .map(|k| leftover(k).div_ceil(steps))
        .max()
        .unwrap_or(0);
    let indep_slots = (INDEP_WRITES + max_extra) as i64;
    let hosts = ranks.div_ceil(RANKS_PER_HOST);
    let indep_region = r as i64 * indep_slots * INDEP_SIZE;
    let round_bytes = r as i64 * RANK_BYTES + indep_region;

    let mut writer = StoreWriter::create(out)?;
    let mut file_events = vec![0i64; FILES as usize];
    let mut settings = Vec::new();
    let mut max_end = 0i64;
    let mut rank_start = Vec::with_capacity(ranks as usize);

    for rank in 0..r {
        let agg = is_agg(rank);
        let host = rank / RANKS_PER_HOST as u64;
        let left = leftover(rank);
        let mut g = RankGen {
            w: &mut writer,
            rng: Rng::new(seed.wrapping_mul(31).wrapping_add(rank + 1)),
            rank: rank as i32,
            next_request: 1,
            file_events: &mut file_events,
            max_end: 0,
        };
        let mut t = 1_000 * US; // tracer start to first open
        let mut first_start = None;
        for step in 0..steps {
            let sk = Skeleton::new(seed, step, t, indep_slots);
            let file = (step % FILES) as i32;
            let base = (step / FILES) as i64 * round_bytes;
            let inst = (step * 5) as i32;

            let (_, open_start) = g.collective("MPI_File_open", t, sk.open_end, file, inst + 1)?;
            first_start.get_or_insert(open_start);
            if step < FILES {
                for (key, value) in [
                    ("cb_buffer_size", "16777216".to_string()),
                    ("cb_nodes", hosts.to_string()),
                    ("romio_cb_write", "enable".to_string()),
                ] {
                    settings.push(SettingRow {
                        rank: rank as i32,
                        process: rank as i32,
                        time_ns: open_start,
                        file_id: Some(file),
                        func: "MPI_File_open".to_string(),
                        key: key.to_string(),
                        value,
                    });
                }
            }
            g.collective(
                "MPI_File_set_view",
                sk.open_end,
                sk.view_end,
                file,
                inst + 2,
            )?;

            // write_all: two-phase cycles.
            let wa_s = sk.wa_start + g.rng.range(0, 10 * US);
            let wa_e = sk.wa_end - g.rng.range(0, 2 * US);
            let mut row = Row::new(Layer::MpiIo, "MPI_File_write_all", wa_s, wa_e - wa_s);
            row.file = Some(file);
            row.offset = Some(base + rank as i64 * RANK_BYTES);
            row.size = RANK_BYTES;
            row.flags = flags::COLLECTIVE;
            row.instance = Some(inst + 3);
            let wa = g.push(row)?;
            let domain = base + host as i64 * RANKS_PER_HOST as i64 * RANK_BYTES;
            let agg_rank = (host * RANKS_PER_HOST as u64) as i32;
            for (c, &(cs, ce)) in sk.cycles.iter().enumerate() {
                let mut t1 = cs + g.rng.range(0, 5 * US);
                let dur = g.rng.range(20 * US, 80 * US);
                let mut a = Row::new(Layer::Mpi, "MPI_Alltoall", t1, dur).child(wa, 1);
                a.size = 8 * r as i64;
                a.flags = flags::COLLECTIVE;
                a.root = Some(-1);
                a.comm_size = Some(ranks as i32);
                g.push(a)?;
                t1 += dur + g.rng.range(US, 4 * US);
                let mut reqs = Vec::new();
                let peers: Vec<i32> = if agg {
                    (1..RANKS_PER_HOST as i32)
                        .map(|k| agg_rank + k)
                        .map(|p| p.min(ranks as i32 - 1))
                        .collect()
                } else {
                    vec![agg_rank]
                };
                for p in peers {
                    let dur = g.rng.range(US, 3 * US);
                    let func = if agg { "MPI_Irecv" } else { "MPI_Isend" };
                    let mut m = Row::new(Layer::Mpi, func, t1, dur).child(wa, 1);
                    m.size = MIB;
                    m.flags = flags::NONBLOCKING;
                    m.request = Some(g.next_request);
                    m.peer = Some(p);
                    reqs.push(g.next_request);
                    g.next_request += 1;
                    g.push(m)?;
                    t1 += dur + g.rng.range(US, 2 * US);
                }
                let wdur = g.rng.range(50 * US, 300 * US);
                let wait = g.push(Row::new(Layer::Mpi, "MPI_Waitall", t1, wdur).child(wa, 1))?;
                let step_ns = wdur / (reqs.len() as i64 + 1);
                for (i, req) in reqs.into_iter().enumerate() {
                    let mut k = Row::new(
                        Layer::Tracer,
                        "tracer_complete",
                        t1 + step_ns * (i as i64 + 1),
                        0,
                    )
                    .child(wait, 2);
                    k.flags = flags::COMPLETION;
                    k.request = Some(req);
                    g.push(k)?;
                }
                t1 += wdur + g.rng.range(US, 5 * US);
                if agg {
                    let end = ce - 10 * US - g.rng.range(0, 100 * US);
                    let mut p = Row::new(Layer::Posix, "pwrite", t1, end - t1).child(wa, 1);
                    p.file = Some(file);
                    p.offset = Some(domain + c as i64 * 4 * MIB);
                    p.size = 4 * MIB;
                    g.push(p)?;
                }
            }

            // Independent writes: the base ones plus this step's share of the leftover.
            let extra = left * (step + 1) / steps - left * step / steps;
            let mut groups = vec![3u64; INDEP_WRITES as usize];
            let mut e = extra;
            while e > 0 {
                let n = e.min(3);
                groups.push(n);
                e -= n;
            }
            let mut t2 = sk.indep_start;
            let own = base + r as i64 * RANK_BYTES + rank as i64 * indep_slots * INDEP_SIZE;
            for (w, n) in groups.into_iter().enumerate() {
                let off = own + w as i64 * INDEP_SIZE;
                t2 = g.indep_write(t2, file, off, n)?;
            }

            g.collective("MPI_File_sync", t2 + 2 * US, sk.sync_end, file, inst + 4)?;
            g.collective("MPI_File_close", sk.sync_end, sk.close_end, file, inst + 5)?;
            t = sk.next;
        }
        max_end = max_end.max(g.max_end);
        rank_start.push(first_start.unwrap_or(0));
    }
    debug_assert_eq!(writer.rows(), events);

    let files: Vec<FileRow> = (0..FILES)
        .map(|f| FileRow {
            file_id: f as i32,
            path: format!("/scratch/pioscope-synth/out-{f}.dat"),
            fs_type: "lustre".to_string(),
            fs_magic: 0x0BD0_0BD0,
            ranks: ranks as i32,
            events: file_events[f as usize],
        })
        .collect();
    let host_name = |rank: u32| format!("synth{:03}", rank / RANKS_PER_HOST);
    let command = format!("synth-hpio --events {events} --ranks {ranks} --seed {seed}");
    let processes = (0..ranks)
        .map(|rank| {
            // Generated, not traced: no raw file and no clock to fit or correct.
            let clock = ClockMeta::exact(
                "synthetic",
                max_end as u64,
                rank_start[rank as usize].min(1_000 * US),
            );
            let mut p = ProcessMeta::generated(
                rank,
                ContainerKind::Process,
                rank as i32,
                host_name(rank),
                clock,
            );
            p.pid = 10_000 + rank;
            p.ppid = 9_999;
            p.exe = Some("/usr/bin/synth-hpio".to_string());
            p.cmdline = Some(command.clone());
            p.facts = [
                ("rank", rank.to_string()),
                ("size", ranks.to_string()),
                ("host", host_name(rank)),
                ("cmdline", command.clone()),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
            p
        })
        .collect();
    let job = JobMeta {
        command: Some(command.clone()),
        start_unix_ns: 1_700_000_000_000_000_000,
        duration_ns: max_end,
        ranks,
        hosts: (0..ranks).map(host_name).collect(),
        mpi_library: Some("synthetic".to_string()),
    };
    let meta = Meta::new(
        format!("pioscope synth {}", env!("CARGO_PKG_VERSION")),
        job,
        processes,
    );
    let store = writer.finish(&files, &settings, meta)?;
    Ok(SynthSummary { steps, store })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pioscope_analysis::profile::{profile, Options};
    use pioscope_analysis::{compute, GroupBy, Scope};
    use pioscope_trace::store::{Trace, EVENTS_FILE};
    use std::collections::{HashMap, HashSet};

    /// Issue 3: the synthetic trace is a valid store with exactly N events.
    #[test]
    fn small_synthetic_trace_is_valid() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("t");
        let n = 10_007;
        let s = synthesize(&dir, n, 16, 3).unwrap();
        assert_eq!(s.store.meta.counts.events, n);
        let trace = Trace::open(&dir).unwrap();
        assert_eq!(trace.meta.counts.events, n);
        let mut count = 0u64;
        let mut last: Option<(i32, i64)> = None;
        let mut ends: HashMap<i64, (i64, u8)> = HashMap::new();
        let mut inst_ranks: HashMap<i32, HashSet<i32>> = HashMap::new();
        for batch in trace.events().unwrap() {
            let batch = batch.unwrap();
            for e in batch.iter() {
                assert_eq!(e.id as u64, count);
                count += 1;
                if let Some((r, t)) = last {
                    assert!((e.rank, e.start_ns) >= (r, t), "store order at {}", e.id);
                }
                last = Some((e.rank, e.start_ns));
                assert!(e.duration_ns >= 0);
                if let Some(p) = e.parent {
                    assert!(p < e.id);
                    let (pend, pdepth) = ends[&p];
                    assert!(e.end_ns() <= pend, "child {} outlives parent {p}", e.id);
                    assert_eq!(e.depth, pdepth + 1);
                } else {
                    assert_eq!(e.depth, 0);
                }
                ends.insert(e.id, (e.end_ns(), e.depth));
                if let Some(i) = e.instance {
                    inst_ranks.entry(i).or_default().insert(e.rank);
                }
            }
        }
        assert_eq!(count, n);
        assert!(!inst_ranks.is_empty());
        for (i, ranks) in &inst_ranks {
            assert_eq!(ranks.len(), 16, "instance {i}");
        }
        let max = *inst_ranks.keys().max().unwrap();
        assert_eq!(max as usize, inst_ranks.len(), "instances dense 1..N");

        let stats = compute(&trace, GroupBy::Func, Scope::Application).unwrap();
        assert_eq!(stats.events, n);
        let p = profile(&trace, &Options::default(), &mut |_, _| {}).unwrap();
        assert!(!p.findings.is_empty());
    }

    #[test]
    fn same_seed_same_trace() {
        let tmp = tempfile::tempdir().unwrap();
        let a = tmp.path().join("a");
        let b = tmp.path().join("b");
        synthesize(&a, 2_000, 4, 9).unwrap();
        synthesize(&b, 2_000, 4, 9).unwrap();
        let ea = std::fs::read(a.join(EVENTS_FILE)).unwrap();
        let eb = std::fs::read(b.join(EVENTS_FILE)).unwrap();
        assert_eq!(ea, eb);
        assert!(synthesize(&tmp.path().join("c"), 10, 4, 9).is_err());
    }

    #[test]
    fn a_million_ranks_is_refused_before_anything_is_allocated() {
        // Issue 12: synth --ranks 1000000 aborted with out-of-memory.
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("t");
        let e = synthesize(&out, u64::MAX / 2, 1_000_000, 1).unwrap_err();
        assert_eq!(e.to_string(), "--ranks 1000000 is too many: at most 16384");
        assert!(!out.exists());
    }
}
