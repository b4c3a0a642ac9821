//! The `KIND:key=value,key=value` workload spec: split, typed lookups with errors that name the
//! key and value, and a check that every key given was used.

use std::collections::BTreeMap;

use super::WorkloadError;
use crate::model::units::parse_time_ns;
use crate::mpiio::romio::hints::parse_size;

/// The most calls a workload may make: its programs are built in memory before the
/// simulation, so counts whose product is beyond this are refused rather than exhausting it.
pub const MAX_CALLS: u64 = 10_000_000;

/// The end of the largest file a workload may address: offsets are signed 64-bit in a store.
pub const MAX_FILE_END: u64 = i64::MAX as u64;

/// The keys of one spec, consumed as the generator reads them.
pub struct Spec {
    /// Workload kind (`hpio`, `ior`, `mdtest`).
    pub kind: String,
    keys: BTreeMap<String, String>,
    /// `hint.KEY=VALUE` entries, in order.
    pub hints: Vec<(String, String)>,
}

impl Spec {
    /// Splits `kind:k=v,...`.
    pub fn parse(spec: &str) -> Result<Spec, WorkloadError> {
        let spec = spec.trim();
        let (kind, rest) = spec.split_once(':').unwrap_or((spec, ""));
        let mut keys = BTreeMap::new();
        let mut hints = Vec::new();
        for item in rest.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let Some((k, v)) = item.split_once('=') else {
                return Err(WorkloadError::Syntax {
                    item: item.to_string(),
                });
            };
            let (k, v) = (k.trim(), v.trim());
            if let Some(h) = k.strip_prefix("hint.") {
                hints.push((h.to_string(), v.to_string()));
            } else if keys.insert(k.to_string(), v.to_string()).is_some() {
                return Err(WorkloadError::Duplicate { key: k.to_string() });
            }
        }
        Ok(Spec {
            kind: kind.trim().to_ascii_lowercase(),
            keys,
            hints,
        })
    }

    fn bad(&self, key: &str, value: &str, why: &str) -> WorkloadError {
        WorkloadError::BadValue {
            kind: self.kind.clone(),
            key: key.to_string(),
            value: value.to_string(),
            why: why.to_string(),
        }
    }

    /// A count (plain integer, `_` allowed, k/M suffixes as powers of ten are not taken: a
    /// count of regions is written out).
    pub fn count(&mut self, key: &str, default: u64, min: u64) -> Result<u64, WorkloadError> {
        let Some(v) = self.keys.remove(key) else {
            return Ok(default);
        };
        let n: u64 = v
            .replace('_', "")
            .parse()
            .map_err(|_| self.bad(key, &v, "not a whole number"))?;
        if n < min {
            return Err(self.bad(key, &v, &format!("must be at least {min}")));
        }
        Ok(n)
    }

    /// A byte size (`4096`, `64K`, `4M`).
    pub fn size(&mut self, key: &str, default: u64, min: u64) -> Result<u64, WorkloadError> {
        let Some(v) = self.keys.remove(key) else {
            return Ok(default);
        };
        let n =
            parse_size(&v).ok_or_else(|| self.bad(key, &v, "not a size (e.g. 4096, 64K, 4M)"))?;
        if n < min {
            return Err(self.bad(key, &v, &format!("must be at least {min}")));
        }
        Ok(n)
    }

    /// A duration (`1ms`, `250us`, `2s`; a bare number is nanoseconds), in nanoseconds.
    pub fn time(&mut self, key: &str, default: u64) -> Result<u64, WorkloadError> {
        let Some(v) = self.keys.remove(key) else {
            return Ok(default);
        };
        parse_time_ns(&v).map_err(|_| self.bad(key, &v, "not a time (e.g. 250us, 1ms, 2s)"))
    }

    /// Fails when the workload's files would end past [`MAX_FILE_END`]: `end` is where its last
    /// byte ends (None when computing it overflows), `key`=`value` the count or size the error
    /// names.
    pub fn within_file(
        &self,
        key: &str,
        value: u64,
        end: Option<u64>,
    ) -> Result<(), WorkloadError> {
        match end {
            Some(n) if n <= MAX_FILE_END => Ok(()),
            _ => Err(self.bad(
                key,
                &value.to_string(),
                "too large: the file would end past 2^63 - 1 bytes",
            )),
        }
    }

    /// Fails when the counts read make more than [`MAX_CALLS`] calls: `calls` is their product
    /// (None when it overflows), `key`=`value` the count the error names.
    pub fn within_budget(
        &self,
        key: &str,
        value: u64,
        calls: Option<u64>,
    ) -> Result<(), WorkloadError> {
        match calls {
            Some(n) if n <= MAX_CALLS => Ok(()),
            _ => Err(self.bad(
                key,
                &value.to_string(),
                &format!("too many: the workload would make more than {MAX_CALLS} calls"),
            )),
        }
    }

    /// One of `choices` (the first is the default).
    pub fn choice(
        &mut self,
        key: &str,
        choices: &[&'static str],
    ) -> Result<&'static str, WorkloadError> {
        let Some(v) = self.keys.remove(key) else {
            return Ok(choices[0]);
        };
        choices
            .iter()
            .find(|c| c.eq_ignore_ascii_case(&v))
            .copied()
            .ok_or_else(|| self.bad(key, &v, &format!("expected one of {}", choices.join(", "))))
    }

    /// The text of a key not yet consumed.
    pub fn peek(&self, key: &str) -> Option<String> {
        self.keys.get(key).cloned()
    }

    /// A text value.
    pub fn text(&mut self, key: &str, default: &str) -> String {
        self.keys.remove(key).unwrap_or_else(|| default.to_string())
    }

    /// Fails on keys nobody asked for.
    pub fn finish(self, known: &[&str]) -> Result<(), WorkloadError> {
        if let Some((k, v)) = self.keys.into_iter().next() {
            return Err(WorkloadError::UnknownKey {
                kind: self.kind,
                key: k,
                value: v,
                known: known.join(", "),
            });
        }
        Ok(())
    }
}
