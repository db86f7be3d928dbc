#!/bin/bash
# Starts Debian's Keystone (python3-keystone) on loopback: SQLite, fernet
# tokens, bootstrapped with an admin (password in $KEYSTONE_ADMIN_PASSWORD),
# served by keystone-wsgi-public (pbr's wsgiref server).
#   keystone.sh DIR PORT
# Prints "keystone URL"; the pid is in DIR/keystone.pid.
set -euo pipefail
DIR=$1 PORT=$2
H=127.0.0.1
K=$DIR/keystone
mkdir -p "$K/fernet" "$K/credential"
cat > "$K/keystone.conf" <<CONF
[DEFAULT]
debug = False
log_file = $K/keystone.log
[database]
connection = sqlite:///$K/keystone.db
[token]
provider = fernet
[fernet_tokens]
key_repository = $K/fernet
[credential]
key_repository = $K/credential
CONF
km() { /usr/bin/keystone-manage --config-file "$K/keystone.conf" "$@" >>"$K/manage.log" 2>&1 || { cat "$K/manage.log" >&2; exit 1; }; }
km db_sync
km fernet_setup --keystone-user "$(id -un)" --keystone-group "$(id -gn)"
km credential_setup --keystone-user "$(id -un)" --keystone-group "$(id -gn)"
km bootstrap --bootstrap-password "$KEYSTONE_ADMIN_PASSWORD" --bootstrap-admin-url "http://$H:$PORT/v3" \
  --bootstrap-public-url "http://$H:$PORT/v3" --bootstrap-internal-url "http://$H:$PORT/v3" --bootstrap-region-id RegionOne
# Keystone leaves a read open between requests now and then; in SQLite's
# default journal that blocks every later write ("database is locked").
# With a write-ahead log readers do not block the writer.
/usr/bin/python3 -c 'import sqlite3, sys; sqlite3.connect(sys.argv[1]).execute("pragma journal_mode=wal")' "$K/keystone.db"
(cd "$K" && exec env OS_KEYSTONE_CONFIG_DIR="$K" OS_KEYSTONE_CONFIG_FILES=keystone.conf \
  setsid /usr/bin/keystone-wsgi-public --host $H --port "$PORT" >"$K/api.out" 2>&1 </dev/null) &
echo $! >"$DIR/keystone.pid"
for _ in $(seq 1 300); do
  if /usr/bin/python3 -c "import urllib.request,sys; urllib.request.urlopen(sys.argv[1], timeout=2)" "http://$H:$PORT/v3" >/dev/null 2>&1; then
    echo "keystone http://$H:$PORT/v3"; exit 0
  fi
  kill -0 "$(cat "$DIR/keystone.pid")" 2>/dev/null || { echo "keystone died:" >&2; tail -30 "$K/api.out" >&2; exit 1; }
  sleep 0.1
done
echo "keystone did not answer in time" >&2; tail -30 "$K/api.out" >&2; exit 1
