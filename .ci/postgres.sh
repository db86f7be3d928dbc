#!/usr/bin/env bash
# Starts a throwaway PostgreSQL cluster on 127.0.0.1 in a temporary directory
# and prints its URL. Usage: eval "$(.ci/postgres.sh start)"; .ci/postgres.sh stop
set -euo pipefail
dir=${CORRAL_PG_DIR:-/tmp/corral-pg}
port=${CORRAL_PG_PORT:-54329}
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -n "$bin" ] || { echo "postgresql is not installed (apt-get install postgresql)" >&2; exit 1; }
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
case "${1:-start}" in
start)
  if [ -f "$dir/data/postmaster.pid" ] && as_pg "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
    :
  else
    rm -rf "$dir"; mkdir -p "$dir"
    [ "$(id -u)" = 0 ] && chown postgres:postgres "$dir"
    as_pg "$bin/initdb" -D "$dir/data" -U corral --auth=trust -E UTF8 >"$dir/initdb.log" 2>&1
    as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
      -o "-h 127.0.0.1 -p $port -k $dir -c fsync=off -c max_connections=200" start >/dev/null
    as_pg "$bin/createdb" -h 127.0.0.1 -p "$port" -U corral corral_test
  fi
  echo "export CORRAL_TEST_POSTGRES=postgres://corral@127.0.0.1:$port/corral_test?sslmode=disable"
  ;;
stop)
  as_pg "$bin/pg_ctl" -D "$dir/data" -m fast stop >/dev/null 2>&1 || true
  ;;
esac
