//! MPI message matching: every point-to-point send paired with its receive, for
//! messages.parquet (columns in docs/FORMAT.md "messages.parquet").
//!
//! MPI's non-overtaking rule makes this a matter of counting: two messages from one sender to
//! one receiver on one communicator with one tag are received in the order they were sent, and
//! a receive matches the first message its (source, tag) selects. Once every receive knows its
//! actual source and tag (MPI_ANY_SOURCE / MPI_ANY_TAG resolved from the status, which the
//! runtime records: on `MPI_Recv` itself, on the `tracer_complete` child of the Wait/Test that
//! completed an `MPI_Irecv`, on the `tracer_complete` child of `MPI_Sendrecv`), the k-th send of
//! a key (from, to, comm, tag) in posting order is the k-th receive of that key in posting
//! order. Posting order is the start of the call that posted the operation: the Irecv, not the
//! Wait that completed it.
//!
//! Communicator descriptions other than "world" contain the communicator's handle
//! ("comm-<handle> size=n"), which MPI does not promise to be equal on every rank. So matching
//! runs twice: by (from, to, comm, tag), then the leftovers by (from, to, tag).
//!
//! The matcher sees events one at a time in store order (rank, then time) and keeps only the
//! point-to-point records, so memory is bounded by the messages, not the trace.

use std::collections::HashMap;

use crate::functions::{self, Layer};
use crate::raw::format::flags;

use super::messages::MessageRow;
use super::Event;

/// Function ids, from functions.def.
pub(crate) mod ids {
    pub const SENDRECV: u16 = 415;
    pub const TRACER_COMPLETE: u16 = 600;
}

/// The function table's own copy of a name (no allocation per record); unknown names, which
/// no matching call has, become "?".
fn static_name(name: &str) -> &'static str {
    functions::by_name(name).map_or("?", |f| f.name)
}

/// True for the MPI point-to-point calls (Send family, Recv, Sendrecv, Isend, Issend, Irecv).
pub(crate) fn is_p2p_id(id: u16) -> bool {
    functions::by_id(id).is_some_and(|f| functions::is_point_to_point(f.name))
}

/// A send waiting for its receive.
#[derive(Clone, Debug)]
struct Send {
    id: i64,
    process: i32,
    thread: i32,
    start_ns: i64,
    func: &'static str,
    comm: u32,
}

/// A receive with its source and tag resolved.
#[derive(Clone, Debug)]
struct Recv {
    /// The event that delivered the data (Recv, or the completion).
    id: i64,
    /// The call that posted it (Recv, Irecv, Sendrecv).
    post_id: i64,
    /// When it was posted: the order receives match in.
    post_ns: i64,
    process: i32,
    thread: i32,
    /// When the data was there: end of the Recv, time of the completion.
    done_ns: i64,
    bytes: i64,
    func: &'static str,
}

/// An Irecv (or Sendrecv) whose completion has not been seen yet.
#[derive(Clone, Debug)]
struct Posted {
    id: i64,
    start_ns: i64,
    thread: i32,
    peer: i32,
    tag: i32,
    comm: u32,
    func: &'static str,
}

/// (from rank, to rank, tag), and the communicator in the first round.
type Key = (i32, i32, i32);

/// What matching found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MatchResult {
    /// Matched messages, sorted by send time (then send id).
    pub messages: Vec<MessageRow>,
    /// Sends no receive was found for.
    pub unmatched_sends: u64,
    /// Receives no send was found for (including Irecvs that never completed in the trace).
    pub unmatched_receives: u64,
}

/// Pairs sends with receives from a stream of events in store order (see the module note).
#[derive(Default)]
pub struct Matcher {
    /// Per (from, to, tag, comm): sends and receives in arrival order.
    sends: HashMap<(Key, u32), Vec<Send>>,
    recvs: HashMap<(Key, u32), Vec<Recv>>,
    /// Communicator descriptions, interned: keys and rows hold their index (a few per trace).
    comms: Vec<String>,
    comm_ids: HashMap<String, u32>,
    /// Irecv starts by (process, request id).
    irecvs: HashMap<(i32, i64), Posted>,
    /// Sendrecv calls by event id, until their receive half is seen.
    sendrecvs: HashMap<i64, Posted>,
    /// Receives whose source cannot be known (failed or never completed).
    lost_receives: u64,
}

impl Matcher {
    /// A matcher with nothing seen.
    pub fn new() -> Self {
        Self::default()
    }

