"""Bots uploaded to a running Arena: what an upload may hold and how it is unpacked.

archive.py   unpacking an uploaded archive safely, packing a directory for upload, the
             content digest of an unpacked bot (pure: files only)

An upload's arena-bot.toml (its runtime and command) is read and checked by arena.botcommand,
the one module that owns that file (`read_manifest(folder, upload=True)`).
"""
