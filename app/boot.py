"""Whether this server process has warmed up (explorer_cache.warm): main.py says the explorer is starting
until then. A module of its own, so main.py reads it before the slow imports."""
READY = False
