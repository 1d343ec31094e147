"""What the core's ports are made of: the unit of work, journal rows, the retry log, cattrs rows,
plan files, clock and ids, and one folder per backend (memory, SQLite, PostgreSQL)."""
