//! settings.parquet (hints and file views), read by `Trace::settings`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pioscope_trace::store::{Trace, SETTINGS_FILE};

fuzz_target!(|data: &[u8]| {
    let dir = pioscope_fuzz::store_with(SETTINGS_FILE, data);
    if let Ok(trace) = Trace::open(&dir) {
        let _ = trace.settings();
    }
});
