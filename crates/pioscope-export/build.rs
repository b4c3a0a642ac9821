//! Links libotf2 (Debian package libotf2-trace-dev; `scripts/install-deps.sh` installs it).
//! `otf2-config --ldflags` names its directory when the library is not in the default path.
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if let Ok(out) = Command::new("otf2-config").arg("--ldflags").output() {
        for flag in String::from_utf8_lossy(&out.stdout).split_whitespace() {
            if let Some(dir) = flag.strip_prefix("-L") {
                println!("cargo:rustc-link-search=native={dir}");
            }
        }
    }
    println!("cargo:rustc-link-lib=otf2");
}
