#!/usr/bin/env bash
# Test hosts for the SSH hand: real OpenSSH daemons, run as root, idempotent.
#
#   start          (once) make user corral-test, a client key pair and host keys in
#                  /tmp/corral-hands/ssh/; start a private sshd on 127.0.0.1:2222 and a second one
#                  inside network namespace corral-ns1 (10.203.0.2:2222, reached over a veth pair
#                  whose /30 exists only on that pair); write /tmp/corral-hands/ssh.env and print it.
#                  Fast when everything is already up; restarts a daemon that was killed.
#   stop           kill both daemons, delete the namespace and its veth pair.
#   purge          stop, then remove the user corral-test (and its home), the keys and
#                  /tmp/corral-hands/ssh: the next start is a cold one.
#   env            print the env file.
#   kill-ns        kill -9 every process in the namespace (the host "dies").
#   link-down      take the host side of the veth pair down (the link is cut, nothing dies).
#   link-up        bring it back up.
#   kill-sessions  kill -9 the per-connection processes of the loopback sshd (its listener stays).
#   freeze-sessions / thaw-sessions
#                  SIGSTOP / SIGCONT those per-connection processes: a host that stops answering.
#
# The namespace part fails soft: when `ip netns` is not permitted, the env file has
# CORRAL_TEST_SSH_NS_HOST empty and CORRAL_TEST_SSH_NS_ERROR says why; the tests then simulate a
# dying host with kill-sessions and a cut link with freeze-sessions on the loopback daemon.
#
# Packages: openssh-server openssh-client iproute2 (installed here when sshd or ip is missing).
# The only addresses used are 127.0.0.1 and the /30 of the veth pair this script creates.
set -euo pipefail

BASE=/tmp/corral-hands
DIR=$BASE/ssh
ENV_FILE=$BASE/ssh.env
USER_NAME=corral-test
LOOP_HOST=127.0.0.1
PORT=2222
NS=corral-ns1
VETH_HOST=corral-veth0
VETH_NS=corral-veth1
NS_HOST_ADDR=10.203.0.1
NS_ADDR=10.203.0.2
SSHD=/usr/sbin/sshd

log() { echo "ssh.sh: $*" >&2; }
die() { log "$*"; exit 1; }

need_root() { [ "$(id -u)" = 0 ] || die "run as root (it adds a user, starts sshd and makes a network namespace)"; }

ensure_packages() {
  if [ -x "$SSHD" ] && command -v ssh-keygen >/dev/null && command -v ip >/dev/null; then return; fi
  log "installing openssh-server openssh-client iproute2"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -o DPkg::Lock::Timeout=600 openssh-server openssh-client iproute2 >/dev/null ||
    { apt-get update >/dev/null && apt-get install -y -o DPkg::Lock::Timeout=600 openssh-server openssh-client iproute2 >/dev/null; } ||
    die "cannot install openssh-server openssh-client iproute2"
}

ensure_user() {
  if ! id "$USER_NAME" >/dev/null 2>&1; then
    useradd -m -s /bin/bash "$USER_NAME"
  fi
  # '*' = no password, but not locked: key login works with UsePAM no.
  if [ "$(getent shadow "$USER_NAME" | cut -d: -f2)" != '*' ]; then usermod -p '*' "$USER_NAME"; fi
}

# A key file that is there but unusable (empty, cut short by a killed run) is made again: what
# the tests need is a key ssh-keygen can read, not a file with its name.
key_ok() { [ -s "$1" ] && [ -s "$1.pub" ] && ssh-keygen -y -f "$1" >/dev/null 2>&1; }
make_key() { # file comment
  key_ok "$1" && return 0
  rm -f "$1" "$1.pub"
  ssh-keygen -q -t ed25519 -N '' -C "$2" -f "$1"
}

ensure_keys() {
  mkdir -p "$DIR"
  chmod 0755 "$BASE" "$DIR"
  make_key "$DIR/id_ed25519" corral-test-client
  chmod 0600 "$DIR/id_ed25519"
  # sshd reads AuthorizedKeysFile as the user: it must be readable by corral-test.
  install -m 0644 "$DIR/id_ed25519.pub" "$DIR/authorized_keys"
  for h in loop ns; do
    make_key "$DIR/host_${h}_ed25519_key" "corral-test-host-$h"
    chmod 0600 "$DIR/host_${h}_ed25519_key"
  done
}

