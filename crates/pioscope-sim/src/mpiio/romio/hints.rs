//! The ROMIO settings in force for one file: the model's `[mpiio]` defaults overridden by the
//! hints the program gives (`MPI_Info` at open, recorded in settings.parquet, or a workload's
//! `hint.KEY=VALUE`), with the values ROMIO accepts.

use pioscope_trace::store::SettingRow;

use crate::model::{AggregatorPlacement, Driver, FileDomain, LayoutKind, MpiIo, System, Toggle};

use super::RomioError;

/// What ROMIO uses for one file: the model's `[mpiio]` section with this file's hints applied,
/// and the three settings ROMIO takes from elsewhere in the model.
#[derive(Clone, Debug, PartialEq)]
pub struct Hints {
    /// The model's `[mpiio]` settings, overridden by the file's hints. The buffer sizes are at
    /// least 1 (a 0 in a model file would make every cycle and sieving window empty).
    pub mpiio: MpiIo,
    /// Rate at which an aggregator fills its freshly allocated collective buffer (0 = free).
    /// The model's `nodes.fresh_memory_bandwidth`.
    pub fresh_memory_bandwidth: f64,
    /// `striping_unit`: stripe size (stripe-aligned domains use it); the model's
    /// `layout.stripe_size`, at least 1.
    pub stripe_size: u64,
    /// `striping_factor`: stripes a file spans (0 = the file system's default); the model's
    /// `layout.stripe_count`.
    pub stripe_count: u32,
    /// Targets of the file system (what a `stripe_count` of 0 spans): Lustre's OSTs, PVFS's
    /// data servers.
    pub targets: u32,
}

