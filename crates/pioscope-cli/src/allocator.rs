//! The C allocator's settings for this process. A pass over events.parquet (report, stats,
//! exports, the viewer) allocates and frees the same few MB for every batch of rows, on each of
//! its workers. glibc's defaults hand that memory back to the system between batches (the free
//! top of a heap past 128 KiB is trimmed; blocks past its moving mmap threshold are mapped
//! and unmapped each time), so the next batch faults the pages in again: 40,000-150,000 page
//! faults and 5-10 % of `report`'s CPU time on a 10M-event trace. Fixed thresholds keep
//! the batches' memory in the heaps instead (peak memory about the same: 83 MiB before, 83-88
//! MiB after, on 100M events).

/// Blocks from this size are mapped on their own (and returned when freed): well above a
/// pass's batches (0.4 MB of rows at 2,048 rows) and the decoder's buffers. (It was set for the
/// column chunks of a row group, about 6 MB per million events, when they were read into the
/// heap: at 4 MB they were mapped and faulted in afresh for every row group. They are mapped
/// from the file now, `store/chunk_bytes.rs`.)
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MMAP_THRESHOLD: libc::c_int = 32 << 20;

/// Free memory at the top of a heap is given back past this size: a few batches' worth.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const TRIM_THRESHOLD: libc::c_int = 64 << 20;

/// Sets the thresholds above. Call it once, first thing, before the threads start.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn keep_batch_memory() {
    // SAFETY: mallopt only changes two of malloc's parameters; it is called before any other
    // thread exists. A refusal (return 0) leaves the defaults: slower, not wrong.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
        libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD);
    }
}

/// Other C libraries keep their own settings.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn keep_batch_memory() {}
