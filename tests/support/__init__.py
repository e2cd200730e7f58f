"""Helpers shared by test modules. A test module imports helpers from here, from conftest
fixtures or from the other helper modules (tests/cli.py, tests/procs.py, tests/timing.py,
a directory's support.py ...), never from another test module: tests/test_layout.py checks."""