impl Hints {
    /// The model's defaults for this machine.
    pub fn from_system(system: &System) -> Hints {
        let m = &system.mpiio;
        Hints {
            mpiio: MpiIo {
                cb_buffer_size: m.cb_buffer_size.max(1),
                ind_wr_buffer_size: m.ind_wr_buffer_size.max(1),
                ind_rd_buffer_size: m.ind_rd_buffer_size.max(1),
                ..m.clone()
            },
            fresh_memory_bandwidth: system.nodes.fresh_memory_bandwidth,
            stripe_size: system.layout.stripe_size.max(1),
            stripe_count: system.layout.stripe_count,
            targets: match system.layout.kind {
                LayoutKind::Pvfs => system.storage.data_servers,
                LayoutKind::Lustre => system.storage.data_servers * system.storage.disks_per_server,
            },
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
                self.mpiio.cb_buffer_size =
                    positive(parse_size(v).ok_or_else(|| bad("not a size"))?)
                        .ok_or_else(|| bad("must be > 0"))?
            }
            "ind_wr_buffer_size" => {
                self.mpiio.ind_wr_buffer_size =
                    positive(parse_size(v).ok_or_else(|| bad("not a size"))?)
                        .ok_or_else(|| bad("must be > 0"))?
            }
            "ind_rd_buffer_size" => {
                self.mpiio.ind_rd_buffer_size =
                    positive(parse_size(v).ok_or_else(|| bad("not a size"))?)
                        .ok_or_else(|| bad("must be > 0"))?
            }
            "cb_nodes" => {
                self.mpiio.cb_nodes = v.parse().map_err(|_| bad("not a count"))?;
            }
            "cb_config_list" => {
                // "*:N" or "*:*"; host lists are not modelled (every node is eligible).
                let per = v.rsplit(':').next().unwrap_or("");
                if !v.contains(':') {
                    return Ok(false);
                }
                self.mpiio.cb_per_node = if per == "*" {
                    0
                } else {
                    per.parse().map_err(|_| bad("expected *:N or *:*"))?
                };
            }
            "romio_cb_write" => {
                self.mpiio.cb_write =
                    toggle(v).ok_or_else(|| bad("expected enable, disable or automatic"))?
            }
            "romio_cb_read" => {
                self.mpiio.cb_read =
                    toggle(v).ok_or_else(|| bad("expected enable, disable or automatic"))?
            }
            "romio_ds_write" => {
                self.mpiio.ds_write =
                    toggle(v).ok_or_else(|| bad("expected enable, disable or automatic"))?
            }
            "romio_ds_read" => {
                self.mpiio.ds_read =
                    toggle(v).ok_or_else(|| bad("expected enable, disable or automatic"))?
            }
            "romio_pvfs2_posix_read"
            | "romio_pvfs2_posix_write"
            | "romio_pvfs2_dtype_read"
            | "romio_pvfs2_dtype_write"
            | "romio_pvfs2_listio_read"
            | "romio_pvfs2_listio_write" => {
                // ROMIO's ADIOI_Info_check_and_install_enabled: enable or disable.
                let on = match toggle(v) {
                    Some(Toggle::Enable) => true,
                    Some(Toggle::Disable) => false,
                    _ => return Err(bad("expected enable or disable")),
                };
                *self.pvfs2_hint(key) = on;
            }
            "striping_unit" => {
                self.stripe_size = positive(parse_size(v).ok_or_else(|| bad("not a size"))?)
                    .ok_or_else(|| bad("must be > 0"))?
            }
            "romio_lustre_co_ratio" => {
                self.mpiio.lustre_co_ratio = v.parse().map_err(|_| bad("not a count"))?;
            }
            "striping_factor" => self.stripe_count = v.parse().map_err(|_| bad("not a count"))?,
            "aggregator_placement" => {
                self.mpiio.aggregator_placement = match v {
                    "blocked" => AggregatorPlacement::Blocked,
                    "round-robin" => AggregatorPlacement::RoundRobin,
                    _ => return Err(bad("expected blocked or round-robin")),
                }
            }
            "file_domain" => {
                self.mpiio.file_domain = match v {
                    "even" => FileDomain::Even,
                    "stripe-aligned" => FileDomain::StripeAligned,
                    _ => return Err(bad("expected even or stripe-aligned")),
                }
            }
            "overlap_exchange" => {
                self.mpiio.overlap_exchange = match v {
                    "true" | "enable" | "1" => true,
                    "false" | "disable" | "0" => false,
                    _ => return Err(bad("expected true or false")),
                }
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The field of `romio_pvfs2_*` hint `key` (one of the six).
    fn pvfs2_hint(&mut self, key: &str) -> &mut bool {
        let h = &mut self.mpiio.pvfs2;
        match key {
            "romio_pvfs2_posix_read" => &mut h.posix_read,
            "romio_pvfs2_posix_write" => &mut h.posix_write,
            "romio_pvfs2_dtype_read" => &mut h.dtype_read,
            "romio_pvfs2_dtype_write" => &mut h.dtype_write,
            "romio_pvfs2_listio_read" => &mut h.listio_read,
            _ => &mut h.listio_write,
        }
    }

    /// The settings rows of a simulated store for `file`: the hints ROMIO used, under the
    /// keys [`Hints::set`] reads, as the runtime records them at `MPI_File_open` (rank 0
    /// only, time 0). Keys prefixed `sim.` are the model's, not ROMIO's.
    pub fn setting_rows(&self, file: u32) -> Vec<SettingRow> {
        let m = &self.mpiio;
        let per_node = if m.cb_per_node == 0 {
            "*:*".to_string()
        } else {
            format!("*:{}", m.cb_per_node)
        };
        let mut kv: Vec<(&str, String)> = vec![
            ("cb_buffer_size", m.cb_buffer_size.to_string()),
            ("cb_nodes", m.cb_nodes.to_string()),
            ("cb_config_list", per_node),
            ("romio_cb_write", toggle_name(m.cb_write).to_string()),
            ("romio_cb_read", toggle_name(m.cb_read).to_string()),
            ("romio_ds_write", toggle_name(m.ds_write).to_string()),
            ("romio_ds_read", toggle_name(m.ds_read).to_string()),
            ("ind_wr_buffer_size", m.ind_wr_buffer_size.to_string()),
            ("ind_rd_buffer_size", m.ind_rd_buffer_size.to_string()),
            ("striping_unit", self.stripe_size.to_string()),
            ("striping_factor", self.stripe_count.to_string()),
            (
                "sim.aggregator_placement",
                match m.aggregator_placement {
                    AggregatorPlacement::Blocked => "blocked",
                    AggregatorPlacement::RoundRobin => "round-robin",
                }
                .to_string(),
            ),
            (
                "sim.file_domain",
                match m.file_domain {
                    FileDomain::Even => "even",
                    FileDomain::StripeAligned => "stripe-aligned",
                }
                .to_string(),
            ),
        ];
        if m.driver == Driver::Pvfs2 {
            // ad_pvfs2 reports its own hints at open; other drivers know none of them.
            kv.extend([
                ("romio_pvfs2_posix_read", enabled(m.pvfs2.posix_read)),
                ("romio_pvfs2_posix_write", enabled(m.pvfs2.posix_write)),
                ("romio_pvfs2_dtype_read", enabled(m.pvfs2.dtype_read)),
                ("romio_pvfs2_dtype_write", enabled(m.pvfs2.dtype_write)),
                ("romio_pvfs2_listio_read", enabled(m.pvfs2.listio_read)),
                ("romio_pvfs2_listio_write", enabled(m.pvfs2.listio_write)),
                ("sim.driver", "pvfs2".to_string()),
            ]);
        }
        kv.into_iter()
            .map(|(k, v)| SettingRow {
                rank: 0,
                process: 0,
                time_ns: 0,
                file_id: Some(file as i32),
                func: "MPI_File_open".to_string(),
                key: k.to_string(),
                value: v,
            })
            .collect()
    }
}

fn positive(v: u64) -> Option<u64> {
    (v > 0).then_some(v)
}

fn enabled(on: bool) -> String {
    if on { "enable" } else { "disable" }.to_string()
}

fn toggle_name(t: Toggle) -> &'static str {
    match t {
        Toggle::Enable => "enable",
        Toggle::Disable => "disable",
        Toggle::Automatic => "automatic",
    }
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
