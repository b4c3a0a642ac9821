//! `h5-chunk-stripe`: the storage requests of an HDF5 dataset's transfers do not fit the file
//! system's stripe, because its chunks are smaller than a stripe (each chunk its own small
//! request, many to a stripe) or because the file places objects off stripe boundaries (its
//! `H5Pset_alignment` is not a multiple of the stripe), so requests straddle stripes. Either
//! way the dataset's bytes touch more stripes than they fill: more requests, servers and locks
//! per byte. It reads the settings the runtime takes from the property lists (`h5.layout`,
//! `h5.chunk`, `h5.type_size`, `h5.dims` at H5Dcreate2/H5Dopen2; `h5.alignment` at
//! H5Fcreate/H5Fopen) and the stripe of the file (`util::stripe_of`).

use std::collections::{BTreeMap, HashMap};

use pioscope_trace::store::Event;
use pioscope_trace::{units, Layer, OpKind};

use super::config::Config;
use super::dispatch::{Interest, LIBRARY, POSIX};
use super::library;
use super::util::{self, Facts, General, Numbers, Requests};
use super::{misaligned, Evidence, Finding, Rule};
use crate::hints;
use crate::lookup::Keyed;
use crate::pass::Context;

/// Rule id.
pub(crate) const ID: &str = "h5-chunk-stripe";

/// The POSIX requests beneath one rank's transfers of one dataset.
#[derive(Clone, Copy, Debug, Default)]
struct Acc {
    requests: Requests,
    /// Stripes the requests touched, summed.
    touched: u64,
    /// Requests that start off a stripe boundary.
    off_boundary: u64,
    /// The stripe of the file they reach.
    stripe: u64,
    /// Elapsed time lost against whole aligned stripes (ns, summed over ranks).
    cost_ns: f64,
}

impl Acc {
    fn merge(&mut self, o: &Acc) {
        self.requests.merge(&o.requests);
        self.touched += o.touched;
        self.off_boundary += o.off_boundary;
        self.stripe = self.stripe.max(o.stripe);
        self.cost_ns += o.cost_ns;
    }

    /// Stripes the bytes fill when written in whole aligned stripes.
    fn needed(&self) -> u64 {
        self.requests.bytes.div_ceil(self.stripe.max(1))
    }
}

/// What the settings say of one dataset.
#[derive(Debug)]
struct Layout {
    dims: Vec<u64>,
    type_size: u64,
    chunk: Option<Vec<u64>>,
    /// Its file's `H5Pset_alignment` (1 when never set).
    alignment: u64,
    file: Option<i32>,
}

impl Layout {
    fn of(ctx: &Context<'_>, dataset: i32) -> Layout {
        let h = &ctx.hints;
        let shape = |key| h.any(dataset, key).map(parse_dims);
        let file = library::h5_file_of(ctx, dataset);
        Layout {
            dims: shape(hints::H5_DIMS).unwrap_or_default(),
            type_size: h
                .any(dataset, hints::H5_TYPE_SIZE)
                .and_then(|v| v.parse().ok())
                .unwrap_or(1),
            chunk: (h.any(dataset, hints::H5_LAYOUT) == Some("chunked"))
                .then(|| shape(hints::H5_CHUNK))
                .flatten(),
            alignment: file
                .and_then(|f| h.any(f, hints::H5_ALIGNMENT))
                .and_then(|v| v.parse().ok())
                .unwrap_or(1),
            file,
        }
    }

    fn chunk_bytes(&self) -> Option<u64> {
        let c = self.chunk.as_ref()?;
        Some(c.iter().product::<u64>() * self.type_size)
    }
}

/// "16x512" as [16, 512].
fn parse_dims(v: &str) -> Vec<u64> {
    v.split('x').filter_map(|d| d.parse().ok()).collect()
}