write_sshd_config() { # name listen-address
  local name=$1 addr=$2
  cat >"$DIR/sshd_$name.conf" <<EOF
Port $PORT
ListenAddress $addr
HostKey $DIR/host_${name}_ed25519_key
PidFile $DIR/sshd_$name.pid
AuthorizedKeysFile $DIR/authorized_keys
AllowUsers $USER_NAME
PermitRootLogin no
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
MaxSessions 10
MaxStartups 50:30:100
Subsystem sftp internal-sftp
EOF
}

# The pid of a running daemon started with our config, or nothing.
daemon_pid() { # name
  local pidfile=$DIR/sshd_$1.pid pid
  [ -f "$pidfile" ] || return 0
  pid=$(cat "$pidfile" 2>/dev/null || true)
  [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] || return 0
  if tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q "sshd_$1.conf"; then echo "$pid"; fi
}

start_daemon() { # name [netns]; returns 1 (after logging) when it does not come up
  local name=$1 ns=${2:-} i
  [ -n "$(daemon_pid "$name")" ] && return 0
  rm -f "$DIR/sshd_$name.pid"
  mkdir -p /run/sshd
  chmod 0755 /run/sshd
  # Without -D sshd daemonises (stdio to /dev/null) and writes its PidFile once it listens.
  if [ -n "$ns" ]; then
    ip netns exec "$ns" "$SSHD" -f "$DIR/sshd_$name.conf" -E "$DIR/sshd_$name.log" || true
  else
    "$SSHD" -f "$DIR/sshd_$name.conf" -E "$DIR/sshd_$name.log" || true
  fi
  for i in $(seq 1 100); do
    [ -n "$(daemon_pid "$name")" ] && return 0
    sleep 0.05
  done
  log "sshd ($name) did not start; see $DIR/sshd_$name.log"
  return 1
}

stop_daemon() { # name
  local pid
  # The one in the pid file, and any other listener started with our config: a start that raced
  # another lost its pid file and kept the port, and every later start failed to bind it.
  for pid in $(daemon_pid "$1") $(pgrep -f "sshd -f $DIR/sshd_$1.conf " 2>/dev/null || true); do
    # The listener and its per-connection children.
    for c in $(ps -o pid= --ppid "$pid" 2>/dev/null); do kill -9 "$c" 2>/dev/null || true; done
    kill "$pid" 2>/dev/null || true
  done
  rm -f "$DIR/sshd_$1.pid"
}

NS_ERROR=""
# Every step checks its own result: this runs inside `if`, where set -e does not apply.
setup_ns() {
  ip netns list >/dev/null 2>&1 || { NS_ERROR="ip netns is not available"; return 1; }
  if ! ip netns list | grep -qw "^$NS"; then
    ip netns add "$NS" 2>/dev/null || { NS_ERROR="ip netns add is not permitted here"; return 1; }
  fi
  if ! ip link show "$VETH_HOST" >/dev/null 2>&1; then
    # Refuse to add our /30 if something else already uses those addresses.
    if ip -o -4 addr show | grep -q " 10\.203\.0\.[0-3]/"; then
      NS_ERROR="10.203.0.0/30 is already in use on this machine"
      return 1
    fi
    ip link add "$VETH_HOST" type veth peer name "$VETH_NS" 2>/dev/null || { NS_ERROR="cannot create a veth pair"; return 1; }
    ip link set "$VETH_NS" netns "$NS" || { NS_ERROR="cannot move the veth end into $NS"; return 1; }
    ip addr add "$NS_HOST_ADDR/30" dev "$VETH_HOST" || { NS_ERROR="cannot address $VETH_HOST"; return 1; }
    ip netns exec "$NS" ip addr add "$NS_ADDR/30" dev "$VETH_NS" || { NS_ERROR="cannot address $VETH_NS in $NS"; return 1; }
  fi
  ip link set "$VETH_HOST" up || { NS_ERROR="cannot bring $VETH_HOST up"; return 1; }
  ip netns exec "$NS" ip link set lo up || { NS_ERROR="cannot bring lo up in $NS"; return 1; }
  ip netns exec "$NS" ip link set "$VETH_NS" up || { NS_ERROR="cannot bring $VETH_NS up in $NS"; return 1; }
  write_sshd_config ns "$NS_ADDR" || { NS_ERROR="cannot write the sshd config"; return 1; }
  start_daemon ns "$NS" || { NS_ERROR="sshd in the namespace did not start (see $DIR/sshd_ns.log)"; return 1; }
}

