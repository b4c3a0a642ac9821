//! `meta.json` of a trace store: `Trace::open` parses it, then the container model and the
//! viewer (which builds its index from what meta.json claims) use it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pioscope_trace::store::{Containers, Trace, META_FILE};

fuzz_target!(|data: &[u8]| {
    let dir = pioscope_fuzz::store_with(META_FILE, data);
    let Ok(trace) = Trace::open(&dir) else {
        return;
    };
    let containers = Containers::new(&trace.meta);
    let _ = containers.rows();
    pioscope_fuzz::view_store(&dir);
});
