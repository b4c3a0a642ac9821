//! Point-to-point completions at merge: which records of a rank complete a point-to-point
//! call, so that they carry its peer, tag and communicator (the matching of sends with
//! receives over the finished events table is `store::matching`).

use std::collections::HashSet;

use crate::raw::format::flags;
use crate::store::matching::{ids, is_p2p_id};

use super::{Row, NONE};

/// Indices of the rows (of one rank, as merge holds them) that complete a point-to-point call:
/// the `tracer_complete` of an Isend/Issend/Irecv request (same process and request id) and the
/// receive half of an `MPI_Sendrecv` (its child, without a request). Their raw offset is
/// `peer << 32 | tag` like the calls', which merge stores in `peer` and `tag`.
pub(super) fn point_to_point_completions(rows: &[Row]) -> HashSet<u32> {
    let starts: HashSet<(u32, u64)> = rows
        .iter()
        .filter(|r| r.flags & flags::NONBLOCKING != 0 && r.link != 0 && is_p2p_id(r.func))
        .map(|r| (r.process, r.link))
        .collect();
    rows.iter()
        .enumerate()
        .filter(|(_, r)| {
            r.func == ids::TRACER_COMPLETE
                && r.flags & flags::COMPLETION != 0
                && if r.link != 0 {
                    starts.contains(&(r.process, r.link))
                } else {
                    r.parent != NONE && rows[r.parent as usize].func == ids::SENDRECV
                }
        })
        .map(|(i, _)| i as u32)
        .collect()
}
