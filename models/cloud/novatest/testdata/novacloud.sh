#!/bin/bash
# A small real Nova cloud on loopback, with Nova's own scheduler: epmd and
# RabbitMQ, Debian's Placement, nova-api, nova-conductor, nova-scheduler and
# one nova-compute per host with one of Zed's fake virt drivers, plus
# stand-ins for Glance, Neutron and Keystone (stubs.py). Everything lives
# under DIR; every process is its own session, its pid in DIR/pids/*.pid.
#   novacloud.sh up DIR HOSTS
#     HOSTS is "name:Driver,name:Driver,…" (Driver: FakeDriver,
#     MediumFakeDriver, SmallFakeDriver, MediumFakeDriverWithNestedCustomResources).
#     Ports come from the environment: EPMD_PORT AMQP_PORT DIST_PORT
#     PLACEMENT_PORT NOVA_PORT STUB_PORT. DIR/images.json holds the images
#     the Glance stand-in serves; DIR/scheduler.conf the scheduler's options.
#     Prints "placement URL" and "compute URL". With OWNER_PID set, the
#     cloud stops itself when that process ends.
#   novacloud.sh scheduler DIR
#     (Re)starts nova-scheduler with DIR/scheduler.conf (its [scheduler] and
#     [filter_scheduler] options) after the caller stopped the old one, and
#     waits until it has read the cloud's instances.
set -euo pipefail
CMD=$1 DIR=$2
PY=/usr/bin/python3
H=127.0.0.1
HERE=$(cd "$(dirname "$0")" && pwd)
N=$DIR/nova
PIDS=$DIR/pids

# Every nova process reaches Placement, Neutron and Keystone through
# oslo.config's environment form.
nova_env() {
  local ports
  ports=$(cat "$DIR/ports")
  # shellcheck disable=SC2086
  set -- $ports
  echo "OS_PLACEMENT__AUTH_TYPE=admin_token OS_PLACEMENT__ENDPOINT=http://$H:$1 OS_PLACEMENT__TOKEN=admin" \
    "OS_NEUTRON__AUTH_TYPE=admin_token OS_NEUTRON__ENDPOINT=http://$H:$2 OS_NEUTRON__ENDPOINT_OVERRIDE=http://$H:$2 OS_NEUTRON__TOKEN=admin" \
    "OS_KEYSTONE__ENDPOINT_OVERRIDE=http://$H:$2/v3 PYTHONPATH=$N"
}

# service NAME MODULE CONFIG...: starts nova.cmd.MODULE in its own session.
service() {
  local name=$1 module=$2
  shift 2
  local args=()
  for c in "$@"; do args+=(--config-file "$c"); done
  # shellcheck disable=SC2046
  (cd "$N" && exec env $(nova_env) setsid "$PY" -c "import sys; sys.argv[0]='nova-$module'; from nova.cmd.$module import main; sys.exit(main())" \
    "${args[@]}" >"$N/$name.out" 2>&1 </dev/null) &
  echo $! >"$PIDS/$name.pid"
}

wait_log() { # name file text seconds
  for _ in $(seq 1 $(($4 * 10))); do
    grep -q "$3" "$2" 2>/dev/null && return 0
    kill -0 "$(cat "$PIDS/$1.pid")" 2>/dev/null || { echo "$1 died:" >&2; tail -30 "$2" "$N/$1.out" >&2; exit 1; }
    sleep 0.1
  done
  echo "$1 did not log \"$3\" in $4 s" >&2; tail -30 "$2" >&2; exit 1
}

start_scheduler() {
  : >"$N/scheduler.log"
  service scheduler scheduler "$N/nova.conf" "$N/scheduler-base.conf" "$DIR/scheduler.conf"
  # The host manager reads every host's instances in the background at
  # start; the soft weighers see none until it is done.
  wait_log scheduler "$N/scheduler.log" "END:_async_init_instance_info" 120
}

if [ "$CMD" = scheduler ]; then
  start_scheduler
  exit 0
fi

