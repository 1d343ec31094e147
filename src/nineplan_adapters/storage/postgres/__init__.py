"""PostgreSQL storage: every session in one database, plan files as a local mirror."""

from nineplan_adapters.storage.postgres.catalog import PostgresSessionCatalog

__all__ = ["PostgresSessionCatalog"]
