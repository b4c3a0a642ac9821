//! The ROMIO settings in force for one file: the model's `[mpiio]` defaults overridden by the
//! hints the program gives (`MPI_Info` at open, recorded in settings.parquet, or a workload's
//! `hint.KEY=VALUE`), with the values ROMIO accepts.

use crate::model::{AggregatorPlacement, FileDomain, System, Toggle};

use super::RomioError;

/// What ROMIO uses for one file.
#[derive(Clone, Debug, PartialEq)]
pub struct Hints {
    /// `cb_buffer_size`: bytes per aggregator and two-phase cycle.
    pub cb_buffer_size: u64,
    /// `cb_nodes`: aggregators at most; 0 = no limit beyond `cb_per_node` per node.
    pub cb_nodes: u32,
    /// `cb_config_list` "*:N": aggregators per node at most; 0 = every rank ("*:*").
    pub cb_per_node: u32,
    /// Blocked per node or round-robin across nodes.
    pub aggregator_placement: AggregatorPlacement,
    /// Even split or stripe-aligned file domains.
    pub file_domain: FileDomain,
    /// `ind_wr_buffer_size`: data-sieving window for writes.
    pub ind_wr_buffer_size: u64,
    /// `ind_rd_buffer_size`: data-sieving window for reads.
    pub ind_rd_buffer_size: u64,
    /// `romio_ds_write`.
    pub ds_write: Toggle,
    /// `romio_ds_read`.
    pub ds_read: Toggle,
    /// `romio_cb_write`.
    pub cb_write: Toggle,
    /// `romio_cb_read`.
    pub cb_read: Toggle,
    /// Overlap the exchange of cycle n+1 with the write of cycle n.
    pub overlap_exchange: bool,
    /// Client CPU time per MPI-IO call.
    pub call_overhead_ns: u64,
    /// Aggregator CPU time per piece it unpacks (writes) or packs (reads) in an exchange.
    pub exchange_piece_ns: u64,
    /// Exchanges of more ranks × aggregators than this are simulated in aggregate (one
    /// `Op::Exchange` per rank); 0 = never. The model's `mpiio.aggregate_exchange_above`.
    pub aggregate_exchange_above: u64,
    /// Rate at which an aggregator fills its freshly allocated collective buffer (0 = free).
    /// The model's `nodes.fresh_memory_bandwidth`.
    pub fresh_memory_bandwidth: f64,
    /// `striping_unit`: stripe size (stripe-aligned domains use it).
    pub stripe_size: u64,
    /// `striping_factor`: stripes a file spans (0 = the file system's default).
    pub stripe_count: u32,
}

impl Hints {
    /// The model's defaults for this machine.
    pub fn from_system(system: &System) -> Hints {
        let m = &system.mpiio;
        Hints {
            cb_buffer_size: m.cb_buffer_size.max(1),
            cb_nodes: m.cb_nodes,
            cb_per_node: m.cb_per_node,
            aggregator_placement: m.aggregator_placement,
            file_domain: m.file_domain,
            ind_wr_buffer_size: m.ind_wr_buffer_size.max(1),
            ind_rd_buffer_size: m.ind_rd_buffer_size.max(1),
            ds_write: m.ds_write,
            ds_read: m.ds_read,
            cb_write: m.cb_write,
            cb_read: m.cb_read,
            overlap_exchange: m.overlap_exchange,
            call_overhead_ns: m.call_overhead_ns,
            exchange_piece_ns: m.exchange_piece_ns,
            aggregate_exchange_above: m.aggregate_exchange_above,
            fresh_memory_bandwidth: system.nodes.fresh_memory_bandwidth,
            stripe_size: system.layout.stripe_size.max(1),
            stripe_count: system.layout.stripe_count,
        }
    }

