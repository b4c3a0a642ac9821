//! Every export of the checked-in HPIO collective trace (tests/data), read back: the Chrome JSON
//! parses and pairs, the CSV has a row per event, pj_dump and otf2-print (when installed) load
//! the Pajé file and the OTF2 archive with the expected state and Enter counts.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use pioscope_export::{export, Format, Options};
use pioscope_trace::store::Trace;
use pioscope_trace::{colours, functions};

fn trace() -> Trace {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/hpio-collective");
    Trace::open(&dir).expect("checked-in trace")
}

fn out(dir: &tempfile::TempDir, name: &str) -> PathBuf {
    dir.path().join(name)
}

fn tool(cmd: &str, arg: &Path) -> Option<std::process::Output> {
    Command::new(cmd).arg(arg).output().ok()
}

#[test]
fn chrome_json_pairs_and_counts() {
    let t = trace();
    let dir = tempfile::tempdir().expect("tmp");
    let path = out(&dir, "t.json");
    let s = export(&t, Format::Chrome, &path, &Options::default(), &mut |_| {}).expect("export");
    assert_eq!(s.events, t.meta.counts.events);
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("read")).expect("json");
    let items = doc["traceEvents"].as_array().expect("array");
    let mut by_ph: HashMap<&str, usize> = HashMap::new();
    let mut pairs: HashMap<String, i32> = HashMap::new();
    for e in items {
        let ph = e["ph"].as_str().expect("ph");
        *by_ph.entry(ph).or_default() += 1;
        match ph {
            "b" | "s" => *pairs.entry(format!("{}{}", ph, e["id"])).or_default() += 1,
            "e" => *pairs.entry(format!("b{}", e["id"])).or_default() -= 1,
            "f" => *pairs.entry(format!("s{}", e["id"])).or_default() -= 1,
            _ => {}
        }
    }
    assert_eq!(by_ph["X"] as u64, t.meta.counts.events);
    assert!(
        pairs.values().all(|&v| v == 0),
        "unpaired async or flow ids"
    );
    assert_eq!(by_ph["s"] as u64, s.messages);
    assert!(s.messages > 0 && by_ph["C"] > 0 && by_ph["b"] > 0);
}

#[test]
fn csv_has_a_row_per_event() {
    let t = trace();
    let dir = tempfile::tempdir().expect("tmp");
    let path = out(&dir, "t.csv");
    export(&t, Format::Csv, &path, &Options::default(), &mut |_| {}).expect("export");
    let text = std::fs::read_to_string(&path).expect("read");
    assert_eq!(text.lines().count() as u64, t.meta.counts.events + 1);
    assert!(text.starts_with("id,rank,process,thread,start_ns,"));
}

#[test]
fn paje_loads_in_pj_dump() {
    let t = trace();
    let dir = tempfile::tempdir().expect("tmp");
    let path = out(&dir, "t.paje");
    let s = export(&t, Format::Paje, &path, &Options::default(), &mut |_| {}).expect("export");
    let Some(o) = tool("pj_dump", &path) else {
        eprintln!("pj_dump not installed: skipped (scripts/install-deps.sh installs pajeng)");
        return;
    };
    assert!(o.status.success());
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let text = String::from_utf8_lossy(&o.stdout);
    let states = text.lines().filter(|l| l.starts_with("State,")).count();
    let links = text.lines().filter(|l| l.starts_with("Link,")).count();
    assert_eq!(states as u64, t.meta.counts.events);
    assert_eq!(links as u64, s.messages);
}

/// Every function's entity value carries the colour the pages draw it with: the one table of
/// `pioscope_trace::colours` (issue 11: the exports once had a table of their own).
#[test]
fn paje_colours_are_the_pages() {
    let t = trace();
    let dir = tempfile::tempdir().expect("tmp");
    let path = out(&dir, "t.paje");
    export(&t, Format::Paje, &path, &Options::default(), &mut |_| {}).expect("export");
    let text = std::fs::read_to_string(&path).expect("read");
    let mut checked = 0;
    // `4 <alias> <type> "<function>" "<r> <g> <b>"`
    for line in text.lines().filter(|l| l.starts_with("4 ")) {
        let quoted: Vec<&str> = line.split('"').collect();
        let (name, rgb) = (quoted[1], quoted[3]);
        let drawn: Vec<f32> = rgb.split(' ').map(|x| x.parse().expect("number")).collect();
        let layer = functions::by_name(name)
            .expect("a functions.def name")
            .layer;
        let (r, g, b) = colours::function_colour(layer, name).rgb();
        for (d, want) in drawn.iter().zip([r, g, b]) {
            assert!(
                (d - want).abs() <= 0.005,
                "{name}: {rgb} is not {:?}",
                (r, g, b)
            );
        }
        checked += 1;
    }
    assert!(checked > 100, "{checked} entity values");
}

#[test]
fn otf2_reads_back() {
    let t = trace();
    let dir = tempfile::tempdir().expect("tmp");
    let path = out(&dir, "t.otf2");
    let s = export(&t, Format::Otf2, &path, &Options::default(), &mut |_| {}).expect("export");
    let Some(o) = tool("otf2-print", &path.join("traces.otf2")) else {
        eprintln!("otf2-print not installed: skipped (Debian otf2-tools)");
        return;
    };
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    let count = |k: &str| text.lines().filter(|l| l.starts_with(k)).count() as u64;
    assert_eq!(count("ENTER "), t.meta.counts.events);
    assert_eq!(count("LEAVE "), t.meta.counts.events);
    assert_eq!(count("MPI_SEND "), s.messages);
    assert_eq!(count("MPI_RECV "), s.messages);
}
