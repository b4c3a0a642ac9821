//! messages.parquet (matched MPI messages), read by `Trace::messages`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pioscope_trace::store::messages::MESSAGES_FILE;
use pioscope_trace::store::Trace;

fuzz_target!(|data: &[u8]| {
    let dir = pioscope_fuzz::store_with(MESSAGES_FILE, data);
    if let Ok(trace) = Trace::open(&dir) {
        let _ = trace.messages();
    }
});
