"""Balloon Challenge in the web's replay viewer: a frame's public picture of the table, a seat's
hand, an event's text and the card legend (the functions arena/web/frames.py's GameFrames
names)."""

from __future__ import annotations

from typing import Any, Sequence

from arena.games import balloon
from arena.games.base import Event

Card = list[str]  # [text, colour]: colour names a CSS class


def legend() -> dict[int, Card]:
    return {i: [f"{c.colour} {c.value}", c.colour] for i, c in enumerate(balloon.CARDS)}


def public(obs: Any, names: Sequence[str], game: Any) -> dict[str, Any]:
    size = len(obs.table) + len(obs.face_up)
    to_act = names[obs.to_act] if 0 <= obs.to_act < len(names) else "nobody (match over)"
    info = [
        ["round", f"{obs.round} of 5"],
        ["turn", str(obs.turn)],
        ["balloon size", str(size)],
        ["chips in the middle", str(obs.chips_in_middle)],
        ["first drop-out chip", "still there" if obs.first_drop_out_chip else "taken"],
        ["to act", to_act],
    ]
    # The balloon first, its size being what every volume is measured against (rules:
    # "Size and volume"); then the rows, one per turn, as the cards lie on the table.
    table: list[dict[str, Any]] = [
        {"label": "balloon size", "cards": [], "kind": "balloon", "value": size}
    ]
    if obs.face_up:
        table.append({"label": "face up", "cards": list(obs.face_up)})
    rows: dict[int, list[Any]] = {}
    for p in obs.table:
        rows.setdefault(p.turn, []).append([p.card, names[p.seat]])
    for turn in sorted(rows):
        table.append({"label": f"row {turn}", "cards": rows[turn]})
    seats = []
    for s in range(obs.num_players):
        out = obs.dropped_out[s]
        seats.append(
            {
                "stats": [
                    ["total", str(obs.totals[s])],
                    ["chips", str(obs.chips[s])],
                    ["cards in hand", str(obs.hand_sizes[s])],
                    ["status", f"out in turn {out}" if out else "in"],
                ],
                "cards": [],
            }
        )
    return {
        "info": info,
        "table": table,
        "seats": seats,
        "to_act": [obs.to_act] if obs.to_act >= 0 else [],
    }


def hand(obs: Any) -> list[int]:
    return list(obs.hand)


def event(ev: Event, names: Sequence[str]) -> str | None:
    d = ev.data or {}
    who = names[ev.seat] if 0 <= ev.seat < len(names) else "table"
    if ev.kind == "play":
        chips = (
            f", takes {d['chips']} chip" + ("s" if d["chips"] != 1 else "")
            if d.get("chips")
            else ""
        )
        return f"{who} plays {balloon.card_name(d['card'])} in row {d['turn']}{chips}"
    if ev.kind == "drop_out":
        chips = d.get("chips", 0)
        return f"{who} drops out in turn {d['turn']}" + (f", takes {chips} chips" if chips else "")
    if ev.kind == "round_start":
        return (
            f"round {d['round']} starts: {names[d['start_seat']]} starts, "
            f"{d['chips_in_middle']} chips in the middle"
        )
    if ev.kind == "round_end":
        parts = [
            f"{names[s]} volume {v}, scores {d['round_scores'][s]}"
            for s, v in enumerate(d["volumes"])
        ]
        hands = "; ".join(
            f"{names[s]} held {', '.join(balloon.card_name(c) for c in h) or '-'}"
            for s, h in enumerate(d["hands"])
        )
        return f"round {d['round']} ends, balloon size {d['size']}: {'; '.join(parts)}. {hands}"
    if ev.kind == "match_end":
        return "match over: " + ", ".join(f"{names[s]} {t}" for s, t in enumerate(d["totals"]))
    if ev.kind == "sampled":
        return None  # determinization bookkeeping, not something that happened at the table
    return None