    fn comm_id(&mut self, comm: Option<&str>) -> u32 {
        let c = comm.unwrap_or("");
        if let Some(&i) = self.comm_ids.get(c) {
            return i;
        }
        let i = self.comms.len() as u32;
        self.comms.push(c.to_string());
        self.comm_ids.insert(c.to_string(), i);
        i
    }

    /// Looks at one event; events must come in store order (a call before its completion).
    pub fn observe(&mut self, e: &Event<'_>) {
        match e.layer {
            Layer::Mpi => self.observe_call(e),
            Layer::Tracer if e.flags & flags::COMPLETION != 0 => self.observe_completion(e),
            _ => {}
        }
    }

    fn observe_call(&mut self, e: &Event<'_>) {
        let is_send = functions::is_send(e.func);
        let comm = self.comm_id(e.comm);
        let func = static_name(e.func);
        let mpi = e.mpi.get();
        if is_send {
            // A failed call or MPI_PROC_NULL (no rank: -1) sends nothing.
            if let (0, Some(peer), Some(tag)) = (e.error, mpi.peer, mpi.tag) {
                if peer >= 0 && e.rank >= 0 {
                    let key = ((e.rank, peer, tag), comm);
                    self.sends.entry(key).or_default().push(Send {
                        id: e.id,
                        process: e.process,
                        thread: e.thread,
                        start_ns: e.start_ns,
                        func,
                        comm,
                    });
                }
            }
        }
        // The MPI-4 large-count forms (MPI_Recv_c, ...) match as their int twins.
        match functions::int_count_form(e.func) {
            "MPI_Recv" => {
                if e.error != 0 {
                    return;
                }
                match (mpi.peer, mpi.tag) {
                    (Some(peer), Some(tag)) if peer >= 0 => {
                        self.push_recv(
                            (peer, e.rank, tag),
                            comm,
                            Recv {
                                id: e.id,
                                post_id: e.id,
                                post_ns: e.start_ns,
                                process: e.process,
                                thread: e.thread,
                                done_ns: e.end_ns(),
                                bytes: e.result.max(0),
                                func,
                            },
                        );
                    }
                    // MPI_PROC_NULL: no message.
                    _ => {}
                }
            }
            "MPI_Irecv" | "MPI_Sendrecv" => {
                let posted = Posted {
                    id: e.id,
                    start_ns: e.start_ns,
                    thread: e.thread,
                    peer: mpi.peer.unwrap_or(-1),
                    tag: mpi.tag.unwrap_or(-1),
                    comm,
                    func,
                };
                if functions::int_count_form(e.func) == "MPI_Sendrecv" {
                    if e.error == 0 {
                        self.sendrecvs.insert(e.id, posted);
                    }
                } else if let (0, Some(req)) = (e.error, mpi.request) {
                    self.irecvs.insert((e.process, req), posted);
                }
            }
            _ => {}
        }
    }

    fn observe_completion(&mut self, e: &Event<'_>) {
        let mpi = e.mpi.get();
        let posted = match mpi.request {
            Some(req) => self.irecvs.remove(&(e.process, req)),
            None => e.parent.and_then(|p| self.sendrecvs.remove(&p)),
        };
        let Some(posted) = posted else {
            return; // an Isend's or an MPI-IO request's completion
        };
        if e.error != 0 {
            self.lost_receives += 1;
            return;
        }
        // Traces merged before completions carried peer and tag: fall back on the Irecv's own
        // source and tag when they were not wildcards (a Sendrecv's receive side is unknown).
        let from_start = (functions::int_count_form(posted.func) == "MPI_Irecv"
            && posted.peer >= 0
            && posted.tag >= 0)
            .then_some((posted.peer, posted.tag));
        let (peer, tag) = match (mpi.peer, mpi.tag) {
            (Some(p), Some(t)) => (p, t),
            _ => match from_start {
                Some(pt) => pt,
                None => {
                    self.lost_receives += 1;
                    return;
                }
            },
        };
        if peer < 0 {
            return; // MPI_PROC_NULL
        }
        let comm = match e.comm {
            Some(c) => self.comm_id(Some(c)),
            None => posted.comm,
        };
        self.push_recv(
            (peer, e.rank, tag),
            comm,
            Recv {
                id: e.id,
                post_id: posted.id,
                post_ns: posted.start_ns,
                process: e.process,
                thread: posted.thread,
                done_ns: e.end_ns(),
                bytes: e.size,
                func: posted.func,
            },
        );
    }

