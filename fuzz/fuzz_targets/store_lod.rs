//! lod.parquet, the viewer's level-of-detail buckets: read (or found damaged and rebuilt)
//! when the viewer opens the store, then queried window by window.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pioscope_trace::store::lod::LOD_FILE;

fuzz_target!(|data: &[u8]| {
    pioscope_fuzz::view_store(&pioscope_fuzz::store_with(LOD_FILE, data));
});
