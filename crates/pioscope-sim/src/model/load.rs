//! Loading a system model: a preset name or a TOML file, values with units, `--set key=value`
//! overrides (dotted paths and the short aliases users type for what-ifs), and validation with
//! errors that name the file, the line, the field and the value.
//!
//! The file is read twice: once by toml_edit, only to learn the line of every key (so that
//! errors found later can point at it), and once into a `toml::Table`. The table gets its unit
//! strings ("64K", "8.5ms") turned into numbers by the field table `FIELDS`, then the `--set`
//! overrides, and only then is deserialized, so an override can fix a file before serde sees it.

use std::collections::HashMap;
use std::path::Path;

use serde::Deserialize;
use toml::{Table, Value};

use crate::model::units::{parse_rate, parse_size, parse_time_ns};
use crate::model::{Disk, LayoutKind, System};

/// The presets built into the binary: (name, TOML text).
const PRESETS: &[(&str, &str)] = &[
    ("local", include_str!("../../presets/local.toml")),
    ("pvfs2-2009", include_str!("../../presets/pvfs2-2009.toml")),
    ("lustre-fdr", include_str!("../../presets/lustre-fdr.toml")),
];

/// The names of the built-in presets.
pub fn preset_names() -> &'static [&'static str] {
    &["local", "pvfs2-2009", "lustre-fdr"]
}

/// The TOML text of a built-in preset.
pub fn preset_text(name: &str) -> Option<&'static str> {
    PRESETS.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

/// Why a model could not be loaded. Messages name where the problem is: `FILE:LINE: field =
/// value: reason`, or the `--set` that caused it.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// Neither a preset nor a readable file.
    #[error("system '{spec}' is neither a preset ({presets}) nor a file: {reason}")]
    NotFound {
        /// What the user gave.
        spec: String,
        /// The preset names.
        presets: String,
        /// Why the file could not be read (in the message, so not a `source` repeated after
        /// it by error chains).
        reason: std::io::Error,
    },
    /// Not valid TOML (toml's message carries the line and column).
    #[error("{origin}: {message}")]
    Syntax {
        /// The file (or preset:NAME).
        origin: String,
        /// The parser's message.
        message: String,
    },
    /// A field has a wrong type, an unknown name, is missing, or fails validation.
    #[error("{origin}: {}{message}", field_unless_named(.origin, .field))]
    Field {
        /// FILE:LINE, FILE, or "--set KEY=VALUE".
        origin: String,
        /// Dotted path of the field.
        field: String,
        /// What is wrong, with the value.
        message: String,
    },
    /// A `--set` that cannot be applied (no `=`, unknown key, bad value).
    #[error("--set {set}: {message}")]
    Set {
        /// The override as given.
        set: String,
        /// What is wrong.
        message: String,
    },
}

/// "FIELD: " for a field error, or nothing when its origin already names the field
/// ("--set nodes.count=0: 0 is not allowed", not "--set nodes.count=0: nodes.count: ...").
fn field_unless_named(origin: &str, field: &str) -> String {
    if origin.starts_with(&format!("--set {field}=")) {
        String::new()
    } else {
        format!("{field}: ")
    }
}

/// How a field's value is written, and so how a string value is turned into a number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldKind {
    /// Bytes; accepts sizes with units ("64K").
    Size,
    /// A plain non-negative integer.
    Count,
    /// Bytes per second; accepts rates with units ("117MB/s", "1Gbit/s").
    Rate,
    /// Nanoseconds; accepts times with units ("50us", "8.5ms").
    Time,
    /// A plain number (factors, IOPS).
    Number,
    /// Free text.
    Text,
    /// One of the listed names.
    Choice(&'static [&'static str]),
    /// true or false.
    Flag,
}

const TOGGLE: &[&str] = &["enable", "disable", "automatic"];

