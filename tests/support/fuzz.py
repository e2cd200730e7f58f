"""Hypothesis strategies for the fuzz tests: any Action a bot could put on the wire, and one
random byte-level change to a message."""

from __future__ import annotations

import random

from hypothesis import strategies as st

from arena_sdk.proto import arena_pb2 as pb

UINT32 = st.integers(0, 2**32 - 1)
CARD_IDS = st.one_of(st.integers(0, 60), UINT32)
cards = st.builds(
    lambda i, c, v: pb.Card(id=i, colour=c, value=v), CARD_IDS, st.text(max_size=8), UINT32
)
balloon_actions = st.one_of(
    st.builds(lambda c: pb.Action(balloon=pb.BalloonAction(play=c)), cards),
    st.builds(lambda d: pb.Action(balloon=pb.BalloonAction(drop_out=d)), st.booleans()),
    st.just(pb.Action(balloon=pb.BalloonAction())),
)
boom_actions = st.builds(
    lambda cs, r: pb.Action(boom=pb.BoomAction(cards=cs, ruse=r)),
    st.lists(cards, max_size=6),
    st.booleans(),
)
actions = st.one_of(balloon_actions, boom_actions, st.just(pb.Action()))


def mutate(data: bytes, rng: random.Random) -> bytes:
    """One random byte-level change: flip, insert, delete, truncate or splice."""
    b = bytearray(data)
    op = rng.randrange(5)
    if op == 0 and b:
        b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
    elif op == 1:
        b.insert(rng.randrange(len(b) + 1), rng.randrange(256))
    elif op == 2 and b:
        del b[rng.randrange(len(b))]
    elif op == 3:
        b = b[: rng.randrange(len(b) + 1)]
    else:
        b += bytes(rng.randrange(256) for _ in range(rng.randrange(1, 6)))
    return bytes(b)
