# A throw-away PostgreSQL server on loopback for the postgres-marked tests.
# Source this file, then: pg_start (exports NINEPLAN_TEST_DATABASE_URL) ... pg_stop.

as_postgres() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

pg_start() {
  if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
    echo "Installing PostgreSQL for the postgres tests..."
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
  fi
  PG_BIN=$(dirname "$(ls /usr/lib/postgresql/*/bin/initdb | sort -V | tail -n 1)")
  PG_DIR=$(mktemp -d /tmp/nineplan-pg.XXXXXX)
  if [ "$(id -u)" = 0 ]; then chown postgres: "$PG_DIR"; fi
  PG_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  # -E UTF8: on a machine with no LANG set, initdb would otherwise make an ASCII database.
  as_postgres "$PG_BIN/initdb" -D "$PG_DIR/data" -A trust -U nineplan -E UTF8 --locale=C.UTF-8 --no-sync >/dev/null
  as_postgres "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/log" -w \
    -o "-p $PG_PORT -k $PG_DIR -c listen_addresses=127.0.0.1 -c max_connections=200" start >/dev/null
  "$PG_BIN/createdb" -h 127.0.0.1 -p "$PG_PORT" -U nineplan nineplan_test
  export NINEPLAN_TEST_DATABASE_URL="postgresql://nineplan@127.0.0.1:$PG_PORT/nineplan_test"
  export PG_BIN PG_DIR
}

pg_stop() {
  if [ -n "${PG_DIR:-}" ]; then
    as_postgres "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m fast stop >/dev/null 2>&1 || true
    rm -rf "$PG_DIR"
  fi
}