/// Every settable field of the model, by dotted path (entries of `network.size_factors` share
/// the path `network.size_factors.FIELD`). docs/MODEL.md describes each.
pub const FIELDS: &[(&str, FieldKind)] = &[
    ("name", FieldKind::Text),
    ("description", FieldKind::Text),
    ("nodes.count", FieldKind::Count),
    ("nodes.ranks_per_node", FieldKind::Count),
    (
        "nodes.placement",
        FieldKind::Choice(&["block", "round-robin"]),
    ),
    ("nodes.cores", FieldKind::Count),
    ("nodes.handoff_ns", FieldKind::Time),
    ("nodes.fresh_memory_bandwidth", FieldKind::Rate),
    ("nodes.client_cpu_per_request_ns", FieldKind::Time),
    ("nodes.client_cpu_bandwidth", FieldKind::Rate),
    ("nodes.client_file_lock", FieldKind::Flag),
    ("nodes.wakeup_slice_ns", FieldKind::Time),
    ("network.latency_ns", FieldKind::Time),
    ("network.bandwidth", FieldKind::Rate),
    ("network.bisection_bandwidth", FieldKind::Rate),
    ("network.eager_limit", FieldKind::Size),
    ("network.intra_node_latency_ns", FieldKind::Time),
    ("network.intra_node_bandwidth", FieldKind::Rate),
    ("network.size_factors.min_size", FieldKind::Size),
    ("network.size_factors.latency", FieldKind::Number),
    ("network.size_factors.bandwidth", FieldKind::Number),
    (
        "network.intra_node_oversubscribed_bandwidth",
        FieldKind::Rate,
    ),
    ("network.intra_node_size_factors.min_size", FieldKind::Size),
    ("network.intra_node_size_factors.latency", FieldKind::Number),
    (
        "network.intra_node_size_factors.bandwidth",
        FieldKind::Number,
    ),
    ("storage.data_servers", FieldKind::Count),
    ("storage.metadata_servers", FieldKind::Count),
    ("storage.metadata_on_data_servers", FieldKind::Flag),
    ("storage.null", FieldKind::Flag),
    ("storage.colocated", FieldKind::Flag),
    ("storage.disks_per_server", FieldKind::Count),
    ("storage.cpu_per_request_ns", FieldKind::Time),
    ("storage.server_threads", FieldKind::Count),
    ("storage.max_request", FieldKind::Size),
    ("storage.disk.kind", FieldKind::Choice(&["hdd", "ssd"])),
    ("storage.disk.avg_seek_ns", FieldKind::Time),
    ("storage.disk.track_to_track_ns", FieldKind::Time),
    ("storage.disk.near_distance", FieldKind::Size),
    ("storage.disk.rpm", FieldKind::Count),
    ("storage.disk.sequential", FieldKind::Rate),
    ("storage.disk.latency_ns", FieldKind::Time),
    ("storage.disk.bandwidth", FieldKind::Rate),
    ("storage.disk.iops", FieldKind::Number),
    ("storage.volume.raid", FieldKind::Choice(&["none", "raid1"])),
    ("storage.volume.fs_overhead_ns", FieldKind::Time),
    ("storage.volume.max_access", FieldKind::Size),
    ("storage.cache.write_back", FieldKind::Size),
    ("storage.cache.dirty_limit", FieldKind::Size),
    ("storage.cache.flush_rate", FieldKind::Rate),
    ("storage.cache.read_cache", FieldKind::Size),
    ("storage.cache.memory_bandwidth", FieldKind::Rate),
    ("storage.cache.read_memory_bandwidth", FieldKind::Rate),
    ("storage.cache.rewrite_memory_bandwidth", FieldKind::Rate),
    ("storage.cache.large_copy_above", FieldKind::Size),
    ("storage.cache.large_copy_factor", FieldKind::Number),
    ("storage.cache.background_dirty", FieldKind::Size),
    ("storage.disk_access.read_latency_ns", FieldKind::Time),
    ("storage.disk_access.read_bandwidth", FieldKind::Rate),
    ("storage.disk_access.shared_bandwidth", FieldKind::Flag),
    ("storage.disk_access.large_above", FieldKind::Size),
    ("storage.disk_access.large_factor", FieldKind::Number),
    ("storage.disk_access.lanes", FieldKind::Count),
    ("storage.metadata.sync_op_ns", FieldKind::Time),
    ("storage.metadata.create_syncs", FieldKind::Count),
    ("storage.metadata.open_ns", FieldKind::Time),
    ("storage.metadata.stat_ns", FieldKind::Time),
    ("storage.metadata.close_ns", FieldKind::Time),
    ("storage.metadata.remove_ns", FieldKind::Time),
    ("layout.kind", FieldKind::Choice(&["pvfs", "lustre"])),
    ("layout.stripe_size", FieldKind::Size),
    ("layout.stripe_count", FieldKind::Count),
    ("layout.start", FieldKind::Choice(&["first", "round-robin"])),
    ("mpiio.cb_buffer_size", FieldKind::Size),
    ("mpiio.cb_nodes", FieldKind::Count),
    ("mpiio.cb_per_node", FieldKind::Count),
    (
        "mpiio.aggregator_placement",
        FieldKind::Choice(&["blocked", "round-robin"]),
    ),
    (
        "mpiio.file_domain",
        FieldKind::Choice(&["even", "stripe-aligned"]),
    ),
    ("mpiio.ind_wr_buffer_size", FieldKind::Size),
    ("mpiio.ind_rd_buffer_size", FieldKind::Size),
    ("mpiio.ds_write", FieldKind::Choice(TOGGLE)),
    ("mpiio.ds_read", FieldKind::Choice(TOGGLE)),
    ("mpiio.cb_write", FieldKind::Choice(TOGGLE)),
    ("mpiio.cb_read", FieldKind::Choice(TOGGLE)),
    ("mpiio.overlap_exchange", FieldKind::Flag),
    ("mpiio.call_overhead_ns", FieldKind::Time),
    ("mpiio.exchange_piece_ns", FieldKind::Time),
    ("mpiio.aggregate_exchange_above", FieldKind::Count),
    ("mpiio.driver", FieldKind::Choice(&["generic", "pvfs2"])),
    ("mpiio.pvfs2.posix_read", FieldKind::Flag),
    ("mpiio.pvfs2.posix_write", FieldKind::Flag),
    ("mpiio.pvfs2.dtype_read", FieldKind::Flag),
    ("mpiio.pvfs2.dtype_write", FieldKind::Flag),
    ("mpiio.pvfs2.listio_read", FieldKind::Flag),
    ("mpiio.pvfs2.listio_write", FieldKind::Flag),
    ("mpiio.lustre_co_ratio", FieldKind::Count),
    ("lustre.max_pages_per_rpc", FieldKind::Count),
    ("lustre.max_rpcs_in_flight", FieldKind::Count),
    ("lustre.extent_locks", FieldKind::Flag),
    ("lustre.read_ahead", FieldKind::Size),
    ("calibration.source", FieldKind::Text),
    ("client_cache.size", FieldKind::Size),
    ("client_cache.dirty_limit", FieldKind::Size),
    ("client_cache.flush_rate", FieldKind::Rate),
    ("client_cache.memory_bandwidth", FieldKind::Rate),
    ("client_cache.flush_chunk", FieldKind::Size),
    ("variance.network_jitter", FieldKind::Number),
    ("variance.disk_jitter", FieldKind::Number),
    ("variance.stall_probability", FieldKind::Number),
    ("variance.stall_ns", FieldKind::Time),
];

