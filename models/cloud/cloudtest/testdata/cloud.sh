#!/bin/bash
# Starts Debian's Placement (python3-placement) and nova-api (python3-nova)
# on loopback with SQLite and noauth2, everything under DIR, on the given
# ports; nova mirrors aggregate membership into this Placement.
#   cloud.sh DIR PLACEMENT_PORT NOVA_PORT NEUTRON_PORT
# With KEYSTONE_URL and KEYSTONE_ADMIN_PASSWORD set, both services check
# tokens with that Keystone (keystonemiddleware) instead of noauth2, and
# nova reaches Placement through Keystone's catalog.
# Prints "placement URL" and "compute URL" lines; pids are in DIR/*.pid.
set -euo pipefail
DIR=$1 PPORT=$2 NPORT=$3 QPORT=$4
PY=/usr/bin/python3
H=127.0.0.1
mkdir -p "$DIR/placement" "$DIR/nova/locks"
AUTH=noauth2
AUTHTOKEN=""
PLACEMENT_ENV=(OS_PLACEMENT__AUTH_TYPE=admin_token OS_PLACEMENT__ENDPOINT="http://$H:$PPORT" OS_PLACEMENT__TOKEN=admin)
if [ -n "${KEYSTONE_URL:-}" ]; then
  AUTH=keystone
  # The bootstrap admin doubles as the services' own user.
  AUTHTOKEN="[keystone_authtoken]
www_authenticate_uri = $KEYSTONE_URL
auth_url = $KEYSTONE_URL
auth_type = password
username = admin
password = $KEYSTONE_ADMIN_PASSWORD
project_name = admin
user_domain_id = default
project_domain_id = default"
  PLACEMENT_ENV=(OS_PLACEMENT__AUTH_TYPE=password OS_PLACEMENT__AUTH_URL="$KEYSTONE_URL" OS_PLACEMENT__USERNAME=admin
    OS_PLACEMENT__PASSWORD="$KEYSTONE_ADMIN_PASSWORD" OS_PLACEMENT__PROJECT_NAME=admin OS_PLACEMENT__USER_DOMAIN_ID=default
    OS_PLACEMENT__PROJECT_DOMAIN_ID=default OS_PLACEMENT__REGION_NAME=RegionOne)
fi

# --- Placement
cat > "$DIR/placement/placement.conf" <<CONF
[DEFAULT]
debug = False
log_file = $DIR/placement/placement.log
[api]
auth_strategy = $AUTH
[placement_database]
connection = sqlite:///$DIR/placement/placement.db
$AUTHTOKEN
CONF
/usr/bin/placement-manage --config-file "$DIR/placement/placement.conf" db sync >"$DIR/placement/manage.log" 2>&1 ||
  { cat "$DIR/placement/manage.log" >&2; exit 1; }
if [ "${PLACEMENT_PROCESSES:-1}" -gt 1 ]; then
  # As a production cloud serves it: uWSGI (Debian's uwsgi-core and
  # uwsgi-plugin-python3) with several worker processes, each loading the
  # application itself (lazy-apps: no SQLite connection crosses a fork).
  OS_PLACEMENT_CONFIG_DIR="$DIR/placement" setsid /usr/bin/uwsgi --plugin python3 --http-socket "$H:$PPORT" \
    --wsgi-file /usr/bin/placement-api --master --processes "$PLACEMENT_PROCESSES" --lazy-apps \
    --die-on-term --disable-logging --listen 128 >"$DIR/placement/api.out" 2>&1 </dev/null &
else
  OS_PLACEMENT_CONFIG_DIR="$DIR/placement" setsid /usr/bin/placement-api --host $H --port "$PPORT" \
    >"$DIR/placement/api.out" 2>&1 </dev/null &
fi
echo $! >"$DIR/placement.pid"

# --- an empty Neutron (see neutron_stub.py)
setsid "$PY" "$(dirname "$0")/neutron_stub.py" "$QPORT" >"$DIR/neutron.out" 2>&1 </dev/null &
echo $! >"$DIR/neutron.pid"

# --- nova-api
N=$DIR/nova
cat > "$N/nova.conf" <<CONF
[DEFAULT]
debug = False
log_file = $N/nova-api.log
state_path = $N
host = corral-test-nova
enabled_apis = osapi_compute
osapi_compute_listen = $H
osapi_compute_listen_port = $NPORT
osapi_compute_workers = 1
transport_url = fake:/
use_rootwrap_daemon = False
[api]
auth_strategy = $AUTH
[wsgi]
api_paste_config = $N/api-paste.ini
[api_database]
connection = sqlite:///$N/nova_api.db
[database]
connection = sqlite:///$N/nova.db
[oslo_concurrency]
lock_path = $N/locks
[oslo_messaging_notifications]
driver = noop
[notifications]
notification_format = unversioned
[upgrade_levels]
compute = auto
[cinder]
os_region_name = RegionOne
$AUTHTOKEN
CONF
cp "$(dirname "$0")/api-paste.ini" "$N/api-paste.ini"
manage() { (cd "$N" && "$PY" -c 'import sys; sys.argv[0]="nova-manage"; from nova.cmd.manage import main; sys.exit(main())' --config-file "$N/nova.conf" "$@"); }
manage api_db sync >"$N/manage.log" 2>&1 || { cat "$N/manage.log" >&2; exit 1; }
manage cell_v2 map_cell0 --database_connection "sqlite:///$N/nova_cell0.db" >>"$N/manage.log" 2>&1
manage db sync >>"$N/manage.log" 2>&1 || { cat "$N/manage.log" >&2; exit 1; }
manage cell_v2 create_cell --name cell1 --database_connection "sqlite:///$N/nova.db" --transport-url fake:/ >>"$N/manage.log" 2>&1
"$PY" -c 'from nova.objects.service import SERVICE_VERSION; print(SERVICE_VERSION)' >"$N/service_version"
# Nova copies aggregate membership into Placement through keystoneauth's
# admin_token plugin, given in oslo.config's environment form.
(cd "$N" && exec env "${PLACEMENT_ENV[@]}" \
  OS_NEUTRON__AUTH_TYPE=admin_token OS_NEUTRON__ENDPOINT="http://$H:$QPORT" OS_NEUTRON__TOKEN=admin \
  setsid "$PY" -c 'import sys; sys.argv[0]="nova-api"; from nova.cmd.api import main; sys.exit(main())' \
  --config-file "$N/nova.conf" >"$N/api.out" 2>&1 </dev/null) &
echo $! >"$DIR/nova.pid"

wait_for() { # name url pidfile log
  for _ in $(seq 1 300); do
    # The answer must be the service's own version document: another
    # server that took the port first would answer too.
    if "$PY" -c "import urllib.request,sys; sys.exit(b'\"versions\"' not in urllib.request.urlopen(sys.argv[1], timeout=2).read())" "$2" >/dev/null 2>&1; then return 0; fi
    kill -0 "$(cat "$3")" 2>/dev/null || { echo "$1 died:" >&2; tail -30 "$4" >&2; exit 1; }
    sleep 0.1
  done
  echo "$1 did not answer in time" >&2; tail -30 "$4" >&2; exit 1
}
wait_for placement "http://$H:$PPORT/" "$DIR/placement.pid" "$DIR/placement/api.out"
wait_for nova "http://$H:$NPORT/" "$DIR/nova.pid" "$N/api.out"
echo "placement http://$H:$PPORT"
echo "compute http://$H:$NPORT/v2.1"
