//! Chrome trace event JSON (Perfetto, chrome://tracing): one "X" complete event per call on
//! pid = container (rank, server, disk), tid = its thread, nested by time; nonblocking
//! operations and collective MPI-IO instances as async "b"/"e" pairs; MPI messages as flows
//! "s"/"f"; I/O throughput per container as "C" counters; names as "M" metadata.
//!
//! Written as it streams: each event is one line of the `traceEvents` array. Times are µs with
//! three decimals, so nanoseconds survive exactly.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::Path;

use pioscope_trace::raw::format::flags;
use pioscope_trace::store::{Event, Trace};
use pioscope_trace::Layer;
use serde_json::{json, Value};

use crate::model::{self, Throughput};
use crate::{data_bytes, for_each_event, ExportError, Options, Progress, Summary};

/// pid of the pseudo-process that holds collective MPI-IO instances spanning ranks.
pub const COLLECTIVES_PID: i64 = 0;

/// The pid of a container: its meta.json index + 1 (0 is the collectives' row).
pub fn pid(process: i32) -> i64 {
    process as i64 + 1
}

/// ns → the format's µs, exact to the nanosecond.
fn us(ns: i64) -> Value {
    // Three decimals: a float with at most 15-16 significant digits keeps ns exact up to ~10^12
    // µs (11 days), longer than any trace.
    let v = ns as f64 / 1000.0;
    json!((v * 1000.0).round() / 1000.0)
}

struct Writer<W: Write> {
    out: W,
    first: bool,
}

impl<W: Write> Writer<W> {
    fn push_raw(&mut self, line: &str) -> std::io::Result<()> {
        if !self.first {
            self.out.write_all(b",\n")?;
        }
        self.first = false;
        self.out.write_all(line.as_bytes())
    }

    fn push(&mut self, v: &Value) -> std::io::Result<()> {
        if !self.first {
            self.out.write_all(b",\n")?;
        }
        self.first = false;
        serde_json::to_writer(&mut self.out, v)?;
        Ok(())
    }
}

/// A JSON string literal (escaped).
fn js(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_string())
}

/// µs with three decimals, as text, exact to the nanosecond.
fn us_text(ns: i64) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    format!("{sign}{}.{:03}", a / 1000, a % 1000)
}

/// One call as an "X" complete event, formatted by hand: this is the hot path of the export
/// (a `serde_json::Value` per event costs several times as much). `args` are what a viewer
/// shows when the slice is selected.
fn x_event(trace: &Trace, e: &Event<'_>) -> String {
    use std::fmt::Write as _;
    let mut a = String::with_capacity(160);
    let _ = write!(
        a,
        "\"id\":{},\"rank\":{},\"depth\":{}",
        e.id, e.rank, e.depth
    );
    if let Some(p) = e.parent {
        let _ = write!(a, ",\"parent\":{p}");
    }
    if let Some(f) = e.file_id {
        let _ = write!(a, ",\"file\":{}", js(trace.file_path(f).unwrap_or("?")));
    }
    if let Some(o) = e.offset {
        let _ = write!(a, ",\"offset\":{o}");
    }
    let _ = write!(a, ",\"size\":{},\"result\":{}", e.size, e.result);
    if e.error != 0 {
        let _ = write!(a, ",\"error\":{}", e.error);
    }
    let mpi = e.mpi.get();
    for (k, v) in [
        ("instance", e.instance),
        ("peer", mpi.peer),
        ("tag", mpi.tag),
        ("root", mpi.root),
        ("comm_size", mpi.comm_size),
    ] {
        if let Some(v) = v {
            let _ = write!(a, ",\"{k}\":{v}");
        }
    }
    if let Some(r) = mpi.request {
        let _ = write!(a, ",\"request\":{r}");
    }
    if let Some(c) = e.comm {
        let _ = write!(a, ",\"comm\":{}", js(c));
    }
    if let Some(r) = e.region {
        let _ = write!(a, ",\"region\":{}", js(r));
    }
    format!(
        "{{\"ph\":\"X\",\"name\":{},\"cat\":\"{}\",\"pid\":{},\"tid\":{},\"ts\":{},\"dur\":{},\"args\":{{{a}}}}}",
        js(e.func),
        e.layer.name(),
        pid(e.process),
        e.thread,
        us_text(e.start_ns),
        us_text(e.duration_ns),
    )
}