HOSTS=$3
mkdir -p "$DIR/placement" "$N/locks" "$DIR/rabbit" "$PIDS"
echo "$PLACEMENT_PORT $STUB_PORT" >"$DIR/ports"
# When the test that owns the cloud dies without stopping it (a timeout),
# a watchdog stops every process of it.
if [ -n "${OWNER_PID:-}" ]; then
  setsid bash -c 'while kill -0 "$1" 2>/dev/null; do sleep 1; done
    for f in "$2"/*.pid; do kill -TERM -- "-$(cat "$f")"; done; sleep 5
    for f in "$2"/*.pid; do kill -KILL -- "-$(cat "$f")"; done' watchdog "$OWNER_PID" "$PIDS" >/dev/null 2>&1 </dev/null &
  echo $! >"$DIR/watchdog.pid"
fi
RABBIT_URL="rabbit://guest:guest@$H:$AMQP_PORT/"
SQL_OPTS="?timeout=20"

# --- epmd on a port of its own, then RabbitMQ (its start takes longest:
# the databases are made meanwhile)
setsid /usr/bin/epmd -port "$EPMD_PORT" -address $H >"$DIR/rabbit/epmd.out" 2>&1 </dev/null &
echo $! >"$PIDS/epmd.pid"
R=$DIR/rabbit
echo "listeners.tcp.1 = $H:$AMQP_PORT
loopback_users = none" >"$R/rabbitmq.conf"
: >"$R/enabled_plugins"
: >"$R/env.conf"
(exec env HOME="$R" ERL_EPMD_PORT="$EPMD_PORT" ERL_EPMD_ADDRESS=$H RABBITMQ_CONF_ENV_FILE="$R/env.conf" \
  RABBITMQ_NODENAME="corral$AMQP_PORT@localhost" RABBITMQ_NODE_IP_ADDRESS=$H RABBITMQ_NODE_PORT="$AMQP_PORT" \
  RABBITMQ_DIST_PORT="$DIST_PORT" RABBITMQ_CONFIG_FILE="$R/rabbitmq.conf" RABBITMQ_ENABLED_PLUGINS_FILE="$R/enabled_plugins" \
  RABBITMQ_MNESIA_BASE="$R/mnesia" RABBITMQ_LOG_BASE="$R/log" RABBITMQ_PID_FILE="$R/rabbit.pid" \
  RABBITMQ_ADVANCED_CONFIG_FILE="$R/advanced.config" RABBITMQ_FEATURE_FLAGS_FILE="$R/feature_flags" \
  setsid /usr/lib/rabbitmq/bin/rabbitmq-server >"$R/server.out" 2>&1 </dev/null) &
echo $! >"$PIDS/rabbit.pid"

# --- Placement
cat >"$DIR/placement/placement.conf" <<CONF
[DEFAULT]
debug = False
log_file = $DIR/placement/placement.log
[api]
auth_strategy = noauth2
[placement_database]
connection = sqlite:///$DIR/placement/placement.db
CONF
/usr/bin/placement-manage --config-file "$DIR/placement/placement.conf" db sync >"$DIR/placement/manage.log" 2>&1 ||
  { cat "$DIR/placement/manage.log" >&2; exit 1; }
OS_PLACEMENT_CONFIG_DIR="$DIR/placement" setsid /usr/bin/placement-api --host $H --port "$PLACEMENT_PORT" \
  >"$DIR/placement/api.out" 2>&1 </dev/null &
echo $! >"$PIDS/placement.pid"

# --- Glance, Neutron and Keystone stand-ins
setsid "$PY" "$HERE/stubs.py" "$STUB_PORT" "$DIR/images.json" >"$DIR/stubs.out" 2>&1 </dev/null &
echo $! >"$PIDS/stubs.pid"

# --- Nova: one file for all, one per service for what differs
cat >"$N/nova.conf" <<CONF
[DEFAULT]
debug = True
state_path = $N
transport_url = $RABBIT_URL
use_rootwrap_daemon = False
report_interval = 60
service_down_time = 3600
heal_instance_info_cache_interval = -1
sync_power_state_interval = -1
update_resources_interval = -1
enabled_apis = osapi_compute
osapi_compute_listen = $H
osapi_compute_listen_port = $NOVA_PORT
osapi_compute_workers = 1
[api]
auth_strategy = noauth2
[wsgi]
api_paste_config = $N/api-paste.ini
[api_database]
connection = sqlite:///$N/nova_api.db$SQL_OPTS
[database]
connection = sqlite:///$N/nova.db$SQL_OPTS
[conductor]
workers = 1
[glance]
api_servers = http://$H:$STUB_PORT
[oslo_concurrency]
lock_path = $N/locks
[oslo_messaging_notifications]
driver = noop
[notifications]
notification_format = unversioned
[quota]
instances = -1
cores = -1
ram = -1
server_groups = -1
server_group_members = -1
[upgrade_levels]
compute = auto
[cinder]
os_region_name = RegionOne
CONF
printf '[DEFAULT]\nlog_file = %s/scheduler.log\n[scheduler]\nworkers = 1\n' "$N" >"$N/scheduler-base.conf"
printf '[DEFAULT]\nlog_file = %s/api.log\ndebug = False\n' "$N" >"$N/api.conf"
printf '[DEFAULT]\nlog_file = %s/conductor.log\ndebug = False\n' "$N" >"$N/conductor.conf"
cp "$HERE/api-paste.ini" "$N/api-paste.ini"
cp "$HERE/token_context.py" "$N/token_context.py"
manage() { (cd "$N" && "$PY" -c 'import sys; sys.argv[0]="nova-manage"; from nova.cmd.manage import main; sys.exit(main())' --config-file "$N/nova.conf" "$@"); }
# The schemas take longest of all: the API database's and the cell's are
# made side by side, and cell0 is a copy of the cell's (one schema).
manage api_db sync >"$N/manage-api.log" 2>&1 &
apidb=$!
manage db sync --local_cell >"$N/manage-cell.log" 2>&1 &
celldb=$!

# Computes reach the databases only through the conductor: their file has
# no database section.
IFS=, read -ra HOSTLIST <<<"$HOSTS"
for hd in "${HOSTLIST[@]}"; do
  name=${hd%%:*} driver=${hd#*:}
  mkdir -p "$N/$name/instances"
  cat >"$N/compute-$name.conf" <<CONF
[DEFAULT]
debug = False
log_file = $N/compute-$name.log
host = $name
compute_driver = fake.$driver
state_path = $N/$name
instances_path = $N/$name/instances
transport_url = $RABBIT_URL
use_rootwrap_daemon = False
report_interval = 60
service_down_time = 3600
heal_instance_info_cache_interval = -1
sync_power_state_interval = -1
update_resources_interval = -1
[glance]
api_servers = http://$H:$STUB_PORT
[oslo_concurrency]
lock_path = $N/$name
[oslo_messaging_notifications]
driver = noop
[notifications]
notification_format = unversioned
[upgrade_levels]
compute = auto
CONF
done

# --- wait for RabbitMQ's AMQP port, then start the computes: they load
# while the schemas are made, and wait for the conductor.
for _ in $(seq 1 600); do
  "$PY" -c "import socket,sys; socket.create_connection(('$H', int(sys.argv[1])), 1).close()" "$AMQP_PORT" 2>/dev/null && break
  kill -0 "$(cat "$PIDS/rabbit.pid")" 2>/dev/null || { echo "rabbitmq died:" >&2; tail -30 "$R/server.out" >&2; exit 1; }
  sleep 0.1
done
for hd in "${HOSTLIST[@]}"; do
  name=${hd%%:*}
  service "compute-$name" compute "$N/compute-$name.conf"
done
wait $apidb || { cat "$N/manage-api.log" >&2; exit 1; }
wait $celldb || { cat "$N/manage-cell.log" >&2; exit 1; }
cp "$N/nova.db" "$N/nova_cell0.db"
"$PY" "$HERE/cells.py" map "$N/nova_api.db" "sqlite:///$N/nova_cell0.db$SQL_OPTS" "sqlite:///$N/nova.db$SQL_OPTS" "$RABBIT_URL"

service api api "$N/nova.conf" "$N/api.conf"
service conductor conductor "$N/nova.conf" "$N/conductor.conf"
start_scheduler &
sched=$!

# --- every compute's provider in Placement, then the hosts mapped to cell1
want=${#HOSTLIST[@]}
for i in $(seq 1 1200); do
  got=$("$PY" - "http://$H:$PLACEMENT_PORT/resource_providers" <<'PY' 2>/dev/null || echo 0
import json, sys, urllib.request
req = urllib.request.Request(sys.argv[1], headers={"X-Auth-Token": "admin", "OpenStack-API-Version": "placement 1.14"})
print(sum(1 for p in json.load(urllib.request.urlopen(req, timeout=5))["resource_providers"] if p["parent_provider_uuid"] is None))
PY
)
  [ "$got" -ge "$want" ] && break
  for hd in "${HOSTLIST[@]}"; do
    name=${hd%%:*}
    kill -0 "$(cat "$PIDS/compute-$name.pid")" 2>/dev/null || { echo "compute $name died:" >&2; tail -30 "$N/compute-$name.log" "$N/compute-$name.out" >&2; exit 1; }
  done
  [ "$i" = 1200 ] && { echo "only $got of $want computes in Placement" >&2; exit 1; }
  sleep 0.1
done
"$PY" "$HERE/cells.py" discover "$N/nova_api.db" "$N/nova.db"
wait "$sched"
for _ in $(seq 1 300); do
  "$PY" -c "import urllib.request,sys; sys.exit(b'\"versions\"' not in urllib.request.urlopen(sys.argv[1], timeout=2).read())" \
    "http://$H:$NOVA_PORT/" >/dev/null 2>&1 && break
  kill -0 "$(cat "$PIDS/api.pid")" 2>/dev/null || { echo "nova-api died:" >&2; tail -30 "$N/api.log" "$N/api.out" >&2; exit 1; }
  sleep 0.1
done
echo "placement http://$H:$PLACEMENT_PORT"
echo "compute http://$H:$NOVA_PORT/v2.1"