/// A chunk shape of at least `stripe` bytes grown from `chunk`: the fastest-varying dimension
/// first (up to the dataset's extent), so a chunk stays contiguous rows.
fn stripe_chunk(chunk: &[u64], dims: &[u64], type_size: u64, stripe: u64) -> Vec<u64> {
    let bytes = chunk.iter().product::<u64>() * type_size;
    let mut factor = stripe.div_ceil(bytes.max(1));
    let mut out = chunk.to_vec();
    for i in (0..out.len()).rev() {
        let room = dims.get(i).map_or(factor, |d| (d / out[i].max(1)).max(1));
        let grow = factor.min(room);
        out[i] *= grow;
        factor = factor.div_ceil(grow);
    }
    out
}

fn shape(dims: &[u64]) -> String {
    dims.iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// See the module doc.
pub(crate) struct H5ChunkStripe {
    general: General,
    min_requests: u64,
    parallel_fs_bytes: u64,
    stripes: HashMap<i32, Option<(u64, &'static str)>>,
    /// Per (rank, dataset).
    by: Keyed<(i32, i32), Acc>,
}

impl H5ChunkStripe {
    pub(crate) fn new(config: &Config) -> Self {
        H5ChunkStripe {
            general: General::new(config),
            min_requests: config.section(ID).u64("min_requests"),
            // The stripe of a parallel file system without a hint: one setting for both rules.
            parallel_fs_bytes: config.section(misaligned::ID).u64("parallel_fs_bytes"),
            stripes: HashMap::new(),
            by: Keyed::default(),
        }
    }

    fn stripe(&mut self, file: i32, ctx: &Context<'_>) -> Option<(u64, &'static str)> {
        *self
            .stripes
            .entry(file)
            .or_insert_with(|| util::stripe_of(ctx, file, self.parallel_fs_bytes))
    }
}

impl Rule for H5ChunkStripe {
    fn visit(&mut self, e: &Event<'_>, fx: &Facts, ctx: &Context<'_>) {
        let kind = fx.kind;
        let Some(c) = fx.library else {
            return;
        };
        if !matches!(c.func, "H5Dwrite" | "H5Dread")
            || e.layer != Layer::Posix
            || !matches!(kind, OpKind::Read | OpKind::Write)
        {
            return;
        }
        let (Some(dataset), Some(file), Some(off)) = (c.file, e.file_id, e.offset) else {
            return;
        };
        let Some((stripe, _)) = self.stripe(file, ctx) else {
            return;
        };
        let (off, size) = (off.max(0) as u64, util::moved(e));
        if size == 0 {
            return;
        }
        let touched = (off + size - 1) / stripe - off / stripe + 1;
        let a = self.by.at((e.rank, dataset));
        a.requests.add(e);
        a.touched += touched;
        a.off_boundary += u64::from(off % stripe != 0);
        a.stripe = stripe;
    }

    fn interest(&self) -> Interest {
        Interest::any_of(&[POSIX | LIBRARY])
    }

    fn conclude(&self, ctx: &Context<'_>) -> Vec<Finding> {
        // Request time goes with the stripes touched: written in whole aligned stripes, each
        // rank's bytes of a dataset would touch needed() of them.
        let mut by_dataset: BTreeMap<i32, Acc> = BTreeMap::new();
        for ((_, d), a) in self.by.entries() {
            let mut a = *a;
            let saved = a.touched.saturating_sub(a.needed());
            a.cost_ns = a.requests.ns as f64 * util::ratio(saved as f64, a.touched as f64);
            by_dataset.entry(d).or_default().merge(&a);
        }
        let flagged: Vec<(i32, Acc, Layout)> = by_dataset
            .into_iter()
            .filter_map(|(d, a)| {
                let l = Layout::of(ctx, d);
                let small = l.chunk_bytes().is_some_and(|b| b < a.stripe);
                let misaligned = l.alignment % a.stripe != 0 && a.off_boundary > 0;
                ((small || misaligned) && a.cost_ns > 0.0).then_some((d, a, l))
            })
            .collect();
        let mut t = Acc::default();
        for (_, a, _) in &flagged {
            t.merge(a);
        }
        if t.requests.count < self.min_requests || t.requests.count == 0 {
            return Vec::new();
        }
        let needed: u64 = self
            .by
            .entries()
            .iter()
            .filter(|((_, d), _)| flagged.iter().any(|(f, _, _)| f == d))
            .map(|(_, a)| a.needed())
            .sum();
        let cost = util::per_rank(t.cost_ns, ctx);
        let worst = util::top(flagged.iter().collect(), self.general.worst, |(_, a, _)| {
            a.cost_ns
        });
        let Some((dataset, first, layout)) = worst.first().copied() else {
            return Vec::new();
        };
        let stripe = first.stripe;
        let source = self
            .stripes
            .values()
            .flatten()
            .find(|(s, _)| *s == stripe)
            .map_or("", |(_, from)| *from);
        let sb = units::bytes(stripe);

        let mut n = Numbers::default();
        n.int("datasets", flagged.len() as i64)
            .int("requests", t.requests.count as i64)
            .int("bytes", t.requests.bytes as i64)
            .int("time_ns", t.requests.ns)
            .int("stripes_touched", t.touched as i64)
            .int("stripes_needed", needed as i64)
            .int("off_boundary_requests", t.off_boundary as i64)
            .int("stripe_bytes", stripe as i64)
            .text("stripe_from", source)
            .int("chunk_bytes", layout.chunk_bytes().unwrap_or(0) as i64)
            .int("alignment", layout.alignment as i64);
        let names = worst
            .iter()
            .map(|(d, a, l)| {
                let chunk = l.chunk_bytes().map_or("contiguous".to_string(), |b| {
                    format!("chunks of {}", units::bytes(b))
                });
                format!(
                    "{}: {chunk}, alignment {}, {} requests touched {} stripes of {} for {}",
                    util::file_name(ctx, *d),
                    l.alignment,
                    a.requests.count,
                    a.touched,
                    units::bytes(a.stripe),
                    units::bytes(a.requests.bytes)
                )
            })
            .collect();

        let name = util::file_name(ctx, *dataset);
        let mut remedy = Vec::new();
        if let (Some(chunk), Some(bytes)) = (&layout.chunk, layout.chunk_bytes()) {
            if bytes < stripe {
                let grown = stripe_chunk(chunk, &layout.dims, layout.type_size, stripe);
                remedy.push(format!(
                    "Make the chunks of {name} at least one stripe ({sb}): \
                     H5Pset_chunk(dcpl, {}, {{{}}}) instead of {{{}}} ({} per chunk).",
                    grown.len(),
                    shape(&grown),
                    shape(chunk),
                    units::bytes(bytes)
                ));
            }
        }
        if layout.alignment % stripe != 0 {
            let file = layout
                .file
                .map_or_else(|| "its file".to_string(), |f| util::file_name(ctx, f));
            remedy.push(format!(
                "Call H5Pset_alignment(fapl, {stripe}, {stripe}) on the file access list \
                 before H5Fcreate of {file}, so every object of a stripe or more starts on a \
                 stripe boundary."
            ));
        }
        vec![self.general.finding(
            ctx,
            ID,
            cost,
            format!(
                "HDF5 dataset requests touched {} stripes of {sb} where {needed} would do",
                t.touched
            ),
            Evidence {
                summary: format!(
                    "The POSIX requests beneath H5Dwrite/H5Dread of {} dataset(s) moved {} in \
                     {} requests that touched {} stripes of {sb} ({source}), {} of them \
                     starting off a stripe boundary; the bytes fill {needed} stripes. They took \
                     {} summed over ranks.",
                    flagged.len(),
                    units::bytes(t.requests.bytes),
                    t.requests.count,
                    t.touched,
                    t.off_boundary,
                    units::duration_prose(t.requests.ns)
                ),
                numbers: n.0,
                worst: names,
            },
            remedy.join(" "),
        )]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{io, none, num, one, Fx};

    const ROW: u64 = 4096;

    /// 2 ranks each write 16 rows of 4 KiB of `/scratch/g.h5:/grid` (32x512 doubles) in one
    /// H5Dwrite (1 ms); beneath it one pwrite64 per chunk of `chunk_rows` rows (50 us each)
    /// starting at `base` + the chunk's place. The stripe is a 64 KiB striping_unit hint,
    /// the file's alignment `alignment`.
    fn job(chunk_rows: u64, base: u64, alignment: &str) -> Fx {
        let mut fx = Fx::new(2);
        let file = fx.file("/scratch/g.h5");
        let grid = fx.file("/scratch/g.h5:/grid");
        let chunk = format!("{chunk_rows}x512");
        for r in 0..2usize {
            fx.setting(r, file, "MPI_File_open", 500, &[("striping_unit", "65536")]);
            fx.setting(r, file, "H5Fcreate", 1_000, &[("h5.alignment", alignment)]);
            fx.setting(
                r,
                grid,
                "H5Dcreate2",
                2_000,
                &[
                    ("h5.dims", "32x512"),
                    ("h5.type_size", "8"),
                    ("h5.layout", "chunked"),
                    ("h5.chunk", chunk.as_str()),
                ],
            );
            let t = 10_000;
            fx.push(
                r,
                io(
                    "H5Dwrite",
                    t,
                    1_000_000,
                    grid,
                    r as u64 * 16 * ROW,
                    16 * ROW,
                ),
            );
            for c in 0..16 / chunk_rows {
                let at = base + (r as u64 * 16 + c * chunk_rows) * ROW;
                let w = io(
                    "MPI_File_write_at",
                    t + 1_000 + c * 60_000,
                    55_000,
                    file,
                    at,
                    0,
                );
                fx.push(r, w.size(chunk_rows * ROW).depth(1));
                let p = io("pwrite64", t + 2_000 + c * 60_000, 50_000, file, at, 0);
                fx.push(r, p.size(chunk_rows * ROW).depth(2));
            }
        }
        fx
    }

    #[test]
    fn small_misaligned_chunks_fire_with_their_numbers() {
        let dir = tempfile::tempdir().expect("tmp");
        // One row per chunk from 2 KiB on: 16 requests per rank, every 16th straddles.
        let t = job(1, 2048, "1").build(dir.path());
        let f = one(&t, ID);
        assert_eq!(num(&f, "datasets"), 1);
        assert_eq!(num(&f, "requests"), 32);
        assert_eq!(num(&f, "bytes"), 32 * ROW as i64);
        assert_eq!(num(&f, "off_boundary_requests"), 32);
        // Rank 0: rows at 2 KiB + i*4 KiB, the 16th (60 KiB..64 KiB + 2 KiB) straddles: 17;
        // rank 1 from 66 KiB: its last row crosses 128 KiB: 17.
        assert_eq!(num(&f, "stripes_touched"), 34);
        assert_eq!(num(&f, "stripes_needed"), 2);
        assert_eq!(num(&f, "chunk_bytes"), ROW as i64);
        assert_eq!(num(&f, "alignment"), 1);
        // Per rank 16 x 50 us x (17 - 1) / 17, averaged over the 2 ranks.
        assert_eq!(f.cost_ns, (800_000.0 * 16.0 / 17.0) as i64);
        assert!(
            f.remedy
                .contains("H5Pset_chunk(dcpl, 2, {16, 512}) instead of {1, 512}"),
            "{}",
            f.remedy
        );
        assert!(f.remedy.contains("H5Pset_alignment(fapl, 65536, 65536)"));
        assert!(f.evidence.worst[0].starts_with("/scratch/g.h5:/grid: chunks of 4.0 KiB"));
    }

    #[test]
    fn stripe_sized_aligned_chunks_do_not_fire() {
        let dir = tempfile::tempdir().expect("tmp");
        none(&job(16, 65536, "65536").build(dir.path()), ID);
    }

    #[test]
    fn chunks_grow_along_the_fastest_dimension_first() {
        assert_eq!(stripe_chunk(&[1, 512], &[64, 512], 8, 65536), vec![16, 512]);
        assert_eq!(stripe_chunk(&[1, 64], &[64, 512], 8, 65536), vec![16, 512]);
        assert_eq!(stripe_chunk(&[4], &[], 4, 64), vec![16]);
    }
}