/// A collective MPI-IO instance seen so far: first start and last end over the ranks.
struct Instance {
    name: String,
    start: i64,
    end: i64,
    ranks: u32,
}

/// Writes `trace` as Chrome trace JSON to `out`.
pub fn export(
    trace: &Trace,
    out: &Path,
    opts: &Options,
    progress: Progress<'_>,
) -> Result<Summary, ExportError> {
    let mut w = Writer {
        out: crate::create_output(out)?,
        first: true,
    };
    let mut summary = Summary::default();
    let result = (|| -> Result<(), ExportError> {
        let meta = &trace.meta;
        w.out
            .write_all(b"{\"displayTimeUnit\":\"ns\",\"otherData\":")?;
        serde_json::to_writer(
            &mut w.out,
            &json!({
                "generator": format!("pioscope-export {}", env!("CARGO_PKG_VERSION")),
                "command": meta.job.command,
                "start_unix_ns": meta.job.start_unix_ns,
                "ranks": meta.job.ranks,
            }),
        )?;
        w.out.write_all(b",\"traceEvents\":[\n")?;

        // Names first: processes sorted by host then container, threads by number.
        let containers = model::containers(meta, opts);
        let hosts = model::hosts(&containers);
        w.push(
            &json!({"ph": "M", "name": "process_name", "pid": COLLECTIVES_PID, "tid": 0,
                       "args": {"name": "collective MPI-IO"}}),
        )?;
        w.push(
            &json!({"ph": "M", "name": "process_sort_index", "pid": COLLECTIVES_PID,
                       "tid": 0, "args": {"sort_index": -1}}),
        )?;
        for c in &containers {
            let p = pid(c.process);
            let host_index = hosts.iter().position(|h| *h == c.host).unwrap_or(0);
            w.push(
                &json!({"ph": "M", "name": "process_name", "pid": p, "tid": 0,
                           "args": {"name": format!("{} ({})", c.label, c.host)}}),
            )?;
            w.push(
                &json!({"ph": "M", "name": "process_labels", "pid": p, "tid": 0,
                           "args": {"labels": c.host}}),
            )?;
            w.push(
                &json!({"ph": "M", "name": "process_sort_index", "pid": p, "tid": 0,
                           "args": {"sort_index": host_index * 1_000_000 + c.process as usize}}),
            )?;
            for t in 0..c.threads {
                w.push(
                    &json!({"ph": "M", "name": "thread_name", "pid": p, "tid": t,
                               "args": {"name": format!("thread {t}")}}),
                )?;
            }
        }

        let bucket = model::bucket_ns(meta);
        let mut throughput: BTreeMap<i32, Throughput> = BTreeMap::new();
        let mut pending: HashMap<(i32, i64), String> = HashMap::new();
        let mut instances: BTreeMap<i32, Instance> = BTreeMap::new();
        for_each_event(trace, opts, progress, |e| {
            let p = pid(e.process);
            w.push_raw(&x_event(trace, e))?;
            summary.events += 1;
            throughput
                .entry(e.process)
                .or_default()
                .add(e.end_ns(), data_bytes(e), bucket);
            // Nonblocking operations overlap what follows them: an async slice from the start
            // to the completion (the same process and request id).
            if let Some(req) = e.mpi.get().request {
                let id = format!("p{}r{}", e.process, req);
                if e.flags & flags::NONBLOCKING != 0 {
                    let name = e.func.to_string();
                    w.push(&json!({"ph": "b", "name": name, "cat": "nonblocking",
                                   "id": id, "pid": p, "tid": e.thread, "ts": us(e.start_ns)}))?;
                    pending.insert((e.process, req), name);
                } else if e.flags & flags::COMPLETION != 0 {
                    if let Some(name) = pending.remove(&(e.process, req)) {
                        w.push(&json!({"ph": "e", "name": name, "cat": "nonblocking",
                                       "id": id, "pid": p, "tid": e.thread,
                                       "ts": us(e.end_ns())}))?;
                    }
                }
            }
            if let (Some(i), Layer::MpiIo) = (e.instance, e.layer) {
                let inst = instances.entry(i).or_insert_with(|| Instance {
                    name: e.func.to_string(),
                    start: e.start_ns,
                    end: e.end_ns(),
                    ranks: 0,
                });
                inst.start = inst.start.min(e.start_ns);
                inst.end = inst.end.max(e.end_ns());
                inst.ranks += 1;
            }
            Ok(())
        })?;
        // A start whose completion is outside the export ends where the trace does.
        for ((process, req), name) in pending {
            w.push(&json!({"ph": "e", "name": name, "cat": "nonblocking",
                           "id": format!("p{process}r{req}"), "pid": pid(process), "tid": 0,
                           "ts": us(meta.job.duration_ns)}))?;
        }
        for (i, inst) in &instances {
            let id = format!("instance{i}");
            w.push(
                &json!({"ph": "b", "name": inst.name, "cat": "collective", "id": id,
                           "pid": COLLECTIVES_PID, "tid": 0, "ts": us(inst.start),
                           "args": {"instance": i, "calls": inst.ranks}}),
            )?;
            w.push(
                &json!({"ph": "e", "name": inst.name, "cat": "collective", "id": id,
                           "pid": COLLECTIVES_PID, "tid": 0, "ts": us(inst.end)}),
            )?;
        }
        for (k, m) in trace.messages()?.iter().enumerate() {
            if !opts.keeps_message(m) {
                continue;
            }
            let name = format!("{} → {}", m.send_func, m.recv_func);
            w.push(&json!({"ph": "s", "name": name, "cat": "message", "id": k,
                           "pid": pid(m.send_process), "tid": m.send_thread,
                           "ts": us(m.send_ns),
                           "args": {"bytes": m.bytes, "tag": m.tag, "from": m.from_rank,
                                    "to": m.to_rank}}))?;
            w.push(
                &json!({"ph": "f", "bp": "e", "name": name, "cat": "message", "id": k,
                           "pid": pid(m.recv_process), "tid": m.recv_thread,
                           "ts": us(m.recv_ns)}),
            )?;
            summary.messages += 1;
        }
        for (process, t) in &throughput {
            for (ts, mbs) in t.series(bucket) {
                w.push(
                    &json!({"ph": "C", "name": "I/O throughput", "pid": pid(*process),
                               "ts": us(ts), "args": {"MB/s": mbs}}),
                )?;
                summary.counters += 1;
            }
        }
        w.out.write_all(b"\n]}\n")?;
        w.out.flush()?;
        Ok(())
    })();
    crate::name_output(result, out).map(|()| summary)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pioscope_trace::store::{MpiArgs, MpiRef};

    #[test]
    fn hand_written_slices_are_json() {
        let mpi = MpiArgs {
            peer: Some(2),
            tag: Some(7),
            ..MpiArgs::NONE
        };
        let e = Event {
            id: 7,
            rank: 1,
            process: 1,
            depth: 1,
            parent: Some(3),
            size: 8,
            result: 8,
            mpi: MpiRef::to(&mpi),
            comm: Some("comm \"x\""),
            ..Event::call(Layer::Mpi, "MPI_Send", 1_234_567, 89)
        };
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/hpio-collective");
        let trace = Trace::open(&dir).expect("checked-in trace");
        let v: Value = serde_json::from_str(&x_event(&trace, &e)).expect("valid JSON");
        assert_eq!(v["ts"], json!(1234.567));
        assert_eq!(v["dur"], json!(0.089));
        assert_eq!(v["args"]["comm"], json!("comm \"x\""));
        assert_eq!(v["args"]["peer"], json!(2));
        assert_eq!(v["pid"], json!(2));
        assert_eq!(us_text(-1500), "-1.500");
    }

    #[test]
    fn microseconds_keep_nanoseconds() {
        assert_eq!(us(1), json!(0.001));
        assert_eq!(us(123_456_789_012), json!(123456789.012));
    }
}
