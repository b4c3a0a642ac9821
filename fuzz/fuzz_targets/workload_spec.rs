//! `--workload KIND:key=value,...`: parsed and generated into per-rank programs on the
//! `local` preset (counts beyond the call budget are refused, not built).
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use pioscope_sim::model::{load, System};
use pioscope_sim::mpiio::workload;

fn local() -> &'static System {
    static LOCAL: OnceLock<System> = OnceLock::new();
    LOCAL.get_or_init(|| load::system("local", &[]).expect("the local preset loads"))
}

fuzz_target!(|data: &[u8]| {
    if let Ok(spec) = std::str::from_utf8(data) {
        let _ = workload::generate(spec, local());
    }
});
