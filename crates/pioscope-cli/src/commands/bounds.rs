//! `pioscope bounds`: the analytic ceilings of a system model (throughput, small-request
//! latency bound, metadata rates), each with the component that sets it.
use anyhow::Result;
use clap::Parser;
use serde_json::{json, Value};

use pioscope_sim::model::bounds::{self, Bound, OpRate};
use pioscope_sim::model::load;
use pioscope_sim::model::units::parse_size;
use pioscope_sim::model::System;
use pioscope_sim::program::IoKind;
use pioscope_trace::units::{fmt_ops, fmt_rate, fmt_size};

/// Small requests are judged at this size when --request-size is larger.
const SMALL: u64 = 4096;

/// Print the analytic performance ceilings of a system model
///
/// For N clients (ranks) each issuing blocking requests of one size: the aggregate write and
/// read ceilings (the minimum of client NICs, server NICs, bisection, disks, cache flush,
/// per-client latency, server CPU and IOPS), the rate while write-back caches absorb writes,
/// the bound for small requests, and metadata rates. Each line names the component that sets
/// it. The formulas are in docs/MODEL.md ("Bounds").
///
/// Examples:
///   pioscope bounds --system pvfs2-2009
///   pioscope bounds --system lustre-fdr --clients 64 --request-size 16M --set stripe_count=1
///   pioscope bounds --system my-cluster.toml --json
#[derive(Parser, Debug)]
#[command(after_help = crate::EXIT_CODES, verbatim_doc_comment)]
pub struct Args {
    /// A preset (local, pvfs2-2009, lustre-fdr) or a system TOML file
    #[arg(long, value_name = "PRESET|FILE")]
    pub system: String,
    /// Override a model field: a dotted path or an alias (cb_buffer_size=64M, stripe_count=2); repeatable
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// Clients (MPI ranks) doing I/O [default: every rank of the model: nodes x ranks_per_node]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub clients: Option<u32>,
    /// Size of each request (K/M/G are binary)
    #[arg(long, value_name = "S", default_value = "1M", value_parser = parse_request_size)]
    pub request_size: u64,
    /// Print one JSON object instead of text
    #[arg(long)]
    pub json: bool,
}

fn parse_request_size(s: &str) -> Result<u64, String> {
    match parse_size(s)? {
        0 => Err("must be at least 1 byte".to_string()),
        n => Ok(n),
    }
}

/// Prints the bounds; exit code 0.
pub fn run(args: Args) -> Result<u8> {
    let system = load::system(&args.system, &args.sets)?;
    let clients = args.clients.unwrap_or_else(|| {
        system
            .nodes
            .count
            .saturating_mul(system.nodes.ranks_per_node)
            .max(1)
    });
    let mut out = super::Output::stdout();
    if args.json {
        let v = to_json(&system, clients, args.request_size);
        out.line(format_args!("{}", serde_json::to_string_pretty(&v)?))?;
    } else {
        for line in text(&system, clients, args.request_size) {
            out.line(format_args!("{line}"))?;
        }
    }
    out.finish()?;
    Ok(0)
}

fn bound_json(b: &Bound) -> Value {
    json!({
        "bytes_per_s": b.bytes_per_s,
        "limited_by": b.limited_by,
        "burst": b.burst.as_ref().map(|x| json!({
            "bytes_per_s": x.bytes_per_s,
            "limited_by": x.limited_by,
            "bytes": x.bytes,
        })),
        "components": b.components.iter().map(|c| json!({
            "name": c.name,
            "bytes_per_s": c.bytes_per_s,
            "detail": c.detail,
        })).collect::<Vec<_>>(),
    })
}

fn op_json(r: &OpRate) -> Value {
    json!({"per_s": r.per_s, "limited_by": r.limited_by, "detail": r.detail})
}

/// The JSON object `--json` prints.
pub fn to_json(system: &System, clients: u32, request_size: u64) -> Value {
    let (targets, servers) = bounds::stripe_width(system);
    let small = request_size.min(SMALL);
    let md = bounds::metadata(system, clients);
    json!({
        "system": system.name,
        "clients": clients,
        "client_nodes": bounds::client_nodes(system, clients),
        "request_size": request_size,
        "stripe": {"targets": targets, "servers": servers, "stripe_size": system.layout.stripe_size},
        "write": bound_json(&bounds::throughput(system, clients, request_size, IoKind::Write)),
        "read": bound_json(&bounds::throughput(system, clients, request_size, IoKind::Read)),
        "small_requests": {
            "request_size": small,
            "write": bound_json(&bounds::throughput(system, clients, small, IoKind::Write)),
            "read": bound_json(&bounds::throughput(system, clients, small, IoKind::Read)),
        },
        "metadata": {
            "creates": op_json(&md.creates),
            "opens": op_json(&md.opens),
            "stats": op_json(&md.stats),
            "removes": op_json(&md.removes),
        },
    })
}

