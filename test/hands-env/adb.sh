#!/usr/bin/env bash
# A private adb server and two test "devices" for the adb hand's tests.
#
#   bash test/hands-env/adb.sh start         # idempotent: server on 15037, devices on 6555 and 6556, connected
#   bash test/hands-env/adb.sh revive PORT   # after a device died: start its daemon again and reconnect it
#   bash test/hands-env/adb.sh stop          # stops the devices and the server
#   bash test/hands-env/adb.sh purge         # stop, then remove /tmp/corral-hands/adb (devices' files, keys)
#
# Needs: apt-get install -y -o DPkg::Lock::Timeout=600 adb   (and node; run from anywhere)
# Writes /tmp/corral-hands/adb.env and prints it:
#   ANDROID_ADB_SERVER_PORT        the private server's port (15037); adb and the hand read it
#   CORRAL_TEST_ADB_SERIAL         127.0.0.1:6555, the device most tests use
#   CORRAL_TEST_ADB_SERIAL2        127.0.0.1:6556, a second device that the death test kills
#   CORRAL_TEST_ADB_PIDFILE2       that device daemon's pid file (SIGKILL it to make the device die)
#   CORRAL_TEST_ADB_WORKDIR        a work folder on device 1, as the device sees it
#   CORRAL_TEST_ADB_HOST_WORKDIR   the same folder as this machine sees it (to check "on the device side")
#   CORRAL_TEST_ADB_DEVICE_ROOT    device 1's own folder on this machine
#   CORRAL_TEST_ADB_JAILED         1 when the devices have their own / (see below), else 0
#
# The devices are test/fixtures/adb-device-main.ts: a daemon that speaks adb's transport
# protocol (no adbd exists for Debian and no emulator runs here). Commands run for real on this
# machine. As root, each daemon runs in a private mount namespace, chrooted into a root of its
# own: this machine's /usr, /etc, /tmp, /home, /root, … are bound in, while /data, /sdcard and
# /system are the device's own folders under /tmp/corral-hands/adb/device-PORT, so Android
# paths such as /data/local/tmp/corral work and nothing is created in this machine's /.
# Without root (or without unshare, or with CORRAL_TEST_ADB_NO_JAIL=1) the daemon runs plainly,
# its shell starts in device-PORT, and absolute paths are this machine's (CORRAL_TEST_ADB_WORKDIR
# says where to work). The choice is made when the devices start, and kept until `stop`.
#
# A device whose daemon dies stays `offline` on the server (for about a minute, while the server
# retries, then it is dropped): to bring it back, start the daemon again, then
# `adb disconnect SERIAL` and `adb connect SERIAL`. `revive PORT` does exactly that.
set -euo pipefail

SELF=$(readlink -f "${BASH_SOURCE[0]}")
REPO=$(cd "$(dirname "$SELF")/../.." && pwd)
BASE=/tmp/corral-hands
D=$BASE/adb
ADB_PORT=15037
PORTS=(6555 6556)
ENV_FILE=$BASE/adb.env
SERVER_PIDFILE=$D/server.pid
SERVER_LOG=$D/server.log

die() { echo "adb.sh: $*" >&2; exit 1; }