write_env() {
  local ns_host="" ns_port="" ns_name=""
  if [ -z "$NS_ERROR" ]; then ns_host=$NS_ADDR ns_port=$PORT ns_name=$NS; fi
  local tmp=$ENV_FILE.tmp.$$
  cat >"$tmp" <<EOF
export CORRAL_TEST_SSH_HOST=$LOOP_HOST
export CORRAL_TEST_SSH_PORT=$PORT
export CORRAL_TEST_SSH_USER=$USER_NAME
export CORRAL_TEST_SSH_KEY=$DIR/id_ed25519
export CORRAL_TEST_SSH_HOST_PUBKEY=$DIR/host_loop_ed25519_key.pub
export CORRAL_TEST_SSH_NS_HOST=$ns_host
export CORRAL_TEST_SSH_NS_PORT=$ns_port
export CORRAL_TEST_SSH_NS_NAME=$ns_name
export CORRAL_TEST_SSH_NS_HOST_PUBKEY=$DIR/host_ns_ed25519_key.pub
export CORRAL_TEST_SSH_NS_ERROR='$NS_ERROR'
EOF
  mv "$tmp" "$ENV_FILE"
}

loop_children() {
  local pid
  pid=$(daemon_pid loop)
  [ -n "$pid" ] || die "the loopback sshd is not running"
  ps -o pid= --ppid "$pid" || true
}

cmd=${1:-}
case "$cmd" in
  start)
    need_root
    ensure_packages
    ensure_user
    ensure_keys
    write_sshd_config loop "$LOOP_HOST"
    start_daemon loop || exit 1
    if ! setup_ns; then log "no namespace host: $NS_ERROR (the tests fall back to the loopback daemon)"; fi
    write_env
    cat "$ENV_FILE"
    ;;
  stop | purge)
    need_root
    stop_daemon loop
    stop_daemon ns
    if ip netns list 2>/dev/null | grep -qw "^$NS"; then
      for p in $(ip netns pids "$NS" 2>/dev/null); do kill -9 "$p" 2>/dev/null || true; done
      ip netns del "$NS"
    fi
    ip link del "$VETH_HOST" 2>/dev/null || true
    rm -f "$ENV_FILE"
    if [ "$cmd" = purge ]; then
      # The test user's processes (sessions the daemons left), then the user and its home.
      pkill -9 -u "$USER_NAME" 2>/dev/null || true
      if id "$USER_NAME" >/dev/null 2>&1; then userdel -r -f "$USER_NAME" >/dev/null 2>&1 || userdel -f "$USER_NAME"; fi
      rm -rf "$DIR"
      rmdir "$BASE" 2>/dev/null || true
      echo "ssh test backend purged"
    fi
    ;;
  env)
    cat "$ENV_FILE"
    ;;
  kill-ns)
    need_root
    pids=$(ip netns pids "$NS")
    [ -n "$pids" ] || die "nothing runs in $NS"
    kill -9 $pids
    ;;
  link-down)
    need_root
    ip link set "$VETH_HOST" down
    ;;
  link-up)
    need_root
    ip link set "$VETH_HOST" up
    ;;
  kill-sessions)
    need_root
    for c in $(loop_children); do
      # The monitor and the unprivileged child that holds the connection.
      kids=$(ps -o pid= --ppid "$c" 2>/dev/null || true)
      kill -9 "$c" $kids 2>/dev/null || true
    done
    ;;
  freeze-sessions | thaw-sessions)
    need_root
    sig=STOP
    [ "$cmd" = thaw-sessions ] && sig=CONT
    for c in $(loop_children); do
      # The monitor and the unprivileged child that talks to the client.
      for g in $c $(ps -o pid= --ppid "$c" 2>/dev/null); do kill -"$sig" "$g" 2>/dev/null || true; done
    done
    ;;
  *)
    echo "usage: $0 start|stop|purge|env|kill-ns|link-down|link-up|kill-sessions|freeze-sessions|thaw-sessions" >&2
    exit 2
    ;;
esac
