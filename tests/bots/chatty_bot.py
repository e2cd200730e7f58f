"""A bot that says what it is doing: a random legal action, with lines to its log while it
decides each move (stdout and stderr, one with a colour escape and one with HTML in it), so
that the tests can find each move's lines beside that move (docs/web.md#match-logs):
    chatty decision K of MATCH: chose ACTION   (stdout)
    <b>chatty-secret</b> K                      (stderr, in yellow)
K counts its decisions in the match from 1; MATCH is the opaque match id's first 8 characters.
At each match's end it writes `chatty done MATCH`."""

import sys

from arena_sdk import Bot, run

SECRET = "chatty-secret"


class ChattyBot(Bot):
    name = "chatty"
    quick = True

    def __init__(self):
        self.decisions: dict[str, int] = {}

    def act(self, observation, legal_actions, match):
        k = self.decisions.get(match.match_id, 0) + 1
        self.decisions[match.match_id] = k
        action = match.rng.choice(legal_actions)
        print(f"chatty decision {k} of {match.match_id[:8]}: chose {action}", flush=True)
        print(f"\x1b[33m<b>{SECRET}</b> {k}\x1b[0m", file=sys.stderr, flush=True)
        return action

    def on_match_end(self, match, result):
        self.decisions.pop(match.match_id, None)
        print(f"chatty done {match.match_id[:8]}", flush=True)


if __name__ == "__main__":
    run(ChattyBot())
