//! Inputs the fuzz targets (fuzz/, docs/FUZZING.md) found failing, kept in
//! tests/data/fuzz-regressions/ and read here through the public readers (issue 12).

use std::path::{Path, PathBuf};

use pioscope_trace::store::{StoreError, Trace, EVENTS_FILE};

fn repo_file(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
}

/// The fuzzers' base store (posix_basic traced) with `file` replaced by a regression input.
fn store_with(file: &str, input: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().expect("tempdir");
    for entry in std::fs::read_dir(repo_file("fuzz/store/posix-basic")).expect("base store") {
        let entry = entry.expect("entry");
        std::fs::copy(entry.path(), tmp.path().join(entry.file_name())).expect("copy");
    }
    let bytes = std::fs::read(repo_file("tests/data/fuzz-regressions").join(input)).expect("input");
    std::fs::write(tmp.path().join(file), bytes).expect("write");
    tmp
}

#[test]
fn events_whose_definition_levels_overrun_are_a_damaged_table_error() {
    // store_events: parquet-rs asserted ("offset + len out of bounds") decoding this page's
    // definition levels, aborting every reader of the store.
    let store = store_with(EVENTS_FILE, "events-definition-levels-overrun.parquet");
    let trace = Trace::open(store.path()).expect("meta.json and files.parquet are intact");
    let results: Vec<_> = trace.events().expect("footer").collect();
    let errors: Vec<&StoreError> = results.iter().filter_map(|r| r.as_ref().err()).collect();
    assert_eq!(errors.len(), 1, "the stream ends at its error");
    let StoreError::Damaged { path, detail } = errors[0] else {
        panic!("expected a damaged table, got {}", errors[0]);
    };
    assert!(path.ends_with(EVENTS_FILE), "{}", path.display());
    assert_eq!(detail, "offset + len out of bounds");
}