# Every adb call goes to the private server, with its own HOME (keys, config).
adb_() { HOME=$D/home ANDROID_ADB_SERVER_PORT=$ADB_PORT adb -P "$ADB_PORT" "$@"; }

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Alive and not a zombie (this machine's init may not reap orphans).
alive() { kill -0 "$1" 2>/dev/null && ! ps -o stat= -p "$1" 2>/dev/null | grep -q '^Z'; }

need() {
  command -v adb >/dev/null || die "adb not found: apt-get install -y -o DPkg::Lock::Timeout=600 adb"
  command -v node >/dev/null || die "node not found"
  [ -f "$REPO/node_modules/tsx/package.json" ] || die "tsx missing in $REPO/node_modules (npm install)"
}

can_jail() {
  [ "${CORRAL_TEST_ADB_NO_JAIL:-0}" = 1 ] && return 1
  [ "$(id -u)" = 0 ] && command -v unshare >/dev/null && command -v chroot >/dev/null || return 1
  mkdir -p "$D/jail-probe"
  unshare -m --propagation private -- mount -t tmpfs corral-probe "$D/jail-probe" 2>/dev/null
}

# --- the adb server ------------------------------------------------------------------------------

server_running() { [ -f "$SERVER_PIDFILE" ] && alive "$(cat "$SERVER_PIDFILE")"; }

start_server() {
  if server_running && port_open "$ADB_PORT"; then return 0; fi
  if port_open "$ADB_PORT"; then
    # A server we did not start (or whose pid file is gone) holds the port: use it if it is adb.
    adb_ version >/dev/null 2>&1 && adb_ devices >/dev/null 2>&1 && return 0
    die "port $ADB_PORT is taken by something that is not an adb server"
  fi
  mkdir -p "$D/home"
  # setsid: the server outlives the shell (and the test runner) that started it.
  HOME=$D/home setsid adb -P "$ADB_PORT" nodaemon server >"$SERVER_LOG" 2>&1 </dev/null 9>&- &
  echo $! >"$SERVER_PIDFILE"
  for _ in $(seq 1 100); do
    port_open "$ADB_PORT" && return 0
    alive "$(cat "$SERVER_PIDFILE")" || { tail -n 20 "$SERVER_LOG" >&2; die "the adb server exited; see $SERVER_LOG"; }
    sleep 0.1
  done
  die "the adb server did not listen on $ADB_PORT within 10 s; see $SERVER_LOG"
}

# --- the devices -------------------------------------------------------------------------------

devroot() { echo "$D/device-$1"; }
pidfile() { echo "$D/device-$1.pid"; }

device_running() { [ -f "$(pidfile "$1")" ] && alive "$(cat "$(pidfile "$1")")"; }

# Internal, run by `unshare -m`: builds the device's root and execs the daemon chrooted in it.
jail_exec() {
  local port=$1 root jail e name
  root=$(devroot "$port")
  jail=$D/jail-$port
  mount -t tmpfs -o mode=755 "corral-device-$port" "$jail"
  for name in usr bin sbin lib lib32 lib64 libx32 etc opt var run home root tmp dev proc sys; do
    e=/$name
    if [ -L "$e" ]; then
      ln -s "$(readlink "$e")" "$jail/$name"
    elif [ -d "$e" ]; then
      mkdir -p "$jail/$name"
      case $name in
        dev | proc | sys) mount --rbind "$e" "$jail/$name" ;;
        *) mount --bind "$e" "$jail/$name" ;;
      esac
    fi
  done
  # The repository, wherever it lives, so the daemon's code (and tsx) are there.
  if [ ! -d "$jail$REPO" ]; then
    mkdir -p "$jail$REPO"
    mount --bind "$REPO" "$jail$REPO"
  fi
  for name in data sdcard system; do
    mkdir -p "$jail/$name"
    mount --bind "$root/$name" "$jail/$name"
  done
  cd /
  exec chroot "$jail" env -C "$REPO" node --import tsx test/fixtures/adb-device-main.ts \
    --port "$port" --root / --pidfile "$(pidfile "$port")"
}

start_device() {
  local port=$1 root log
  root=$(devroot "$port")
  log=$D/device-$port.log
  if device_running "$port" && port_open "$port"; then return 0; fi
  if port_open "$port"; then die "port $port is taken by something that is not our device daemon"; fi
  rm -f "$(pidfile "$port")"
  mkdir -p "$root/data/local/tmp" "$root/sdcard" "$root/system" "$D/jail-$port"
  chmod 1777 "$root/data/local/tmp"
  if [ "$JAILED" = 1 ]; then
    setsid unshare -m --propagation private -- bash "$SELF" _jail "$port" >>"$log" 2>&1 </dev/null 9>&- &
  else
    (cd "$REPO" && exec setsid node --import tsx test/fixtures/adb-device-main.ts \
      --port "$port" --root "$root" --pidfile "$(pidfile "$port")" >>"$log" 2>&1 </dev/null 9>&-) &
  fi
  local starter=$!
  for _ in $(seq 1 150); do
    if port_open "$port" && [ -s "$(pidfile "$port")" ]; then return 0; fi
    alive "$starter" || { tail -n 20 "$log" >&2; die "the device daemon on $port exited; see $log"; }
    sleep 0.1
  done
  die "the device daemon did not listen on $port within 15 s; see $log"
}

state_of() { adb_ -s "127.0.0.1:$1" get-state 2>/dev/null || true; }

