//! Proves src/raw/format.rs mirrors runtime/src/raw_format.h: compiles
//! runtime/tests/layout_dump.c with the system C compiler, runs it, and compares every struct
//! size, field offset and size, and constant with the Rust tables.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

use pioscope_trace::raw::format::{CONSTANTS, LAYOUT, RAW_MAGIC, RAW_SUFFIX};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn dump() -> String {
    let dir = tempfile::tempdir().expect("temp dir");
    let exe = dir.path().join("layout_dump");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let status = Command::new(&cc)
        .arg("-std=c11")
        .arg("-Wall")
        .arg("-I")
        .arg(repo().join("runtime/src"))
        .arg(repo().join("runtime/tests/layout_dump.c"))
        .arg("-o")
        .arg(&exe)
        .status()
        .unwrap_or_else(|e| panic!("cannot run the C compiler {cc:?}: {e}"));
    assert!(status.success(), "compiling layout_dump.c failed");
    let out = Command::new(&exe).output().expect("run layout_dump");
    assert!(out.status.success());
    String::from_utf8(out.stdout).expect("utf-8")
}

#[test]
fn rust_mirror_matches_the_c_header() {
    let text = dump();
    let mut structs = BTreeMap::new();
    let mut fields = BTreeMap::new();
    let mut consts = BTreeMap::new();
    let (mut magic, mut suffix) = (String::new(), String::new());
    for line in text.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        match w[0] {
            "struct" => {
                structs.insert(w[1].to_string(), w[2].parse::<usize>().expect("size"));
            }
            "field" => {
                let v = (
                    w[3].parse::<usize>().expect("offset"),
                    w[4].parse::<usize>().expect("size"),
                );
                fields.insert((w[1].to_string(), w[2].to_string()), v);
            }
            "const" => {
                consts.insert(w[1].to_string(), w[2].parse::<u64>().expect("value"));
            }
            "magic" => magic = w[1].to_string(),
            "suffix" => suffix = w[1].to_string(),
            other => panic!("unexpected line kind {other}"),
        }
    }

    assert_eq!(structs.len(), LAYOUT.len(), "struct count");
    let mut rust_fields = 0;
    for (name, size, fs) in LAYOUT {
        assert_eq!(structs.get(*name), Some(size), "sizeof({name})");
        let mut covered = 0;
        for (field, f) in fs.iter() {
            let c = fields.get(&(name.to_string(), field.to_string()));
            assert_eq!(
                c,
                Some(&(f.offset, f.size)),
                "{name}.{field}: C says {c:?}, Rust says {f:?}"
            );
            covered += f.size;
            rust_fields += 1;
        }
        // No padding and no field the mirror lacks: the fields tile the struct.
        assert_eq!(
            covered, *size,
            "{name}: fields cover {covered} of {size} bytes"
        );
    }
    assert_eq!(rust_fields, fields.len(), "field count");

    assert_eq!(consts.len(), CONSTANTS.len(), "constant count");
    for (name, value) in CONSTANTS {
        assert_eq!(consts.get(*name), Some(value), "{name}");
    }
    assert_eq!(magic.as_bytes(), RAW_MAGIC);
    assert_eq!(suffix, RAW_SUFFIX);
}