    /// Applies one hint. Returns Ok(false) for keys ROMIO has but the model does not use
    /// (`romio_no_indep_rw`, `cb_config_list` host lists, ...), which are ignored; an invalid
    /// value of a modelled key is an error naming the key and value.
    pub fn set(&mut self, key: &str, value: &str) -> Result<bool, RomioError> {
        let v = value.trim();
        let bad = |why: &str| RomioError::BadHint {
            key: key.to_string(),
            value: value.to_string(),
            why: why.to_string(),
        };
        match key {
            "cb_buffer_size" => {
                self.cb_buffer_size = positive(parse_size(v).ok_or_else(|| bad("not a size"))?)
                    .ok_or_else(|| bad("must be > 0"))?
            }
            "ind_wr_buffer_size" => {
                self.ind_wr_buffer_size = positive(parse_size(v).ok_or_else(|| bad("not a size"))?)
                    .ok_or_else(|| bad("must be > 0"))?
            }
            "ind_rd_buffer_size" => {
                self.ind_rd_buffer_size = positive(parse_size(v).ok_or_else(|| bad("not a size"))?)
                    .ok_or_else(|| bad("must be > 0"))?
            }
            "cb_nodes" => {
                self.cb_nodes = v.parse().map_err(|_| bad("not a count"))?;
            }
            "cb_config_list" => {
                // "*:N" or "*:*"; host lists are not modelled (every node is eligible).
                let per = v.rsplit(':').next().unwrap_or("");
                if !v.contains(':') {
                    return Ok(false);
                }
                self.cb_per_node = if per == "*" {
                    0
                } else {
                    per.parse().map_err(|_| bad("expected *:N or *:*"))?
                };
            }
            "romio_cb_write" => {
                self.cb_write =
                    toggle(v).ok_or_else(|| bad("expected enable, disable or automatic"))?
            }
            "romio_cb_read" => {
                self.cb_read =
                    toggle(v).ok_or_else(|| bad("expected enable, disable or automatic"))?
            }
            "romio_ds_write" => {
                self.ds_write =
                    toggle(v).ok_or_else(|| bad("expected enable, disable or automatic"))?
            }
            "romio_ds_read" => {
                self.ds_read =
                    toggle(v).ok_or_else(|| bad("expected enable, disable or automatic"))?
            }
            "striping_unit" => {
                self.stripe_size = positive(parse_size(v).ok_or_else(|| bad("not a size"))?)
                    .ok_or_else(|| bad("must be > 0"))?
            }
            "striping_factor" => self.stripe_count = v.parse().map_err(|_| bad("not a count"))?,
            "aggregator_placement" => {
                self.aggregator_placement = match v {
                    "blocked" => AggregatorPlacement::Blocked,
                    "round-robin" => AggregatorPlacement::RoundRobin,
                    _ => return Err(bad("expected blocked or round-robin")),
                }
            }
            "file_domain" => {
                self.file_domain = match v {
                    "even" => FileDomain::Even,
                    "stripe-aligned" => FileDomain::StripeAligned,
                    _ => return Err(bad("expected even or stripe-aligned")),
                }
            }
            "overlap_exchange" => {
                self.overlap_exchange = match v {
                    "true" | "enable" | "1" => true,
                    "false" | "disable" | "0" => false,
                    _ => return Err(bad("expected true or false")),
                }
            }
            _ => return Ok(false),
        }
        Ok(true)
    }
}

fn positive(v: u64) -> Option<u64> {
    (v > 0).then_some(v)
}

fn toggle(v: &str) -> Option<Toggle> {
    match v.to_ascii_lowercase().as_str() {
        "enable" | "enabled" | "true" => Some(Toggle::Enable),
        "disable" | "disabled" | "false" => Some(Toggle::Disable),
        "automatic" | "auto" => Some(Toggle::Automatic),
        _ => None,
    }
}

/// A byte count: digits with an optional binary suffix (K, M, G, T; KiB, MiB also; "4M" =
/// 4194304). ROMIO itself takes digits only; the suffixes are for people.
pub fn parse_size(s: &str) -> Option<u64> {
    let t = s.trim();
    let digits_end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    if digits_end == 0 {
        return None;
    }
    let n: u64 = t[..digits_end].parse().ok()?;
    let unit = t[digits_end..].trim().to_ascii_lowercase();
    let mult: u64 = match unit.as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        _ => return None,
    };
    n.checked_mul(mult)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4194304"), Some(4 << 20));
        assert_eq!(parse_size("64M"), Some(64 << 20));
        assert_eq!(parse_size("512k"), Some(512 << 10));
        assert_eq!(parse_size("x"), None);
        assert_eq!(parse_size("3Q"), None);
    }
}
