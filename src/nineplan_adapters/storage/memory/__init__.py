"""The memory backend: sessions that live as long as the process (tests, demos, embedding)."""