/// Short names for `--set`: ROMIO hint names and the knobs of what-if runs. `cb_config_list`
/// is handled apart: its value `*:N` sets `mpiio.cb_per_node` to N.
pub const ALIASES: &[(&str, &str)] = &[
    ("cb_buffer_size", "mpiio.cb_buffer_size"),
    ("cb_nodes", "mpiio.cb_nodes"),
    ("cb_per_node", "mpiio.cb_per_node"),
    ("aggregator_placement", "mpiio.aggregator_placement"),
    ("file_domain", "mpiio.file_domain"),
    ("ind_wr_buffer_size", "mpiio.ind_wr_buffer_size"),
    ("ind_rd_buffer_size", "mpiio.ind_rd_buffer_size"),
    ("romio_ds_write", "mpiio.ds_write"),
    ("romio_ds_read", "mpiio.ds_read"),
    ("romio_cb_write", "mpiio.cb_write"),
    ("romio_cb_read", "mpiio.cb_read"),
    ("overlap_exchange", "mpiio.overlap_exchange"),
    ("aggregate_exchange_above", "mpiio.aggregate_exchange_above"),
    ("romio_pvfs2_posix_read", "mpiio.pvfs2.posix_read"),
    ("romio_pvfs2_posix_write", "mpiio.pvfs2.posix_write"),
    ("romio_pvfs2_dtype_read", "mpiio.pvfs2.dtype_read"),
    ("romio_pvfs2_dtype_write", "mpiio.pvfs2.dtype_write"),
    ("romio_pvfs2_listio_read", "mpiio.pvfs2.listio_read"),
    ("romio_pvfs2_listio_write", "mpiio.pvfs2.listio_write"),
    ("romio_lustre_co_ratio", "mpiio.lustre_co_ratio"),
    ("max_pages_per_rpc", "lustre.max_pages_per_rpc"),
    ("max_rpcs_in_flight", "lustre.max_rpcs_in_flight"),
    ("stripe_size", "layout.stripe_size"),
    ("striping_unit", "layout.stripe_size"),
    ("stripe_count", "layout.stripe_count"),
    ("striping_factor", "layout.stripe_count"),
    ("nodes", "nodes.count"),
    ("ranks_per_node", "nodes.ranks_per_node"),
    ("ppn", "nodes.ranks_per_node"),
    ("latency", "network.latency_ns"),
    ("bandwidth", "network.bandwidth"),
    ("bisection_bandwidth", "network.bisection_bandwidth"),
    ("eager_limit", "network.eager_limit"),
    ("data_servers", "storage.data_servers"),
    ("metadata_servers", "storage.metadata_servers"),
    ("disks_per_server", "storage.disks_per_server"),
    ("max_request", "storage.max_request"),
    ("write_back", "storage.cache.write_back"),
    ("dirty_limit", "storage.cache.dirty_limit"),
    ("read_cache", "storage.cache.read_cache"),
];

/// The kind of the field at `path` (array indices removed), if it is one.
pub fn field_kind(path: &str) -> Option<FieldKind> {
    let plain = strip_indices(path);
    FIELDS.iter().find(|(p, _)| *p == plain).map(|(_, k)| *k)
}

/// "network.size_factors[1].min_size" -> "network.size_factors.min_size".
fn strip_indices(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut skip = false;
    for c in path.chars() {
        match c {
            '[' => skip = true,
            ']' => skip = false,
            _ if !skip => out.push(c),
            _ => {}
        }
    }
    out
}

/// The largest model file read: a FIFO, a device or a huge file given as `--system` is
/// refused instead of hanging or filling memory.
pub const MAX_MODEL_BYTES: u64 = 16 << 20;

/// Loads a system: `spec` is a preset name or a path to a TOML file; `sets` are `key=value`
/// overrides (dotted paths or aliases) applied in order before the model is checked.
pub fn system(spec: &str, sets: &[String]) -> Result<System, ModelError> {
    let (origin, text) = match preset_text(spec) {
        Some(t) if !Path::new(spec).exists() => (format!("preset:{spec}"), t.to_string()),
        _ => match pioscope_trace::input_file::read_bounded(Path::new(spec), MAX_MODEL_BYTES) {
            Ok(t) => (spec.to_string(), t),
            Err(reason) => {
                return Err(ModelError::NotFound {
                    spec: spec.to_string(),
                    presets: preset_names().join(", "),
                    reason,
                })
            }
        },
    };
    from_text(&origin, &text, sets)
}

