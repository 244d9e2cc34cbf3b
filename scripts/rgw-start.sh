#!/usr/bin/env bash
# A throw-away one-node Ceph cluster (1 monitor, 1 OSD on memstore, 1 radosgw) for the S3 tests,
# run as plain background processes. Config, data, logs and pid files all live in $RGW_DIR;
# nothing touches /etc/ceph, /var/lib/ceph or systemd, and no mgr runs.
#
# Needs: apt-get install -y --no-install-recommends radosgw ceph-mon ceph-osd
# Env:   RGW_DIR (required; wiped first), RGW_PORT (S3 endpoint 127.0.0.1:RGW_PORT),
#        MON_PORT (the monitor; the OSD binds MON_PORT+1 .. MON_PORT+49),
#        S3_ACCESS_KEY, S3_SECRET_KEY (keys of the S3 user "tester")
#        RGW_OWNER_PID (optional): stop the cluster once this process is gone, however it ended
# Prints one line when ready: "ready <ms>". Stop with scripts/rgw-stop.sh (same RGW_DIR).
set -euo pipefail
: "${RGW_DIR:?RGW_DIR must name a directory to run in}" "${RGW_PORT:?}" "${MON_PORT:?}" "${S3_ACCESS_KEY:?}" "${S3_SECRET_KEY:?}"
HERE=$(cd "$(dirname "$0")" && pwd)
DIR=$RGW_DIR
T0=${EPOCHREALTIME/./}
elapsed_ms() { echo $(( (${EPOCHREALTIME/./} - T0) / 1000 )); }

# until SECONDS WHAT COMMAND...: runs COMMAND every 0.1 s until it succeeds; exit code 2 means give up.
until_ok() {
  local limit=$(( SECONDS + $1 )) what=$2 rc; shift 2
  while :; do
    rc=0; "$@" >/dev/null 2>&1 || rc=$?
    [ "$rc" -eq 0 ] && return 0
    [ "$rc" -eq 2 ] && break
    [ "$SECONDS" -ge "$limit" ] && break
    sleep 0.1
  done
  echo "rgw-start: $what did not come up; logs in $DIR/log" >&2
  return 1
}

trap 'RGW_DIR=$DIR "$HERE/rgw-stop.sh"' ERR
rm -rf "$DIR"
mkdir -p "$DIR/run" "$DIR/log" "$DIR/mon" "$DIR/osd" "$DIR/rgw"
export CEPH_CONF=$DIR/ceph.conf
FSID=$(cat /proc/sys/kernel/random/uuid)

cat >"$CEPH_CONF" <<CONF
[global]
fsid = $FSID
mon host = v2:127.0.0.1:$MON_PORT
public addr = 127.0.0.1
ms bind msgr1 = false
ms bind ipv6 = false
ms bind port min = $((MON_PORT + 1))
ms bind port max = $((MON_PORT + 49))
run dir = $DIR/run
admin socket = $DIR/run/\$name.asok
pid file = $DIR/run/\$name.pid
log file = $DIR/log/\$name.log
crash dir = $DIR/crash
# No cephx between the daemons; radosgw still checks every S3 signature itself.
auth cluster required = none
auth service required = none
auth client required = none
# radosgw asks for "secure" monitor sessions by default, which need cephx.
ms mon client mode = crc
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
mon allow pool size one = true
mon max pg per osd = 1000
mon warn on pool no redundancy = false
mon data avail crit = 1
mon data avail warn = 2

[mon]
mon data = $DIR/mon
mon cluster log file = $DIR/log/cluster.log
# Commit each map change at once: radosgw's first start sends ~15 pool commands, 1 s each by default.
paxos propose interval = 0.01
paxos min wait = 0.001

[osd]
osd data = $DIR/osd
osd objectstore = memstore
osd crush initial weight = 1
memstore device bytes = 4294967296

[client.rgw.a]
rgw data = $DIR/rgw
rgw frontends = beast endpoint=127.0.0.1:$RGW_PORT tcp_nodelay=1
rgw dns name = localhost
rgw thread pool size = 64
rgw enable usage log = false
CONF

# Each daemon forks into the background with no descriptor of ours (</dev/null >>log), so a
# caller reading this script's output sees end-of-file when the script ends.
monmaptool --create --fsid "$FSID" --addv a "[v2:127.0.0.1:$MON_PORT]" "$DIR/monmap" >/dev/null
ceph-mon --mkfs -i a --monmap "$DIR/monmap" >"$DIR/log/mon-mkfs.out" 2>&1
ceph-mon -i a </dev/null >>"$DIR/log/mon.stderr" 2>&1
until_ok 30 "the monitor" ceph --connect-timeout 2 mon stat

OSD_UUID=$(cat /proc/sys/kernel/random/uuid)
ceph osd new "$OSD_UUID" 0 >/dev/null
ceph-osd -i 0 --mkfs --osd-uuid "$OSD_UUID" >"$DIR/log/osd-mkfs.out" 2>&1
ceph-osd -i 0 </dev/null >>"$DIR/log/osd.stderr" 2>&1
osd_up() { ceph osd stat | grep -q ' 1 up'; }
until_ok 60 "the OSD" osd_up

# A process that exited but is not yet reaped still shows in /proc as a zombie (state Z).
running() { local state; state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1; [ "$state" != Z ]; }
timeout 120 radosgw -n client.rgw.a </dev/null >>"$DIR/log/rgw.stderr" 2>&1
rgw_up() {
  local pid; pid=$(cat "$DIR/run/client.rgw.a.pid" 2>/dev/null) || return 1
  running "$pid" || return 2
  exec 3<>"/dev/tcp/127.0.0.1/$RGW_PORT" && exec 3>&-
}
until_ok 30 "radosgw" rgw_up

radosgw-admin user create --uid=tester --display-name=tester \
  --access-key="$S3_ACCESS_KEY" --secret-key="$S3_SECRET_KEY" >"$DIR/log/user.json"
if [ -n "${RGW_OWNER_PID:-}" ]; then
  # A watcher, detached like the daemons: when the owner (a test worker) dies without
  # stopping the cluster, it does so. rgw-stop.sh ends the watcher on a normal stop.
  setsid bash -c 'while kill -0 "$1" 2>/dev/null && [ -d "$2/run" ]; do sleep 1; done; RGW_DIR=$2 exec "$3/rgw-stop.sh"' \
    rgw-watch "$RGW_OWNER_PID" "$DIR" "$HERE" </dev/null >/dev/null 2>&1 &
  echo $! >"$DIR/run/watcher.pid"
fi
trap - ERR
echo "ready $(elapsed_ms)"
