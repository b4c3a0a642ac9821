"""MPI message matching at merge (issue 5): a traced program with a known set of messages
(tests/programs/mpi_messages.c: Send/Recv ring, Isend/Irecv/Waitall, MPI_ANY_SOURCE and
MPI_ANY_TAG receives, Sendrecv) gives exactly those messages in messages.parquet, each send
paired with the right receive, and meta.json counts them."""
import pandas as pd
import pytest

from conftest import run_traced

RANKS = 4


@pytest.fixture(scope="module")
def traced(programs, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("messages")
    result, trace = run_traced(tmp / "trace", programs["mpi_messages"], ranks=RANKS)
    assert "messages done" in result.stdout
    messages = pd.read_parquet(trace.path / "messages.parquet")
    return trace, messages


def test_every_message_is_matched(traced):
    trace, m = traced
    # 3 ring messages per rank, 2 nonblocking per rank, 2 per non-zero rank to rank 0,
    # one Sendrecv message per rank (4 ranks: 2 pairs).
    assert len(m) == 3 * RANKS + 2 * RANKS + 2 * (RANKS - 1) + RANKS == 30
    counts = trace.meta["counts"]
    assert counts["messages"] == 30
    assert counts["unmatched_sends"] == 0
    assert counts["unmatched_receives"] == 0
    assert list(m.columns) == [
        "send_id", "recv_id", "recv_post_id", "from_rank", "to_rank", "send_process",
        "send_thread", "recv_process", "recv_thread", "send_ns", "recv_ns", "bytes", "tag",
        "comm", "send_func", "recv_func"]
    assert list(m.send_ns) == sorted(m.send_ns)
    assert set(m.comm) == {"world"}


def test_ids_point_at_the_right_events(traced):
    trace, m = traced
    ev = trace.events.set_index("id")
    sends = ev.loc[m.send_id]
    assert list(sends["rank"]) == list(m.from_rank)
    assert list(sends["start_ns"]) == list(m.send_ns)
    assert set(sends.func) == {"MPI_Send", "MPI_Isend", "MPI_Sendrecv"}
    recvs = ev.loc[m.recv_id]
    assert list(recvs["rank"]) == list(m.to_rank)
    assert set(recvs.func) == {"MPI_Recv", "tracer_complete"}
    posts = ev.loc[m.recv_post_id]
    assert list(posts.func) == list(m.recv_func)
    # The receive side's source and tag are the sender's rank and tag.
    assert list(recvs.peer.astype(int)) == list(m.from_rank)
    assert list(recvs.tag.astype(int)) == list(m.tag)


def test_ring_messages_carry_the_sender_sized_payload_in_order(traced):
    _, m = traced
    ring = m[m.tag == 7]
    assert len(ring) == 3 * RANKS
    for r in range(RANKS):
        mine = ring[ring.from_rank == r]
        assert set(mine.to_rank) == {(r + 1) % RANKS}
        assert set(mine.bytes) == {(r + 1) * 8}
        assert set(mine.send_func) == {"MPI_Send"} and set(mine.recv_func) == {"MPI_Recv"}
        # non-overtaking: the k-th send is the k-th receive
        assert list(mine.sort_values("send_ns").recv_id) == sorted(mine.recv_id)


def test_nonblocking_messages_match_by_tag_not_by_posting_position(traced):
    trace, m = traced
    nb = m[m.tag.isin([11, 12])]
    assert len(nb) == 2 * RANKS
    assert set(nb.send_func) == {"MPI_Isend"} and set(nb.recv_func) == {"MPI_Irecv"}
    ev = trace.events.set_index("id")
    # The Irecv posted for tag 12 got the tag-12 message.
    assert list(ev.loc[nb.recv_post_id].tag.astype(int)) == list(nb.tag)
    for _, row in nb.iterrows():
        assert row.to_rank == (row.from_rank - 1) % RANKS
        assert row.bytes == 64
        assert row.recv_id != row.recv_post_id


def test_any_source_and_any_tag_are_resolved(traced):
    trace, m = traced
    to0 = m[(m.to_rank == 0) & m.tag.isin([20, 21])]
    assert sorted(to0.from_rank) == sorted(list(range(1, RANKS)) * 2)
    blocking = to0[to0.tag == 20]
    assert set(blocking.recv_func) == {"MPI_Recv"}
    wild = to0[to0.tag == 21]
    assert set(wild.recv_func) == {"MPI_Irecv"}
    # The Irecvs themselves were posted with MPI_ANY_SOURCE and MPI_ANY_TAG (-1, -1).
    ev = trace.events.set_index("id")
    posts = ev.loc[wild.recv_post_id]
    assert set(posts.peer.astype(int)) == {-1} and set(posts.tag.astype(int)) == {-1}


def test_sendrecv_pairs_both_ways(traced):
    _, m = traced
    sr = m[m.tag == 30]
    assert len(sr) == RANKS
    assert set(sr.send_func) == {"MPI_Sendrecv"} and set(sr.recv_func) == {"MPI_Sendrecv"}
    assert all(sr.to_rank == sr.from_rank ^ 1)
    assert set(sr.bytes) == {32}


def test_completions_carry_peer_and_comm_not_a_file(traced):
    trace, _ = traced
    done = trace.events[(trace.events.func == "tracer_complete")]
    p2p = done[done.peer.notna()]
    assert len(p2p) >= 4 * RANKS
    assert p2p.file_id.isna().all()
    assert set(p2p.comm) == {"world"}