/// Loads a system from TOML text; `origin` names it in errors (a path, or preset:NAME).
pub fn from_text(origin: &str, text: &str, sets: &[String]) -> Result<System, ModelError> {
    let syntax = |e: &dyn std::fmt::Display| ModelError::Syntax {
        origin: origin.to_string(),
        message: e.to_string().trim_end().replace('\n', " "),
    };
    let lines = key_lines(text).map_err(|e| syntax(&e))?;
    let mut table: Table = toml::from_str(text).map_err(|e| syntax(&e))?;
    let place = |path: &str| match lines.get(path) {
        Some(line) => format!("{origin}:{line}"),
        None => origin.to_string(),
    };

    normalize(&mut table, "").map_err(|(field, message)| ModelError::Field {
        origin: place(&field),
        field,
        message,
    })?;

    // Which paths an override touched, so an error there names the --set, not the file.
    let mut set_by: HashMap<String, String> = HashMap::new();
    for set in sets {
        let path = apply_set(&mut table, set)?;
        set_by.insert(path, set.clone());
    }
    // An override is to blame when it set the field, a table above it, or a field beneath it
    // (setting storage.disk.kind can leave storage.disk without its other fields).
    let origin_of = |field: &str| -> String {
        let related = |p: &str| {
            p == field || field.starts_with(&format!("{p}.")) || p.starts_with(&format!("{field}."))
        };
        match sets
            .iter()
            .rev()
            .find(|s| set_by.iter().any(|(p, by)| by == *s && related(p)))
        {
            Some(s) => format!("--set {s}"),
            None => place(field),
        }
    };

    let system: System = serde_path_to_error::deserialize(Value::Table(table)).map_err(|e| {
        let field = e.path().to_string();
        let field = if field == "." { String::new() } else { field };
        let message = e.inner().message().trim_end().replace('\n', " ");
        // An unknown field's path stops at its table: point at the key itself when we can.
        let key_path = match unknown_field(&message) {
            Some(k) if field != k && !field.ends_with(&format!(".{k}")) => join(&field, k),
            _ => field.clone(),
        };
        ModelError::Field {
            origin: origin_of(&key_path),
            field: if field.is_empty() {
                "(top level)".to_string()
            } else {
                field
            },
            message,
        }
    })?;

    validate(&system).map_err(|(field, message)| ModelError::Field {
        origin: origin_of(&field),
        field,
        message,
    })?;
    Ok(system)
}

fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_string()
    } else {
        format!("{prefix}.{key}")
    }
}

/// The NAME of serde's "unknown field `NAME`, expected ...".
fn unknown_field(message: &str) -> Option<&str> {
    let rest = message.strip_prefix("unknown field `")?;
    rest.split('`').next()
}

/// The line of every key in the file, by dotted path (array entries as `a.b[i]`).
fn key_lines(text: &str) -> Result<HashMap<String, usize>, toml_edit::TomlError> {
    let doc = toml_edit::ImDocument::parse(text)?;
    let mut lines = HashMap::new();
    let line_of = |offset: usize| text[..offset.min(text.len())].matches('\n').count() + 1;
    fn walk(
        t: &dyn toml_edit::TableLike,
        prefix: &str,
        line_of: &dyn Fn(usize) -> usize,
        out: &mut HashMap<String, usize>,
    ) {
        for (k, item) in t.iter() {
            let path = join(prefix, k);
            let span = t
                .get_key_value(k)
                .and_then(|(key, _)| key.span())
                .or_else(|| item.span());
            if let Some(s) = span {
                out.insert(path.clone(), line_of(s.start));
            }
            match item {
                toml_edit::Item::ArrayOfTables(a) => {
                    for (i, sub) in a.iter().enumerate() {
                        let p = format!("{path}[{i}]");
                        if let Some(s) = sub.span() {
                            out.insert(p.clone(), line_of(s.start));
                        }
                        walk(sub, &p, line_of, out);
                    }
                }
                toml_edit::Item::Value(toml_edit::Value::Array(a)) => {
                    for (i, v) in a.iter().enumerate() {
                        let p = format!("{path}[{i}]");
                        if let Some(s) = v.span() {
                            out.insert(p.clone(), line_of(s.start));
                        }
                        if let Some(it) = v.as_inline_table() {
                            walk(it, &p, line_of, out);
                        }
                    }
                }
                _ => {
                    if let Some(sub) = item.as_table_like() {
                        walk(sub, &path, line_of, out);
                    }
                }
            }
        }
    }
    walk(doc.as_table(), "", &line_of, &mut lines);
    Ok(lines)
}

/// Turns unit strings of known numeric fields into numbers, in place. Unknown fields are left
/// for serde, which names them. Err: (field, message).
fn normalize(table: &mut Table, prefix: &str) -> Result<(), (String, String)> {
    for (key, value) in table.iter_mut() {
        let path = join(prefix, key);
        match value {
            Value::Table(t) => normalize(t, &path)?,
            Value::Array(items) => {
                for (i, item) in items.iter_mut().enumerate() {
                    if let Value::Table(t) = item {
                        // Entries share the array's path in FIELDS; errors name the entry.
                        normalize(t, &path)
                            .map_err(|(f, m)| (f.replacen(&path, &format!("{path}[{i}]"), 1), m))?;
                    }
                }
            }
            _ => {
                if let Some(kind) = field_kind(&path) {
                    *value = convert(kind, value).map_err(|m| (path.clone(), m))?;
                }
            }
        }
    }
    Ok(())
}

/// A file value of a field of `kind`, as the number or string serde expects.
fn convert(kind: FieldKind, value: &Value) -> Result<Value, String> {
    let as_int = |v: u64| -> Result<Value, String> {
        i64::try_from(v)
            .map(Value::Integer)
            .map_err(|_| format!("{v} is too large"))
    };
    match (kind, value) {
        (FieldKind::Size, Value::String(s)) => as_int(parse_size(s)?),
        (FieldKind::Count, Value::String(s)) => as_int(
            s.trim()
                .parse::<u64>()
                .map_err(|_| format!("'{s}' is not a non-negative integer"))?,
        ),
        (FieldKind::Time, Value::String(s)) => as_int(parse_time_ns(s)?),
        (FieldKind::Time, Value::Float(f)) if f.is_finite() && *f >= 0.0 => {
            as_int(f.round() as u64)
        }
        (FieldKind::Size | FieldKind::Count, Value::Float(f))
            if f.is_finite() && *f >= 0.0 && f.fract() == 0.0 =>
        {
            as_int(*f as u64)
        }
        (FieldKind::Rate, Value::String(s)) => Ok(Value::Float(parse_rate(s)?)),
        (FieldKind::Number, Value::String(s)) => s
            .trim()
            .parse::<f64>()
            .map(Value::Float)
            .map_err(|_| format!("'{s}' is not a number")),
        _ => Ok(value.clone()),
    }
}

