"""PostgreSQL storage: every session in one database, plan files as a local mirror.

catalog, store and watch are the backend; primer is `nineplan prime`'s read.
"""