fn detail_of<'a>(b: &'a Bound, name: &str) -> &'a str {
    b.components
        .iter()
        .find(|c| c.name == name)
        .map(|c| c.detail.as_str())
        .unwrap_or("")
}

/// The text report, line by line.
pub fn text(system: &System, clients: u32, request_size: u64) -> Vec<String> {
    let mut l = Vec::new();
    let (targets, servers) = bounds::stripe_width(system);
    let w = bounds::throughput(system, clients, request_size, IoKind::Write);
    let r = bounds::throughput(system, clients, request_size, IoKind::Read);
    l.push(format!("system {}: {}", system.name, system.description));
    l.push(format!(
        "{clients} client(s) on {} node(s), requests of {}, files striped over {targets} target(s) on {servers} server(s) in {} stripes",
        bounds::client_nodes(system, clients),
        fmt_size(request_size as f64),
        fmt_size(system.layout.stripe_size as f64),
    ));
    l.push(String::new());
    for (name, b) in [("write", &w), ("read", &r)] {
        l.push(format!(
            "{name:<6} {:>11}  limited by {} ({})",
            fmt_rate(b.bytes_per_s),
            b.limited_by,
            detail_of(b, b.limited_by)
        ));
        if let Some(burst) = &b.burst {
            l.push(format!(
                "{:<6} {:>11}  while write-back caches absorb the first {}: limited by {}",
                "",
                fmt_rate(burst.bytes_per_s),
                fmt_size(burst.bytes),
                burst.limited_by
            ));
        }
    }
    l.push(String::new());
    l.push(format!(
        "{:<20} {:>11} {:>11}  how",
        "component", "write", "read"
    ));
    for c in &w.components {
        let read = r
            .components
            .iter()
            .find(|x| x.name == c.name)
            .map(|x| fmt_rate(x.bytes_per_s))
            .unwrap_or_else(|| "-".to_string());
        let how = if c.detail == detail_of(&r, c.name)
            || !r.components.iter().any(|x| x.name == c.name)
        {
            c.detail.clone()
        } else {
            format!("write: {}; read: {}", c.detail, detail_of(&r, c.name))
        };
        l.push(format!(
            "  {:<18} {:>11} {:>11}  {how}",
            c.name,
            fmt_rate(c.bytes_per_s),
            read
        ));
    }
    if request_size > SMALL {
        let sw = bounds::throughput(system, clients, SMALL, IoKind::Write);
        let sr = bounds::throughput(system, clients, SMALL, IoKind::Read);
        l.push(String::new());
        l.push(format!("small requests ({}):", fmt_size(SMALL as f64)));
        for (name, b) in [("write", &sw), ("read", &sr)] {
            l.push(format!(
                "  {name:<6} {:>11}  limited by {} ({})",
                fmt_rate(b.bytes_per_s),
                b.limited_by,
                detail_of(b, b.limited_by)
            ));
        }
    }
    let md = bounds::metadata(system, clients);
    l.push(String::new());
    l.push(format!("metadata ({clients} client(s)):"));
    for (name, op) in [
        ("creates", &md.creates),
        ("opens", &md.opens),
        ("stats", &md.stats),
        ("removes", &md.removes),
    ] {
        l.push(format!(
            "  {name:<8} {:>11}  limited by {} ({})",
            fmt_ops(op.per_s),
            op.limited_by,
            op.detail
        ));
    }
    l
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_names_the_limit() {
        let s = load::system("pvfs2-2009", &[]).unwrap();
        let lines = text(&s, 8, 4 << 20);
        let t = lines.join("\n");
        assert!(
            lines.contains(
                &"read      320 MB/s  limited by disks (8 disk(s) x 40.0 MB/s sequential)"
                    .to_string()
            ),
            "{t}"
        );
        assert!(
            t.contains("creates        100/s  limited by metadata servers"),
            "{t}"
        );
        let j = to_json(&s, 8, 4 << 20);
        assert_eq!(j["read"]["limited_by"], "disks");
        assert_eq!(j["read"]["bytes_per_s"], 320e6);
        assert_eq!(j["stripe"]["targets"], 4);
    }
}
