//! One event in full for the details panel: every column, its row, parent and children, the
//! hints in force on its file, and the matching message of a point-to-point call.

use std::collections::BTreeMap;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type, UInt8Type};
use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType;
use pioscope_trace::store::columns::CallColumns;
use pioscope_trace::store::schema::events as ev;
use pioscope_trace::store::{Pred, StoreError};
use serde_json::{json, Map, Value};

use crate::model::{func_keys, layer_name, TraceView};

/// Children listed in full; the rest are counted.
pub const MAX_CHILDREN: usize = 200;

/// Column `c` of row `i` as JSON.
fn cell(b: &RecordBatch, c: usize, i: usize) -> Value {
    let a = b.column(c);
    if a.is_null(i) {
        return Value::Null;
    }
    match a.data_type() {
        DataType::Int64 => json!(a.as_primitive::<Int64Type>().value(i)),
        DataType::Int32 => json!(a.as_primitive::<Int32Type>().value(i)),
        DataType::UInt8 => json!(a.as_primitive::<UInt8Type>().value(i)),
        DataType::Boolean => json!(a.as_boolean().value(i)),
        DataType::Utf8 => json!(a.as_string::<i32>().value(i)),
        DataType::Dictionary(_, _) => match a.as_dictionary_opt::<Int32Type>() {
            Some(d) => {
                let k = d.keys().value(i) as usize;
                match d.values().as_string_opt::<i32>() {
                    Some(v) => json!(v.value(k)),
                    None => Value::Null,
                }
            }
            None => Value::Null,
        },
        _ => Value::Null,
    }
}

/// Every column of event `id` as a JSON object, None when there is no such event.
pub fn raw_event(view: &TraceView, id: i64) -> Result<Option<Map<String, Value>>, StoreError> {
    if id < 0 {
        return Ok(None);
    }
    let Some(sel) = view.events.select_row(id as u64) else {
        return Ok(None);
    };
    for b in view.events.read(&sel, &[])? {
        if b.num_rows() == 0 {
            continue;
        }
        let mut m = Map::new();
        for (c, f) in b.schema().fields().iter().enumerate() {
            m.insert(f.name().clone(), cell(&b, c, 0));
        }
        return Ok(Some(m));
    }
    Ok(None)
}

/// The short form of an event (as a state, with its name).
fn short(view: &TraceView, m: &Map<String, Value>) -> Value {
    let name = m.get(ev::FUNC).and_then(|v| v.as_str()).unwrap_or("");
    let func = view.func_id(name);
    let process = m.get(ev::PROCESS).and_then(|v| v.as_i64()).unwrap_or(-1) as i32;
    let thread = m.get(ev::THREAD).and_then(|v| v.as_i64()).unwrap_or(0) as i32;
    json!({
        "id": m.get(ev::ID),
        "row": view.display_row(process, thread),
        "start": m.get(ev::START_NS),
        "dur": m.get(ev::DURATION_NS),
        "depth": m.get(ev::DEPTH),
        "func": func,
        "name": name,
        "layer": m.get(ev::LAYER),
    })
}