# Connects the server to the device on PORT; a stale (offline) entry is dropped first.
connect_device() {
  local port=$1 serial=127.0.0.1:$1 state
  state=$(state_of "$port")
  [ "$state" = device ] && return 0
  adb_ disconnect "$serial" >/dev/null 2>&1 || true
  for _ in $(seq 1 50); do
    adb_ connect "$serial" >/dev/null 2>&1 || true
    for _ in $(seq 1 10); do
      [ "$(state_of "$port")" = device ] && return 0
      sleep 0.1
    done
  done
  adb_ devices -l >&2
  die "device $serial did not come online on the adb server"
}

write_env() {
  local root wd hostwd
  root=$(devroot "${PORTS[0]}")
  if [ "$JAILED" = 1 ]; then
    wd=/data/local/tmp/corral-test
    hostwd=$root$wd
  else
    wd=$root/data/local/tmp/corral-test
    hostwd=$wd
  fi
  mkdir -p "$BASE"
  {
    echo "export ANDROID_ADB_SERVER_PORT=$ADB_PORT"
    echo "export CORRAL_TEST_ADB_SERIAL=127.0.0.1:${PORTS[0]}"
    echo "export CORRAL_TEST_ADB_SERIAL2=127.0.0.1:${PORTS[1]}"
    echo "export CORRAL_TEST_ADB_PIDFILE2=$(pidfile "${PORTS[1]}")"
    echo "export CORRAL_TEST_ADB_WORKDIR=$wd"
    echo "export CORRAL_TEST_ADB_HOST_WORKDIR=$hostwd"
    echo "export CORRAL_TEST_ADB_DEVICE_ROOT=$root"
    echo "export CORRAL_TEST_ADB_JAILED=$JAILED"
  } >"$ENV_FILE.tmp"
  mv "$ENV_FILE.tmp" "$ENV_FILE"
  cat "$ENV_FILE"
}

stop_pid() {
  local pid=$1
  kill "$pid" 2>/dev/null || return 0
  for _ in $(seq 1 50); do alive "$pid" || return 0; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
}

stop_all() {
  local port
  for port in "${PORTS[@]}"; do
    if device_running "$port"; then stop_pid "$(cat "$(pidfile "$port")")"; echo "device $port stopped"; fi
    rm -f "$(pidfile "$port")"
  done
  if server_running; then
    adb_ kill-server >/dev/null 2>&1 || true
    stop_pid "$(cat "$SERVER_PIDFILE")"
    echo "adb server stopped"
  fi
  rm -f "$SERVER_PIDFILE" "$ENV_FILE"
}

lock() {
  mkdir -p "$D"
  # One caller at a time (several test files or a bench may call this together). The daemons
  # started below must not inherit fd 9, or they would hold the lock forever.
  exec 9>"$D/.lock"
  flock -w 120 9 || die "could not take $D/.lock"
}

JAILED=0
if [ -f "$D/jailed" ]; then JAILED=$(cat "$D/jailed"); fi

case "${1:-}" in
  _jail)
    jail_exec "$2"
    ;;
  start)
    need
    lock
    if ! device_running "${PORTS[0]}" && ! device_running "${PORTS[1]}"; then
      if can_jail; then JAILED=1; else JAILED=0; echo "adb.sh: devices run without their own / (no root, no unshare, or CORRAL_TEST_ADB_NO_JAIL=1; see the header)" >&2; fi
      echo "$JAILED" >"$D/jailed"
    fi
    start_server
    for port in "${PORTS[@]}"; do start_device "$port"; done
    for port in "${PORTS[@]}"; do connect_device "$port"; done
    write_env
    ;;
  revive)
    [[ "${2:-}" =~ ^[0-9]+$ ]] || die "usage: $0 revive PORT"
    need
    lock
    start_server
    start_device "$2"
    # A dead TCP device stays offline: disconnect, then connect again.
    adb_ disconnect "127.0.0.1:$2" >/dev/null 2>&1 || true
    connect_device "$2"
    echo "device 127.0.0.1:$2 is back"
    ;;
  stop)
    lock
    stop_all
    ;;
  purge)
    lock
    stop_all
    exec 9>&-
    # The jails' mounts live in the daemons' private mount namespaces, gone with them; only
    # folders remain here.
    rm -rf "$D" "$ENV_FILE"
    rmdir "$BASE" 2>/dev/null || true
    echo "adb test backend purged"
    ;;
  *)
    echo "usage: $0 start|revive PORT|stop|purge" >&2
    exit 2
    ;;
esac
