"""``mcp.pairing.RequestPairing``, the proxies' pairing of answers with requests, on generated
traffic: several exchanges (HTTP POSTs, or a stdio pipe) at once, ids that collide within and
across them, answers in any order an exchange allows (requests with equal ids of one exchange are
answered in the order sent: nothing could tell them apart). Every answer goes to the request that
caused it, tokens rise in send order, and an answer no open request has is reported, not paired."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from toolcall_spec.mcp.pairing import RequestPairing


@st.composite
def traffic(draw: st.DrawFn) -> list[tuple[str, int, int, int]]:
    """Events ``("send" | "answer", exchange, request number, JSON-RPC id)`` in the order they
    happen."""
    exchanges = draw(st.integers(1, 3))
    request = st.tuples(st.integers(0, exchanges - 1), st.sampled_from([1, 2]))
    requests = draw(st.lists(request, min_size=1, max_size=12))
    sent: list[int] = []
    answered: set[int] = set()
    events: list[tuple[str, int, int, int]] = []
    while len(answered) < len(requests):
        choices = [("send", n) for n in range(len(sent), len(sent) + 1) if n < len(requests)]
        for n in sent:
            if n in answered:
                continue
            exchange, rid = requests[n]
            earlier_twin = any(
                m < n and m not in answered and requests[m] == (exchange, rid) for m in sent
            )
            if not earlier_twin:
                choices.append(("answer", n))
        kind, n = draw(st.sampled_from(choices))
        if kind == "send":
            sent.append(n)
        else:
            answered.add(n)
        events.append((kind, requests[n][0], n, requests[n][1]))
    return events


def message(request_id: Any, **fields: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, **fields}


@given(events=traffic())
def test_every_answer_goes_to_the_request_of_its_exchange_that_caused_it(
    events: list[tuple[str, int, int, int]],
) -> None:
    pairing = RequestPairing()
    token_of: dict[int, str] = {}
    for kind, exchange, number, request_id in events:
        if kind == "send":
            copy = pairing.sent("s", exchange, message(request_id, method="tools/call"))
            token_of[number] = copy["id"]
        else:
            answers, unknown = pairing.answered("s", exchange, message(request_id, result={}))
            assert unknown == []
            assert [a["id"] for a in answers] == [token_of[number]]
    sends = [number for kind, _, number, _ in events if kind == "send"]
    order = [int(token_of[n].split(":")[0]) for n in sends]
    assert order == sorted(order)  # tokens rise in send order
    _, unknown = pairing.answered("s", 0, message(1, result={}))
    assert unknown == [1]  # nothing is open any more