    fn push_recv(&mut self, key: Key, comm: u32, r: Recv) {
        self.recvs.entry((key, comm)).or_default().push(r);
    }

    /// Pairs everything seen.
    pub fn finish(self) -> MatchResult {
        let Matcher {
            sends,
            recvs,
            irecvs,
            sendrecvs: _,
            lost_receives,
            comms,
            comm_ids: _,
        } = self;
        let mut messages = Vec::new();
        // Round 1: by (key, comm). Leftovers go to round 2 keyed without the communicator.
        let mut left_sends: HashMap<Key, Vec<Send>> = HashMap::new();
        let mut left_recvs: HashMap<Key, Vec<Recv>> = HashMap::new();
        let mut recvs = recvs;
        for ((key, comm), s) in sends {
            let r = recvs.remove(&(key, comm)).unwrap_or_default();
            let (ls, lr) = pair(key, s, r, &comms, &mut messages);
            left_sends.entry(key).or_default().extend(ls);
            left_recvs.entry(key).or_default().extend(lr);
        }
        for ((key, _), r) in recvs {
            left_recvs.entry(key).or_default().extend(r);
        }
        let mut unmatched_sends = 0u64;
        let mut unmatched_receives = lost_receives + irecvs.len() as u64;
        for (key, s) in left_sends {
            let r = left_recvs.remove(&key).unwrap_or_default();
            let (ls, lr) = pair(key, s, r, &comms, &mut messages);
            unmatched_sends += ls.len() as u64;
            unmatched_receives += lr.len() as u64;
        }
        unmatched_receives += left_recvs.values().map(|v| v.len() as u64).sum::<u64>();
        messages.sort_by_key(|m| (m.send_ns, m.send_id));
        MatchResult {
            messages,
            unmatched_sends,
            unmatched_receives,
        }
    }
}

