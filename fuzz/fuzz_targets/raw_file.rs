//! The raw-file decoder (`pioscope_trace::raw::decode_raw`) on any bytes: a damaged file is
//! an error or a `Damage` note, never a panic, and nothing is allocated beyond what the
//! bytes hold.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use pioscope_trace::raw::decode_raw;

fuzz_target!(|data: &[u8]| {
    if let Ok(raw) = decode_raw(Path::new("fuzz.praw"), data, &mut |_| true) {
        // The accessors merge uses on every file.
        let _ = raw.partial_reason();
        let _ = raw.job_fact("rank");
        let _ = raw.file_name();
    }
});
