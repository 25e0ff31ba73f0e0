#!/usr/bin/env bash
# A network namespace for a self-hosted worker that reaches Corral only outward, as a machine
# behind NAT does: a veth pair with a /30 of its own (10.204.0.1 on the host side, 10.204.0.2
# inside), and a firewall inside that drops every connection that was not opened from inside.
#
#   bash test/hands-env/worker-ns.sh start   # idempotent; prints NS=… HOST_ADDR=… NS_ADDR=…
#   bash test/hands-env/worker-ns.sh stop    # kills what runs inside, deletes the namespace and pair
#
# Fails (exit 1, a reason on stderr) where `ip netns` or iptables is not permitted.
set -u
NS=corral-wns
VETH_HOST=corral-wv0
VETH_NS=corral-wv1
HOST_ADDR=10.204.0.1
NS_ADDR=10.204.0.2

fail() { echo "worker-ns: $*" >&2; exit 1; }

start() {
  command -v ip >/dev/null || fail "ip (iproute2) is missing"
  command -v iptables >/dev/null || fail "iptables is missing"
  ip netns list >/dev/null 2>&1 || fail "ip netns is not available"
  if ! ip netns list | grep -qw "^$NS"; then
    ip netns add "$NS" 2>/dev/null || fail "ip netns add is not permitted here"
  fi
  if ! ip link show "$VETH_HOST" >/dev/null 2>&1; then
    ip link add "$VETH_HOST" type veth peer name "$VETH_NS" || fail "cannot create a veth pair"
    ip link set "$VETH_NS" netns "$NS" || fail "cannot move $VETH_NS into $NS"
    ip addr add "$HOST_ADDR/30" dev "$VETH_HOST" || fail "cannot address $VETH_HOST"
    ip netns exec "$NS" ip addr add "$NS_ADDR/30" dev "$VETH_NS" || fail "cannot address $VETH_NS"
  fi
  ip link set "$VETH_HOST" up || fail "cannot bring $VETH_HOST up"
  ip netns exec "$NS" ip link set lo up
  ip netns exec "$NS" ip link set "$VETH_NS" up || fail "cannot bring $VETH_NS up"
  # Only outward: replies to connections opened inside come in; nothing else does.
  ip netns exec "$NS" iptables -F INPUT 2>/dev/null || fail "iptables is not permitted in $NS"
  ip netns exec "$NS" iptables -A INPUT -i lo -j ACCEPT
  ip netns exec "$NS" iptables -A INPUT -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT || fail "conntrack is not available"
  ip netns exec "$NS" iptables -P INPUT DROP
  echo "NS=$NS HOST_ADDR=$HOST_ADDR NS_ADDR=$NS_ADDR"
}

stop() {
  if ip netns list 2>/dev/null | grep -qw "^$NS"; then
    for p in $(ip netns pids "$NS" 2>/dev/null); do kill -9 "$p" 2>/dev/null || true; done
    ip netns del "$NS"
  fi
  ip link del "$VETH_HOST" 2>/dev/null || true
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
