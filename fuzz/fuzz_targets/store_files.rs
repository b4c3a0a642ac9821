//! files.parquet, read by `Trace::open` into the file table every reader looks paths up in.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pioscope_trace::store::{Trace, FILES_FILE};

fuzz_target!(|data: &[u8]| {
    let dir = pioscope_fuzz::store_with(FILES_FILE, data);
    if let Ok(trace) = Trace::open(&dir) {
        for id in -1..4 {
            let _ = trace.file_path(id);
        }
    }
});
