//! Point-to-point completions at merge: which records of a rank complete a point-to-point
//! call, so that they carry its peer, tag and communicator (the matching of sends with
//! receives over the finished events table is `store::matching`).

use std::collections::HashSet;

use crate::raw::format::flags;
use crate::store::matching::{ids, is_p2p_id};

use super::reorder::Row;

/// Decides, record by record in store order, which records complete a point-to-point call:
/// the `tracer_complete` of an Isend/Issend/Irecv request (same process and request id, the
/// start coming first) and the receive half of an `MPI_Sendrecv` (its child, without a
/// request). Their raw offset is `peer << 32 | tag` like the calls', which merge stores in
/// `peer` and `tag`. Only the requests started and not yet completed are held.
#[derive(Debug, Default)]
pub(super) struct PointToPointCompletions {
    /// (process, request id) of started requests not completed yet.
    open: HashSet<(u32, u64)>,
}

impl PointToPointCompletions {
    /// Takes the next stored record, with its stored parent's function id; true if it
    /// completes a point-to-point call.
    pub(super) fn observe(&mut self, row: &Row, parent_func: Option<u16>) -> bool {
        let (process, e) = (row.process, &row.raw);
        if e.flags & flags::NONBLOCKING != 0 && e.link != 0 && is_p2p_id(e.func) {
            self.open.insert((process, e.link));
            return false;
        }
        if e.func != ids::TRACER_COMPLETE || e.flags & flags::COMPLETION == 0 {
            return false;
        }
        if e.link != 0 {
            self.open.remove(&(process, e.link))
        } else {
            parent_func == Some(ids::SENDRECV)
        }
    }
}