/// The value of a `--set` for a field of `kind`, from the text after `=`.
fn set_value(kind: FieldKind, raw: &str) -> Result<Value, String> {
    match kind {
        FieldKind::Text => Ok(Value::String(raw.to_string())),
        FieldKind::Choice(names) => {
            let v = raw.trim().to_ascii_lowercase();
            if names.contains(&v.as_str()) {
                Ok(Value::String(v))
            } else {
                Err(format!("'{raw}' is not one of {}", names.join(", ")))
            }
        }
        FieldKind::Flag => match raw.trim().to_ascii_lowercase().as_str() {
            "true" | "yes" | "1" | "on" | "enable" => Ok(Value::Boolean(true)),
            "false" | "no" | "0" | "off" | "disable" => Ok(Value::Boolean(false)),
            _ => Err(format!("'{raw}' is not true or false")),
        },
        _ => convert(kind, &Value::String(raw.to_string())),
    }
}

/// Applies one `key=value` to the table; answers the dotted path it set.
fn apply_set(table: &mut Table, set: &str) -> Result<String, ModelError> {
    let err = |message: String| ModelError::Set {
        set: set.to_string(),
        message,
    };
    let (key, raw) = set
        .split_once('=')
        .ok_or_else(|| err("expected KEY=VALUE".to_string()))?;
    let key = key.trim();
    let (path, raw) = if key == "cb_config_list" {
        // ROMIO's "*:N": at most N aggregators on every host.
        let n = raw
            .trim()
            .strip_prefix("*:")
            .ok_or_else(|| err("only the form *:N is modelled (N aggregators per host)".into()))?;
        ("mpiio.cb_per_node".to_string(), n.to_string())
    } else {
        let path = ALIASES
            .iter()
            .find(|(a, _)| *a == key)
            .map(|(_, p)| p.to_string())
            .unwrap_or_else(|| key.to_string());
        (path, raw.to_string())
    };
    let kind = field_kind(&path).ok_or_else(|| {
        if path.starts_with("network.size_factors") || path.starts_with("calibration.fits") {
            err(format!("{path} is a list: edit it in the file"))
        } else {
            err(format!(
                "unknown setting '{key}' (a dotted field path such as storage.disk.rpm, or an alias: {}; see docs/MODEL.md)",
                ALIASES.iter().map(|(a, _)| *a).chain(["cb_config_list"]).collect::<Vec<_>>().join(", ")
            ))
        }
    })?;
    let value = set_value(kind, &raw).map_err(err)?;

    let parts: Vec<&str> = path.split('.').collect();
    let (last, parents) = parts
        .split_last()
        .ok_or_else(|| err("empty key".to_string()))?;
    let mut t = &mut *table;
    for p in parents {
        let entry = t
            .entry(p.to_string())
            .or_insert_with(|| Value::Table(Table::new()));
        t = match entry {
            Value::Table(sub) => sub,
            _ => return Err(err(format!("{p} is not a table in this file"))),
        };
    }
    // Switching the disk kind drops the other kind's fields; set the new kind's fields after it.
    if path == "storage.disk.kind" && t.get("kind") != Some(&value) {
        t.clear();
    }
    t.insert(last.to_string(), value);
    Ok(path)
}

/// The most nodes a model may have (more than any machine built; the simulator keeps state
/// per node, so a larger count only exhausts memory).
pub const MAX_NODES: u64 = 1_000_000;
/// The most ranks per node.
pub const MAX_RANKS_PER_NODE: u64 = 10_000;
/// The most data servers, and the most metadata servers.
pub const MAX_SERVERS: u64 = 100_000;
/// The most disks (targets) in all: data_servers × disks_per_server.
pub const MAX_DISKS: u64 = 1_000_000;
/// The most service threads per server.
pub const MAX_SERVER_THREADS: u64 = 10_000;

