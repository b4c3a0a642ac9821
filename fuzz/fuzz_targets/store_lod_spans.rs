//! lod_spans.parquet, the long calls the viewer's index keeps apart: read when the viewer
//! opens the store and by every window query.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pioscope_trace::store::lod::LOD_SPANS_FILE;

fuzz_target!(|data: &[u8]| {
    pioscope_fuzz::view_store(&pioscope_fuzz::store_with(LOD_SPANS_FILE, data));
});