/// The details answer for event `id`, None when there is no such event.
pub fn event(view: &TraceView, id: i64) -> Result<Option<Value>, StoreError> {
    let Some(mut m) = raw_event(view, id)? else {
        return Ok(None);
    };
    let get = |k: &str| m.get(k).and_then(|v| v.as_i64());
    let (start, dur) = (
        get(ev::START_NS).unwrap_or(0),
        get(ev::DURATION_NS).unwrap_or(0),
    );
    let (rank, process, thread) = (
        get(ev::RANK).unwrap_or(-1) as i32,
        get(ev::PROCESS).unwrap_or(-1) as i32,
        get(ev::THREAD).unwrap_or(0) as i32,
    );
    let file_id = get(ev::FILE_ID).map(|f| f as i32);
    let name = m
        .get(ev::FUNC)
        .and_then(|v| v.as_str())
        .unwrap_or("")
        .to_string();

    let parent = match get(ev::PARENT) {
        Some(p) => raw_event(view, p)?.map(|pm| short(view, &pm)),
        None => None,
    };
    let (children, total) = children(view, id, rank, start, dur)?;
    let hints = hints(view, process, rank, file_id, start);
    let message = view
        .messages
        .iter()
        .find(|x| x.send_id == id || x.recv_id == id)
        .map(|x| {
            json!({"from_row": x.from_row, "to_row": x.to_row, "send": x.send, "recv": x.recv,
                   "bytes": x.bytes, "send_id": x.send_id, "recv_id": x.recv_id,
                   "peer_event": if x.send_id == id { x.recv_id } else { x.send_id }})
        });

    m.insert("func_id".into(), json!(view.func_id(&name)));
    m.insert("name".into(), json!(name));
    m.insert("end_ns".into(), json!(start + dur));
    m.insert(
        "file".into(),
        file_id
            .and_then(|f| view.trace.file_path(f))
            .map_or(Value::Null, |p| json!(p)),
    );
    m.insert("row".into(), json!(view.display_row(process, thread)));
    // The parent's id becomes its short form.
    m.insert(ev::PARENT.into(), parent.unwrap_or(Value::Null));
    m.insert("children".into(), Value::Array(children));
    m.insert("children_total".into(), json!(total));
    m.insert("hints".into(), Value::Array(hints));
    m.insert("message".into(), message.unwrap_or(Value::Null));
    Ok(Some(Value::Object(m)))
}

/// The calls whose parent is `id` (they follow it in its rank, inside its time span).
fn children(
    view: &TraceView,
    id: i64,
    rank: i32,
    start: i64,
    dur: i64,
) -> Result<(Vec<Value>, u64), StoreError> {
    let preds = [
        Pred::range(ev::RANK, rank as i64, rank as i64),
        Pred::range(ev::START_NS, start, start.saturating_add(dur)),
    ];
    let cols = CallColumns::names_with(&[ev::ID, ev::PARENT, ev::LAYER]);
    let mut out = Vec::new();
    let mut total = 0u64;
    for sel in view.events.select(&preds) {
        for b in view.events.read(&sel, &cols)? {
            let c = view.events.columns(&b);
            let (cid, parent, layer) = (c.int(ev::ID)?, c.int(ev::PARENT)?, c.str(ev::LAYER)?);
            let CallColumns {
                process,
                thread,
                start: s,
                dur: d,
                depth,
                func,
            } = CallColumns::new(&c)?;
            let fk = func_keys(view, &func);
            for i in 0..b.num_rows() {
                if parent.get(i) != Some(id) {
                    continue;
                }
                total += 1;
                if out.len() < MAX_CHILDREN {
                    out.push(json!({
                        "id": cid.value(i), "start": s.value(i), "dur": d.value(i),
                        "depth": depth.value(i),
                        "func": func.key(i).map_or(0, |k| fk[k]), "name": func.text(i),
                        "layer": layer_name(layer.text(i)),
                        "row": view.display_row(process.value(i) as i32, thread.value(i) as i32),
                    }));
                }
            }
        }
    }
    Ok((out, total))
}

/// The hints and view values in force for the event's process and file at its start: for
/// each key the latest row at or before it.
fn hints(view: &TraceView, process: i32, rank: i32, file: Option<i32>, at: i64) -> Vec<Value> {
    let Some(file) = file else {
        return Vec::new();
    };
    let mut latest: BTreeMap<&str, (&str, i64, &str)> = BTreeMap::new();
    for s in &view.settings {
        let same = s.process == process || (rank >= 0 && s.rank == rank);
        if same && s.file_id == Some(file) && s.time_ns <= at {
            let e = latest.entry(s.key.as_str()).or_insert(("", i64::MIN, ""));
            if s.time_ns >= e.1 {
                *e = (s.value.as_str(), s.time_ns, s.func.as_str());
            }
        }
    }
    latest
        .into_iter()
        .map(|(k, (v, t, f))| json!({"key": k, "value": v, "time_ns": t, "func": f}))
        .collect()
}
