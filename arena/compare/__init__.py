"""`arena compare`: is a new version of a bot better than the old one?

sprt.py holds the sequential test (pure arithmetic); plan.py the paired deals, seats and opponents
both versions play; the runner plays them and stores every match, like a ladder.
"""
