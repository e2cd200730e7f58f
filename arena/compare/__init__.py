"""`arena compare`: is a new version of a bot better than the old one?

sprt.py holds the sequential test (pure arithmetic); plan.py the paired deals, seats and opponents
both versions play; verdict.py the verdict from the stored results (pure: the web's comparison
page reads it too); the runner plays the deals and stores every match, like a ladder.
"""
