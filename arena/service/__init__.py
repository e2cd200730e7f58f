"""`arena serve`: the long-running arena: referee, continuous scheduler and web server."""