/// Pairs the sends and receives of one key in posting order; returns what is left of each.
fn pair(
    key: Key,
    mut sends: Vec<Send>,
    mut recvs: Vec<Recv>,
    comms: &[String],
    out: &mut Vec<MessageRow>,
) -> (Vec<Send>, Vec<Recv>) {
    sends.sort_by_key(|s| (s.start_ns, s.id));
    recvs.sort_by_key(|r| (r.post_ns, r.post_id, r.id));
    let n = sends.len().min(recvs.len());
    let rest_recvs = recvs.split_off(n);
    let rest_sends = sends.split_off(n);
    for (s, r) in sends.into_iter().zip(recvs) {
        out.push(MessageRow {
            send_id: s.id,
            recv_id: r.id,
            recv_post_id: r.post_id,
            from_rank: key.0,
            to_rank: key.1,
            send_process: s.process,
            send_thread: s.thread,
            recv_process: r.process,
            recv_thread: r.thread,
            send_ns: s.start_ns,
            recv_ns: r.done_ns,
            bytes: r.bytes,
            tag: key.2,
            comm: comms.get(s.comm as usize).cloned().unwrap_or_default(),
            send_func: s.func.to_string(),
            recv_func: r.func.to_string(),
        });
    }
    (rest_sends, rest_recvs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{MpiArgs, MpiRef};

    /// A hand-made event: rank, id, time, function, peer/tag, and the rest defaulted.
    fn ev(id: i64, rank: i32, t: i64, func: &'static str) -> Event<'static> {
        let layer = if func == "tracer_complete" {
            Layer::Tracer
        } else {
            Layer::Mpi
        };
        Event {
            id,
            rank,
            process: rank,
            size: 8,
            result: 8,
            flags: if layer == Layer::Tracer {
                flags::COMPLETION
            } else {
                0
            },
            comm: Some("world"),
            ..Event::call(layer, func, t, 10)
        }
    }

    /// `e` with the MPI columns `args`, leaked: a test's few events live as long as it.
    fn with_mpi(mut e: Event<'static>, args: MpiArgs) -> Event<'static> {
        e.mpi = MpiRef::to(Box::leak(Box::new(args)));
        e
    }

    fn p2p(e: Event<'static>, peer: i32, tag: i32) -> Event<'static> {
        let args = MpiArgs {
            peer: Some(peer),
            tag: Some(tag),
            ..e.mpi.get()
        };
        with_mpi(e, args)
    }

    fn with_request(e: Event<'static>, request: i64) -> Event<'static> {
        let args = MpiArgs {
            request: Some(request),
            ..e.mpi.get()
        };
        with_mpi(e, args)
    }

    fn run(events: &mut [Event<'static>]) -> MatchResult {
        events.sort_by_key(|e| (e.rank, e.start_ns, e.id));
        let mut m = Matcher::new();
        for e in events.iter() {
            m.observe(e);
        }
        m.finish()
    }

    fn pairs(r: &MatchResult) -> Vec<(i64, i64)> {
        let mut v: Vec<_> = r.messages.iter().map(|m| (m.send_id, m.recv_id)).collect();
        v.sort();
        v
    }

    #[test]
    fn blocking_messages_match_in_order() {
        let mut evs = vec![
            p2p(ev(1, 0, 100, "MPI_Send"), 1, 7),
            p2p(ev(2, 0, 200, "MPI_Send"), 1, 7),
            p2p(ev(3, 0, 300, "MPI_Send"), 1, 8),
            // rank 1 receives tag 8 first, then the two tag-7 messages
            p2p(ev(10, 1, 310, "MPI_Recv"), 0, 8),
            p2p(ev(11, 1, 320, "MPI_Recv"), 0, 7),
            p2p(ev(12, 1, 330, "MPI_Recv"), 0, 7),
        ];
        let r = run(&mut evs);
        assert_eq!(pairs(&r), vec![(1, 11), (2, 12), (3, 10)]);
        assert_eq!((r.unmatched_sends, r.unmatched_receives), (0, 0));
        let m = &r.messages[0];
        assert_eq!((m.from_rank, m.to_rank, m.tag, m.bytes), (0, 1, 7, 8));
        assert_eq!((m.send_ns, m.recv_ns), (100, 330));
        assert_eq!(m.comm, "world");
        // sorted by send time
        assert_eq!(
            r.messages.iter().map(|m| m.send_ns).collect::<Vec<_>>(),
            vec![100, 200, 300]
        );
    }

    #[test]
    fn large_count_forms_match_as_their_int_twins() {
        let mut evs = vec![
            p2p(ev(1, 0, 100, "MPI_Send_c"), 1, 7),
            p2p(ev(2, 0, 200, "MPI_Send"), 1, 8),
            p2p(ev(10, 1, 150, "MPI_Recv_c"), 0, 7),
            p2p(ev(11, 1, 250, "MPI_Recv"), 0, 8),
        ];
        let r = run(&mut evs);
        assert_eq!(pairs(&r), vec![(1, 10), (2, 11)]);
        assert_eq!((r.unmatched_sends, r.unmatched_receives), (0, 0));
    }

    #[test]
    fn nonblocking_receives_match_in_posting_order_not_completion_order() {
        let mut irecv_a = p2p(ev(20, 1, 100, "MPI_Irecv"), 0, 5);
        irecv_a = with_request(irecv_a, 1);
        irecv_a.flags = flags::NONBLOCKING;
        let mut irecv_b = p2p(ev(21, 1, 110, "MPI_Irecv"), 0, 5);
        irecv_b = with_request(irecv_b, 2);
        irecv_b.flags = flags::NONBLOCKING;
        // completions in the other order, carrying the actual source and tag
        let mut done_b = p2p(ev(23, 1, 500, "tracer_complete"), 0, 5);
        done_b = with_request(done_b, 2);
        done_b.duration_ns = 0;
        let mut done_a = p2p(ev(24, 1, 501, "tracer_complete"), 0, 5);
        done_a = with_request(done_a, 1);
        let mut isend = p2p(ev(2, 0, 50, "MPI_Isend"), 1, 5);
        isend = with_request(isend, 1);
        isend.flags = flags::NONBLOCKING;
        let mut isend_done = ev(3, 0, 60, "tracer_complete");
        isend_done = with_request(isend_done, 1);
        let mut evs = vec![
            p2p(ev(1, 0, 40, "MPI_Send"), 1, 5),
            isend,
            isend_done,
            irecv_a,
            irecv_b,
            done_b,
            done_a,
        ];
        let r = run(&mut evs);
        assert_eq!(pairs(&r), vec![(1, 24), (2, 23)]);
        let first = r.messages.iter().find(|m| m.send_id == 1).expect("send 1");
        assert_eq!(first.recv_post_id, 20);
        assert_eq!(first.recv_ns, 511);
        assert_eq!(first.recv_func, "MPI_Irecv");
        assert_eq!((r.unmatched_sends, r.unmatched_receives), (0, 0));
    }

    #[test]
    fn any_source_is_resolved_by_the_completion() {
        let mut irecv = p2p(ev(10, 0, 100, "MPI_Irecv"), -1, -1); // ANY_SOURCE, ANY_TAG
        irecv = with_request(irecv, 9);
        irecv.flags = flags::NONBLOCKING;
        let mut done = p2p(ev(11, 0, 300, "tracer_complete"), 2, 21);
        done = with_request(done, 9);
        let mut evs = vec![
            irecv,
            done,
            p2p(ev(12, 0, 400, "MPI_Recv"), 1, 20), // resolved ANY_SOURCE
            p2p(ev(20, 1, 50, "MPI_Send"), 0, 20),
            p2p(ev(30, 2, 60, "MPI_Send"), 0, 21),
        ];
        let r = run(&mut evs);
        assert_eq!(pairs(&r), vec![(20, 12), (30, 11)]);
    }

    #[test]
    fn sendrecv_pairs_through_its_receive_half_and_leftovers_are_counted() {
        let mut sr0 = p2p(ev(1, 0, 100, "MPI_Sendrecv"), 1, 30);
        sr0.size = 32;
        let mut half0 = p2p(ev(2, 0, 150, "tracer_complete"), 1, 30);
        half0.parent = Some(1);
        half0.size = 16;
        let mut sr1 = p2p(ev(10, 1, 100, "MPI_Sendrecv"), 0, 30);
        sr1.size = 16;
        let mut half1 = p2p(ev(11, 1, 150, "tracer_complete"), 0, 30);
        half1.parent = Some(10);
        half1.size = 32;
        let mut failed = p2p(ev(12, 1, 200, "MPI_Send"), 0, 1);
        failed.error = 1;
        let mut evs = vec![
            sr0,
            half0,
            sr1,
            half1,
            failed,
            p2p(ev(13, 1, 300, "MPI_Send"), 0, 99), // never received
            p2p(ev(14, 1, 310, "MPI_Send"), -1, 99), // MPI_PROC_NULL
            p2p(ev(3, 0, 400, "MPI_Recv"), 1, 98),  // never sent
            p2p(ev(4, 0, 410, "MPI_Recv"), -1, 98), // MPI_PROC_NULL
        ];
        let r = run(&mut evs);
        assert_eq!(pairs(&r), vec![(1, 11), (10, 2)]);
        let m = r.messages.iter().find(|m| m.send_id == 1).expect("send 1");
        assert_eq!(
            (m.bytes, m.recv_post_id, m.recv_func.as_str()),
            (32, 10, "MPI_Sendrecv")
        );
        assert_eq!((r.unmatched_sends, r.unmatched_receives), (1, 1));
    }

    #[test]
    fn communicators_named_differently_on_each_side_still_match() {
        let mut s = p2p(ev(1, 0, 100, "MPI_Send"), 1, 3);
        s.comm = Some("comm-84000001 size=2");
        let mut r = p2p(ev(2, 1, 120, "MPI_Recv"), 0, 3);
        r.comm = Some("comm-84000002 size=2");
        let res = run(&mut [s, r]);
        assert_eq!(pairs(&res), vec![(1, 2)]);
        assert_eq!(res.messages[0].comm, "comm-84000001 size=2");
    }

    #[test]
    fn old_traces_without_completion_peers_use_the_irecv_source() {
        let mut irecv = p2p(ev(10, 1, 100, "MPI_Irecv"), 0, 4);
        irecv = with_request(irecv, 3);
        let mut done = ev(11, 1, 300, "tracer_complete");
        done = with_request(done, 3);
        let mut wild = p2p(ev(12, 1, 400, "MPI_Irecv"), -1, 4);
        wild = with_request(wild, 4);
        let mut wild_done = ev(13, 1, 500, "tracer_complete");
        wild_done = with_request(wild_done, 4);
        let mut never = p2p(ev(14, 1, 600, "MPI_Irecv"), 0, 4);
        never = with_request(never, 5);
        let mut evs = vec![
            p2p(ev(1, 0, 50, "MPI_Send"), 1, 4),
            irecv,
            done,
            wild,
            wild_done,
            never,
        ];
        let r = run(&mut evs);
        assert_eq!(pairs(&r), vec![(1, 11)]);
        assert_eq!((r.unmatched_sends, r.unmatched_receives), (0, 2));
    }
}
