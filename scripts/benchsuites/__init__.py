"""One module per benchmark suite; each has run(seconds, log) -> {"results": ..., "goals": ...}."""