/// Checks what the types cannot: counts that must be positive and not beyond what can be
/// simulated, limits in order, rates that must be finite and positive. Err: (field, message
/// naming the value).
pub fn validate(s: &System) -> Result<(), (String, String)> {
    fn positive_int(field: &str, v: u64) -> Result<(), (String, String)> {
        if v == 0 {
            return Err((
                field.to_string(),
                "0 is not allowed: must be at least 1".into(),
            ));
        }
        Ok(())
    }
    fn at_most(field: &str, v: u64, max: u64) -> Result<(), (String, String)> {
        if v > max {
            return Err((
                field.to_string(),
                format!("{v} is not allowed: must be at most {max}"),
            ));
        }
        Ok(())
    }
    fn rate(field: &str, v: f64, allow_zero: bool) -> Result<(), (String, String)> {
        if !v.is_finite() || v < 0.0 || (!allow_zero && v == 0.0) {
            let want = if allow_zero { "≥ 0" } else { "> 0" };
            return Err((
                field.to_string(),
                format!("{v} is not allowed: must be {want}"),
            ));
        }
        Ok(())
    }
    fn fraction(field: &str, v: f64) -> Result<(), (String, String)> {
        if !(0.0..=1.0).contains(&v) {
            return Err((
                field.to_string(),
                format!("{v} is not allowed: must be between 0 and 1"),
            ));
        }
        Ok(())
    }
    positive_int("nodes.count", s.nodes.count.into())?;
    positive_int("nodes.ranks_per_node", s.nodes.ranks_per_node.into())?;
    at_most("nodes.count", s.nodes.count.into(), MAX_NODES)?;
    at_most(
        "nodes.ranks_per_node",
        s.nodes.ranks_per_node.into(),
        MAX_RANKS_PER_NODE,
    )?;

    rate(
        "nodes.client_cpu_bandwidth",
        s.nodes.client_cpu_bandwidth,
        true,
    )?;

    let n = &s.network;
    rate("network.bandwidth", n.bandwidth, false)?;
    rate("network.bisection_bandwidth", n.bisection_bandwidth, true)?;
    rate(
        "network.intra_node_bandwidth",
        n.intra_node_bandwidth,
        false,
    )?;
    rate(
        "network.intra_node_oversubscribed_bandwidth",
        n.intra_node_oversubscribed_bandwidth,
        true,
    )?;
    for (list, factors) in [
        ("network.size_factors", &n.size_factors),
        (
            "network.intra_node_size_factors",
            &n.intra_node_size_factors,
        ),
    ] {
        let mut prev = None;
        for (i, f) in factors.iter().enumerate() {
            let field = format!("{list}[{i}]");
            rate(&format!("{field}.latency"), f.latency, false)?;
            rate(&format!("{field}.bandwidth"), f.bandwidth, false)?;
            if prev.is_some_and(|p| f.min_size <= p) {
                return Err((
                    format!("{field}.min_size"),
                    format!(
                        "{} is not allowed: entries must have ascending min_size",
                        f.min_size
                    ),
                ));
            }
            prev = Some(f.min_size);
        }
    }

    let st = &s.storage;
    positive_int("storage.data_servers", st.data_servers.into())?;
    positive_int("storage.metadata_servers", st.metadata_servers.into())?;
    positive_int("storage.disks_per_server", st.disks_per_server.into())?;
    positive_int("storage.max_request", st.max_request)?;
    at_most("storage.data_servers", st.data_servers.into(), MAX_SERVERS)?;
    at_most(
        "storage.metadata_servers",
        st.metadata_servers.into(),
        MAX_SERVERS,
    )?;
    at_most(
        "storage.disks_per_server",
        u64::from(st.data_servers) * u64::from(st.disks_per_server),
        MAX_DISKS,
    )
    .map_err(|(f, _)| {
        (
            f,
            format!(
                "{} is not allowed: data_servers × disks_per_server must be at most {MAX_DISKS}",
                st.disks_per_server
            ),
        )
    })?;
    if st.metadata_on_data_servers && st.metadata_servers > st.data_servers {
        return Err((
            "storage.metadata_servers".into(),
            format!(
                "{} is more than the {} data servers they are placed on (metadata_on_data_servers)",
                st.metadata_servers, st.data_servers
            ),
        ));
    }
    match &st.disk {
        Disk::Hdd {
            rpm, sequential, ..
        } => {
            positive_int("storage.disk.rpm", (*rpm).into())?;
            rate("storage.disk.sequential", *sequential, false)?;
        }
        Disk::Ssd {
            bandwidth, iops, ..
        } => {
            rate("storage.disk.bandwidth", *bandwidth, false)?;
            rate("storage.disk.iops", *iops, false)?;
        }
    }
    rate(
        "storage.disk_access.read_bandwidth",
        st.disk_access.read_bandwidth,
        true,
    )?;
    rate(
        "storage.disk_access.large_factor",
        st.disk_access.large_factor,
        true,
    )?;
    let c = &st.cache;
    if c.dirty_limit > c.write_back {
        return Err((
            "storage.cache.dirty_limit".into(),
            format!(
                "{} is larger than storage.cache.write_back = {}",
                c.dirty_limit, c.write_back
            ),
        ));
    }
    rate("storage.cache.flush_rate", c.flush_rate, c.write_back == 0)?;
    rate("storage.cache.memory_bandwidth", c.memory_bandwidth, false)?;
    rate(
        "storage.cache.read_memory_bandwidth",
        c.read_memory_bandwidth,
        true,
    )?;
    rate(
        "storage.cache.rewrite_memory_bandwidth",
        c.rewrite_memory_bandwidth,
        true,
    )?;
    positive_int("storage.server_threads", st.server_threads.into())?;
    at_most(
        "storage.disk_access.lanes",
        st.disk_access.lanes.into(),
        MAX_SERVER_THREADS,
    )?;
    at_most(
        "storage.server_threads",
        st.server_threads.into(),
        MAX_SERVER_THREADS,
    )?;
    positive_int(
        "storage.metadata.create_syncs",
        st.metadata.create_syncs.into(),
    )?;

    let l = &s.layout;
    positive_int("layout.stripe_size", l.stripe_size)?;
    let targets = match l.kind {
        LayoutKind::Pvfs => st.data_servers,
        LayoutKind::Lustre => st.data_servers.saturating_mul(st.disks_per_server),
    };
    if l.stripe_count > targets {
        return Err((
            "layout.stripe_count".into(),
            format!(
                "{} is more than the {targets} {} there are",
                l.stripe_count,
                if l.kind == LayoutKind::Pvfs {
                    "data servers"
                } else {
                    "targets"
                }
            ),
        ));
    }

    let cc = &s.client_cache;
    if cc.on() && cc.dirty_limit > cc.size {
        return Err((
            "client_cache.dirty_limit".into(),
            format!(
                "{} is larger than client_cache.size = {}",
                cc.dirty_limit, cc.size
            ),
        ));
    }
    if cc.on() {
        positive_int("client_cache.flush_chunk", cc.flush_chunk)?;
    }
    rate("client_cache.flush_rate", cc.flush_rate, true)?;
    rate("client_cache.memory_bandwidth", cc.memory_bandwidth, true)?;

    let m = &s.mpiio;
    positive_int("mpiio.cb_buffer_size", m.cb_buffer_size)?;
    positive_int("mpiio.cb_per_node", m.cb_per_node.into())?;
    positive_int("mpiio.ind_wr_buffer_size", m.ind_wr_buffer_size)?;
    positive_int("mpiio.ind_rd_buffer_size", m.ind_rd_buffer_size)?;
    if let Some(lu) = &s.lustre {
        positive_int("lustre.max_pages_per_rpc", lu.max_pages_per_rpc.into())?;
        positive_int("lustre.max_rpcs_in_flight", lu.max_rpcs_in_flight.into())?;
    }
    let v = &s.variance;
    for (field, x) in [
        ("variance.network_jitter", v.network_jitter),
        ("variance.disk_jitter", v.disk_jitter),
        ("variance.stall_probability", v.stall_probability),
    ] {
        fraction(field, x)?;
    }
    if let Some(cal) = &s.calibration {
        for (i, f) in cal.fits.iter().enumerate() {
            if !f.measured.is_finite() || !f.model.is_finite() {
                return Err((
                    format!("calibration.fits[{i}]"),
                    format!("{}: measured and model must be finite numbers", f.name),
                ));
            }
        }
    }
    Ok(())
}

