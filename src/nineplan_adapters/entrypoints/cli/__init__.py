"""The `nineplan` command line: reading and steering sessions, prime, and the demo."""
