//! Embeds every file of the top-level viewer/ directory (the page, written by its own owner)
//! into the binary: generates `assets.rs` with one `include_bytes!` per file, so a new file
//! needs no change here. A missing viewer/ gives an empty list (the server then says so).

use std::env;
use std::fs;
use std::path::{Path, PathBuf};

fn collect(root: &Path, dir: &Path, out: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(|e| e.ok()).collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let path = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        if path.is_dir() {
            collect(root, &path, out);
        } else if let Ok(rel) = path.strip_prefix(root) {
            let rel = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            out.push((rel, path));
        }
    }
}

fn main() {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    let viewer = manifest.join("../../viewer");
    // Cargo scans a directory given here for any change inside it.
    println!("cargo:rerun-if-changed={}", viewer.display());
    println!("cargo:rerun-if-changed=build.rs");
    let mut files = Vec::new();
    if let Ok(root) = viewer.canonicalize() {
        collect(&root, &root, &mut files);
    }
    let mut code =
        String::from("/// Every file of viewer/: (path relative to viewer/, contents).\n");
    code.push_str("pub static FILES: &[(&str, &[u8])] = &[\n");
    for (rel, path) in &files {
        code.push_str(&format!(
            "    ({:?}, include_bytes!({:?})),\n",
            rel,
            path.display().to_string()
        ));
    }
    code.push_str("];\n");
    let out = PathBuf::from(env::var("OUT_DIR").unwrap_or_default()).join("assets.rs");
    if let Err(e) = fs::write(&out, code) {
        panic!("writing {}: {e}", out.display());
    }
}
