//! `h5-small-attributes`: the program keeps many small values as HDF5 attributes, one
//! `H5Acreate2` (or `H5Acreate_by_name`) + `H5Awrite` each. Every attribute is a change of its
//! object's header, a piece of metadata the cache writes and every rank keeps in step: their
//! time goes with their count, not their bytes. Grouped (one compound or array attribute, or a
//! small dataset per object), the same values cost one header change.

use std::collections::BTreeMap;

use pioscope_trace::store::Event;
use pioscope_trace::{units, Layer};

use super::config::Config;
use super::dispatch::{Interest, HDF5};
use super::util::{self, Facts, General, Numbers};
use super::{Evidence, Finding, Rule};
use crate::pass::Context;

/// Rule id.
pub(crate) const ID: &str = "h5-small-attributes";

/// The calls on one attribute (`<file>:<object>@<name>`), over ranks.
#[derive(Debug, Default)]
struct Attribute {
    creates: u64,
    writes: u64,
    bytes: u64,
    ns: i64,
}

/// See the module doc.
pub(crate) struct H5SmallAttributes {
    general: General,
    min_attributes_per_rank: f64,
    max_bytes: u64,
    by_attribute: BTreeMap<i32, Attribute>,
}

impl H5SmallAttributes {
    pub(crate) fn new(config: &Config) -> Self {
        let s = config.section(ID);
        H5SmallAttributes {
            general: General::new(config),
            min_attributes_per_rank: s.f64("min_attributes_per_rank"),
            max_bytes: s.u64("max_bytes"),
            by_attribute: BTreeMap::new(),
        }
    }
}

/// The object an attribute belongs to: its name up to the `@`.
fn object_of(ctx: &Context<'_>, attribute: i32) -> String {
    let name = util::file_name(ctx, attribute);
    match name.rfind('@') {
        Some(i) => name[..i].to_string(),
        None => name,
    }
}

impl Rule for H5SmallAttributes {
    fn visit(&mut self, e: &Event<'_>, _fx: &Facts, _ctx: &Context<'_>) {
        let create = matches!(e.func, "H5Acreate2" | "H5Acreate_by_name");
        if e.layer != Layer::Hdf5 || !(create || e.func == "H5Awrite") {
            return;
        }
        let a = self
            .by_attribute
            .entry(e.file_id.unwrap_or(-1))
            .or_default();
        if create {
            a.creates += 1;
        } else {
            a.writes += 1;
            a.bytes += util::moved(e);
        }
        a.ns += e.duration_ns;
    }

    fn interest(&self) -> Interest {
        Interest::any_of(&[HDF5])
    }

    fn conclude(&self, ctx: &Context<'_>) -> Vec<Finding> {
        let small: Vec<(&i32, &Attribute)> = self
            .by_attribute
            .iter()
            .filter(|(_, a)| a.bytes <= self.max_bytes * a.writes.max(1))
            .collect();
        let creates: u64 = small.iter().map(|(_, a)| a.creates).sum();
        let ranks = util::rank_count(ctx);
        let per_rank = creates as f64 / ranks as f64;
        if creates == 0 || per_rank < self.min_attributes_per_rank {
            return Vec::new();
        }
        let writes: u64 = small.iter().map(|(_, a)| a.writes).sum();
        let bytes: u64 = small.iter().map(|(_, a)| a.bytes).sum();
        let ns: i64 = small.iter().map(|(_, a)| a.ns).sum();
        // Per object, the attributes' time as time per attribute; grouped into one per object,
        // one attribute's share stays.
        let mut objects: BTreeMap<String, (u64, i64)> = BTreeMap::new();
        for (id, a) in &small {
            let o = objects.entry(object_of(ctx, **id)).or_default();
            o.0 += a.creates;
            o.1 += a.ns;
        }
        let saved: f64 = objects
            .values()
            .filter(|(n, _)| *n > 0)
            .map(|(n, t)| *t as f64 * (1.0 - ranks as f64 / *n as f64).max(0.0))
            .sum();
        let cost = util::per_rank(saved, ctx);
        let worst = util::top(objects.iter().collect(), self.general.worst, |(_, o)| o.1);
        let names: Vec<String> = worst
            .iter()
            .map(|(o, (n, t))| format!("{o}: {n} H5Acreate2, {}", units::duration_prose(*t)))
            .collect();
        let first = worst.first().map(|(o, _)| o.as_str()).unwrap_or_default();
        let mut n = Numbers::default();
        n.int("attributes", creates as i64)
            .float("attributes_per_rank", per_rank)
            .int("writes", writes as i64)
            .int("bytes", bytes as i64)
            .int("mean_bytes", (bytes / writes.max(1)) as i64)
            .int("time_ns", ns)
            .int("objects", objects.len() as i64);
        vec![self.general.finding(
            ctx,
            ID,
            cost,
            format!("{per_rank:.0} small HDF5 attributes per rank"),
            Evidence {
                summary: format!(
                    "Ranks created {per_rank:.0} attributes each of {} on average on {} \
                     object(s); H5Acreate2 and H5Awrite took {} summed over ranks.",
                    units::bytes(bytes / writes.max(1)),
                    objects.len(),
                    units::duration_prose(ns)
                ),
                numbers: n.0,
                worst: names,
            },
            format!(
                "Group the small values of {first} into one attribute of a compound or array \
                 type (H5Tcreate(H5T_COMPOUND, ...) or H5Tarray_create2, one H5Acreate2 + \
                 H5Awrite), or into a small dataset written with one H5Dwrite."
            ),
        )]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{ev, none, num, one, Fx};

    /// 2 ranks each creating and writing `count` attributes of `bytes` on one dataset
    /// (H5Acreate2 20 us, H5Awrite 10 us).
    fn job(dir: &std::path::Path, count: u64, bytes: u64) -> pioscope_trace::store::Trace {
        let mut fx = Fx::new(2);
        let attrs: Vec<u32> = (0..count)
            .map(|i| fx.file(&format!("/scratch/out.h5:/grid@a{i}")))
            .collect();
        for r in 0..2usize {
            for (i, a) in attrs.iter().enumerate() {
                let t = 10_000 + i as u64 * 50_000;
                fx.push(r, ev("H5Acreate2", t, 20_000).object(*a));
                fx.push(r, ev("H5Awrite", t + 25_000, 10_000).object(*a).size(bytes));
            }
        }
        fx.build(dir)
    }

    #[test]
    fn fires_with_its_numbers() {
        let dir = tempfile::tempdir().expect("tmp");
        let f = one(&job(dir.path(), 40, 8), ID);
        assert_eq!(num(&f, "attributes"), 80);
        assert_eq!(num(&f, "writes"), 80);
        assert_eq!(num(&f, "bytes"), 640);
        assert_eq!(num(&f, "mean_bytes"), 8);
        assert_eq!(num(&f, "time_ns"), 80 * 30_000);
        assert_eq!(num(&f, "objects"), 1);
        // 2.4 ms, all but one attribute per rank (2 of 80) saved, over 2 ranks.
        assert_eq!(f.cost_ns, 1_170_000);
        assert_eq!(
            f.evidence.worst,
            ["/scratch/out.h5:/grid: 80 H5Acreate2, 2.40 ms"]
        );
        assert!(f
            .remedy
            .starts_with("Group the small values of /scratch/out.h5:/grid into"));
    }

    #[test]
    fn few_or_large_attributes_do_not_fire() {
        let dir = tempfile::tempdir().expect("tmp");
        none(&job(&dir.path().join("few"), 8, 8), ID);
        none(&job(&dir.path().join("large"), 40, 4096), ID);
    }
}