/// Serializes a system to TOML text (what `calibrate` writes), with `header` as leading
/// comment lines.
pub fn to_toml(system: &System, header: &str) -> Result<String, toml::ser::Error> {
    let body = toml::to_string(system)?;
    let mut out = String::new();
    for line in header.lines() {
        out.push_str("# ");
        out.push_str(line);
        out.push('\n');
    }
    out.push_str(&body);
    Ok(out)
}

/// Deserializes a system from an already normalized TOML value (tests, tools).
pub fn from_value(value: Value) -> Result<System, toml::de::Error> {
    System::deserialize(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Toggle;

    fn err_text(r: Result<System, ModelError>) -> String {
        match r {
            Ok(_) => panic!("expected an error"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn every_preset_loads_and_validates() {
        for name in preset_names() {
            let s = system(name, &[]).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(&s.name, name);
            assert!(s.calibration.is_some(), "{name} cites its source");
        }
    }

    #[test]
    fn preset_values_with_units() {
        let s = system("pvfs2-2009", &[]).unwrap();
        assert_eq!(s.network.latency_ns, 50_000);
        assert_eq!(s.network.bandwidth, 117e6);
        assert_eq!(s.network.eager_limit, 16384);
        assert_eq!(s.layout.stripe_size, 65536);
        assert_eq!(s.storage.data_servers, 4);
        assert_eq!(s.storage.metadata_servers, 1);
        assert_eq!(s.network.size_factors[1].min_size, 8192);
        match s.storage.disk {
            Disk::Hdd {
                avg_seek_ns,
                rpm,
                sequential,
                ..
            } => {
                assert_eq!(avg_seek_ns, 8_500_000);
                assert_eq!(rpm, 7200);
                assert_eq!(sequential, 40e6);
            }
            Disk::Ssd { .. } => panic!("pvfs2-2009 has hard disks"),
        }
        let l = system("lustre-fdr", &[]).unwrap();
        assert_eq!(l.layout.stripe_size, 1 << 20);
        assert_eq!(l.storage.data_servers * l.storage.disks_per_server, 4);
    }

    #[test]
    fn sets_paths_and_aliases() {
        let sets: Vec<String> = [
            "cb_buffer_size=64M",
            "stripe_count=2",
            "storage.disk.rpm=5400",
            "network.bandwidth=1.25e9",
            "romio_cb_write=enable",
            "cb_config_list=*:4",
            "ind_wr_buffer_size=1MiB",
            "latency=10us",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let s = system("pvfs2-2009", &sets).unwrap();
        assert_eq!(s.mpiio.cb_buffer_size, 64 << 20);
        assert_eq!(s.layout.stripe_count, 2);
        assert!(matches!(s.storage.disk, Disk::Hdd { rpm: 5400, .. }));
        assert_eq!(s.network.bandwidth, 1.25e9);
        assert_eq!(s.mpiio.cb_write, Toggle::Enable);
        assert_eq!(s.mpiio.cb_per_node, 4);
        assert_eq!(s.mpiio.ind_wr_buffer_size, 1 << 20);
        assert_eq!(s.network.latency_ns, 10_000);
    }

    #[test]
    fn switching_disk_kind() {
        let sets: Vec<String> = [
            "storage.disk.kind=ssd",
            "storage.disk.latency_ns=80us",
            "storage.disk.bandwidth=500MB/s",
            "storage.disk.iops=50000",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let s = system("pvfs2-2009", &sets).unwrap();
        assert!(matches!(
            s.storage.disk,
            Disk::Ssd {
                latency_ns: 80_000,
                ..
            }
        ));
        let e = err_text(system("pvfs2-2009", &sets[..1]));
        assert!(e.contains("--set storage.disk.kind=ssd"), "{e}");
    }

    #[test]
    fn bad_sets_are_named() {
        let e = err_text(system("pvfs2-2009", &["nonsense=1".into()]));
        assert!(
            e.contains("--set nonsense=1") && e.contains("unknown setting"),
            "{e}"
        );
        let e = err_text(system("pvfs2-2009", &["stripe_size=0".into()]));
        assert_eq!(
            e,
            "--set stripe_size=0: layout.stripe_size: 0 is not allowed: must be at least 1"
        );
        let e = err_text(system("pvfs2-2009", &["cb_buffer_size=lots".into()]));
        assert!(e.contains("not a size"), "{e}");
        let e = err_text(system("pvfs2-2009", &["romio_cb_write=maybe".into()]));
        assert!(e.contains("enable, disable, automatic"), "{e}");
        let e = err_text(system("pvfs2-2009", &["cb_buffer_size".into()]));
        assert!(e.contains("KEY=VALUE"), "{e}");
    }

    #[test]
    fn a_device_given_as_model_is_refused_not_read() {
        // Issue 12: --system /dev/zero read gigabytes.
        let e = err_text(system("/dev/zero", &[]));
        assert!(
            e.starts_with("system '/dev/zero' is neither a preset")
                && e.ends_with("nor a file: not a regular file (a character device)"),
            "{e}"
        );
    }

    #[test]
    fn counts_beyond_what_can_be_simulated_are_refused() {
        // Issue 12: nodes.count=4000000000 aborted with out-of-memory in the simulator.
        let e = err_text(system("pvfs2-2009", &["nodes.count=4000000000".into()]));
        assert_eq!(
            e,
            // Issue 12: the field was named twice ("--set nodes.count=...: nodes.count: ...").
            "--set nodes.count=4000000000: 4000000000 is not allowed: must be at most 1000000"
        );
        let e = err_text(system(
            "pvfs2-2009",
            &["storage.disks_per_server=2000000".into()],
        ));
        assert!(
            e.ends_with("data_servers × disks_per_server must be at most 1000000"),
            "{e}"
        );
        let e = err_text(system(
            "pvfs2-2009",
            &["storage.server_threads=1000000".into()],
        ));
        assert!(e.ends_with("must be at most 10000"), "{e}");
        assert!(system("pvfs2-2009", &["nodes.count=1000000".into()]).is_ok());
    }

    fn pvfs_with(find: &str, replace: &str) -> String {
        let text = preset_text("pvfs2-2009").unwrap();
        assert!(text.contains(find), "{find}");
        text.replacen(find, replace, 1)
    }

    fn line_of(text: &str, needle: &str) -> usize {
        text.lines().position(|l| l.starts_with(needle)).unwrap() + 1
    }

    #[test]
    fn file_errors_name_file_line_field_value() {
        let text = pvfs_with("ranks_per_node = 2", "ranks_per_node = 0");
        let line = line_of(&text, "ranks_per_node");
        let e = err_text(from_text("m.toml", &text, &[]));
        assert_eq!(
            e,
            format!("m.toml:{line}: nodes.ranks_per_node: 0 is not allowed: must be at least 1")
        );

        let text = pvfs_with("dirty_limit = \"400M\"", "dirty_limit = \"2G\"");
        let line = line_of(&text, "dirty_limit");
        let e = err_text(from_text("m.toml", &text, &[]));
        assert_eq!(
            e,
            format!(
                "m.toml:{line}: storage.cache.dirty_limit: 2147483648 is larger than storage.cache.write_back = 1073741824"
            )
        );

        let text = pvfs_with("rpm = 7200", "rpm = 7200\nrmp = 5400");
        let e = err_text(from_text("m.toml", &text, &[]));
        let line = line_of(&text, "rmp");
        assert!(
            e.starts_with(&format!("m.toml:{line}: storage.disk:"))
                || e.starts_with(&format!("m.toml:{line}: storage.disk.rmp")),
            "{e}"
        );
        assert!(e.contains("rmp"), "{e}");

        let text = pvfs_with("count = 32", "count = 32\ncolour = \"blue\"");
        let line = line_of(&text, "colour");
        let e = err_text(from_text("m.toml", &text, &[]));
        assert!(e.starts_with(&format!("m.toml:{line}: nodes")), "{e}");
        assert!(e.contains("unknown field `colour`"), "{e}");

        let text = pvfs_with("stripe_size = \"64K\"", "stripe_size = \"64 apples\"");
        let line = line_of(&text, "stripe_size");
        let e = err_text(from_text("m.toml", &text, &[]));
        assert!(
            e.starts_with(&format!("m.toml:{line}: layout.stripe_size: '64 apples'")),
            "{e}"
        );

        let e = err_text(from_text("m.toml", "name = \n", &[]));
        assert!(e.starts_with("m.toml: ") && e.contains("line 1"), "{e}");
    }

    #[test]
    fn missing_file_lists_presets() {
        let e = err_text(system("/no/such/model.toml", &[]));
        assert!(
            e.contains("pvfs2-2009") && e.contains("/no/such/model.toml"),
            "{e}"
        );
    }

    #[test]
    fn round_trip_through_toml() {
        for name in preset_names() {
            let s = system(name, &[]).unwrap();
            let text = to_toml(&s, "written by a test").unwrap();
            assert!(text.starts_with("# written by a test\n"));
            let back = from_text("rt.toml", &text, &[]).unwrap();
            assert_eq!(back, s, "{name}");
        }
    }

    #[test]
    fn every_field_is_in_the_table() {
        // A model field missing from FIELDS could not take units or --set: serialize a preset
        // and check that every leaf path is known.
        fn leaves(v: &Value, prefix: &str, out: &mut Vec<String>) {
            match v {
                Value::Table(t) => {
                    for (k, v) in t {
                        leaves(v, &join(prefix, k), out)
                    }
                }
                Value::Array(a) => {
                    for v in a {
                        leaves(v, prefix, out)
                    }
                }
                _ => out.push(prefix.to_string()),
            }
        }
        for name in ["pvfs2-2009", "lustre-fdr"] {
            let s = system(name, &[]).unwrap();
            let v = Value::try_from(&s).unwrap();
            let mut paths = Vec::new();
            leaves(&v, "", &mut paths);
            for p in paths {
                assert!(
                    field_kind(&p).is_some() || p.starts_with("calibration.fits"),
                    "{p} missing from FIELDS"
                );
            }
        }
    }
}
