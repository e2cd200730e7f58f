"""Bots uploaded to a running Arena: what an upload may hold and how it is read.

archive.py   unpacking an uploaded archive safely, packing a directory for upload, the
             content digest of an unpacked bot (pure: files only)
manifest.py  arena-bot.toml of an uploaded bot: its runtime and command, checked
"""
