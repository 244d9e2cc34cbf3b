#!/usr/bin/env bash
# Stops what scripts/rgw-start.sh started in $RGW_DIR, by the PIDs in its pid files: radosgw,
# then the OSD, then the monitor. SIGTERM, then SIGKILL after 10 s. Removes $RGW_DIR.
: "${RGW_DIR:?RGW_DIR must name the directory rgw-start.sh ran in}"
running() { local state; state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1; [ "$state" != Z ]; }
stop() {
  local file=$RGW_DIR/run/$1.pid pid
  [ -f "$file" ] || return 0
  pid=$(cat "$file")
  running "$pid" || return 0
  kill "$pid" 2>/dev/null
  for _ in $(seq 200); do running "$pid" || return 0; sleep 0.05; done
  kill -9 "$pid" 2>/dev/null
  return 0
}
stop client.rgw.a
stop osd.0
stop mon.a
# The owner watcher (rgw-start.sh with RGW_OWNER_PID), unless it is the one stopping.
if [ -f "$RGW_DIR/run/watcher.pid" ] && [ "$(cat "$RGW_DIR/run/watcher.pid")" != "$$" ]; then
  kill "$(cat "$RGW_DIR/run/watcher.pid")" 2>/dev/null
fi
rm -rf "$RGW_DIR"
