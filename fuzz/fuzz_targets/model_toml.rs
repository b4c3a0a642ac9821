//! A system model file (`--system FILE`): TOML text checked field by field by
//! `model::load::from_text`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pioscope_sim::model::load;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = load::from_text("fuzz.toml", text, &[]);
    }
});
