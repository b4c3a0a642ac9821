//! `--set KEY=VALUE` overrides (one per input line) over the `pvfs2-2009` preset (the
//! smallest: parsing the preset is most of each run).
#![no_main]

use libfuzzer_sys::fuzz_target;
use pioscope_sim::model::load;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let sets: Vec<String> = text.lines().map(str::to_string).collect();
        let _ = load::system("pvfs2-2009", &sets);
    }
});
