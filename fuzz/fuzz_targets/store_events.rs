//! events.parquet: the streaming reader, every row decoded, whole and by rank and by row
//! range (the cursors of the exports' k-way merge).
#![no_main]

use libfuzzer_sys::fuzz_target;
use pioscope_trace::store::{EventBatches, EventFilter, Trace, EVENTS_FILE};

fn drain(batches: EventBatches) {
    for batch in batches {
        let Ok(batch) = batch else {
            return;
        };
        for event in batch.iter() {
            std::hint::black_box(format!("{event:?}"));
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let dir = pioscope_fuzz::store_with(EVENTS_FILE, data);
    let Ok(trace) = Trace::open(&dir) else {
        return;
    };
    if let Ok(all) = trace.events() {
        drain(all);
    }
    if let Ok(rank) = trace.events_where(EventFilter { rank: Some(0) }) {
        drain(rank);
    }
    if let Ok(rows) = EventBatches::open_rows(&dir.join(EVENTS_FILE), 3, 10, 4) {
        drain(rows);
    }
});
