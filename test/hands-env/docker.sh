#!/usr/bin/env bash
# A private Docker Engine and a tiny busybox image for the docker hand's tests, run as root.
#
#   start   idempotent: start a private dockerd on unix:///tmp/corral-hands/docker/docker.sock if it
#           is not running (no bridge, no iptables: containers get no network but their own), wait
#           for its API, build the image corral-test/busybox:latest once (bin/busybox from
#           busybox-static and its applet links, etc/passwd, tmp/ 1777, imported from a tarball:
#           no registry is needed), then write /tmp/corral-hands/docker.env and print it:
#             export CORRAL_TEST_DOCKER_HOST=unix:///tmp/corral-hands/docker/docker.sock
#             export CORRAL_TEST_DOCKER_IMAGE=corral-test/busybox:latest
#           About 1 s the first time, 0.1 s when already up.
#   stop    stop that dockerd (its containers stop with it).
#   purge   stop, then remove everything start made: the image, dockerd's data root,
#           /tmp/corral-hands/docker and the env file (the next start is a cold one).
#   env     print the env file.
#
# Packages: docker.io busybox-static (installed here when dockerd or busybox is missing).
# Logs: /tmp/corral-hands/docker/dockerd.log.
set -euo pipefail

# Absolute, taken before anything changes directory.
SELF=$(readlink -f "${BASH_SOURCE[0]}")
HERE=$(dirname "$SELF")
BASE=/tmp/corral-hands
D=$BASE/docker
SOCK=$D/docker.sock
HOST=unix://$SOCK
IMAGE=corral-test/busybox:latest
ENV_FILE=$BASE/docker.env
PIDFILE=$D/dockerd.pid
LOG=$D/dockerd.log

# The client from docker.io; any docker CLI negotiates the API version with the engine.
DOCKER_BIN=$(command -v docker || true)
[ -x /usr/bin/docker ] && DOCKER_BIN=/usr/bin/docker
docker_() { "$DOCKER_BIN" -H "$HOST" "$@"; }

die() { echo "docker.sh: $*" >&2; exit 1; }

need() {
  [ "$(id -u)" = 0 ] || die "must run as root (dockerd needs it)"
  if ! command -v dockerd >/dev/null || ! [ -x /bin/busybox ] || [ -z "$DOCKER_BIN" ]; then
    echo "docker.sh: installing docker.io busybox-static" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -o DPkg::Lock::Timeout=600 docker.io busybox-static >/dev/null ||
      { apt-get update >/dev/null && apt-get install -y -o DPkg::Lock::Timeout=600 docker.io busybox-static >/dev/null; } ||
      die "cannot install docker.io busybox-static"
    DOCKER_BIN=$(command -v docker || true)
    [ -x /usr/bin/docker ] && DOCKER_BIN=/usr/bin/docker
  fi
  command -v dockerd >/dev/null || die "dockerd not found: apt-get install -y docker.io busybox-static"
  [ -n "$DOCKER_BIN" ] || die "docker CLI not found: apt-get install -y docker.io"
}

# Our dockerd is running: the pid file names a live (not zombie) dockerd. After a hard stop
# (the session's processes killed) the file stays behind and its pid may be a zombie or reused.
running() {
  local pid
  [ -f "$PIDFILE" ] || return 1
  pid=$(cat "$PIDFILE" 2>/dev/null) || return 1
  [ -n "$pid" ] && [ -r "/proc/$pid/stat" ] || return 1
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = dockerd ] || return 1
  ! awk '{ exit ($3 == "Z") ? 0 : 1 }' "/proc/$pid/stat" 2>/dev/null
}

api_up() {
  docker_ version --format '{{.Server.APIVersion}}' >/dev/null 2>&1
}

start_engine() {
  if running && api_up; then return 0; fi
  if running; then
    # Started but not answering: give it a moment, as another caller may have just started it.
    for _ in $(seq 1 100); do api_up && return 0; sleep 0.1; done
    die "dockerd (pid $(cat "$PIDFILE")) runs but its API does not answer; see $LOG"
  fi
  # What a hard stop (every process of the last session killed) leaves behind: containerd and
  # shims of ours, their mounts and runtime state. Clear it, or dockerd waits on a dead containerd.
  pkill -9 -f -- "--exec-root $D/exec" 2>/dev/null || true
  pkill -9 -f -- "$D/exec/containerd" 2>/dev/null || true
  unmount_leftovers
  rm -rf "$D/exec"
  mkdir -p "$D/root" "$D/exec"
  rm -f "$SOCK" "$PIDFILE"
  # setsid: the daemon outlives the shell (and the test runner) that started it.
  setsid dockerd \
    --data-root "$D/root" --exec-root "$D/exec" -H "$HOST" \
    --pidfile "$PIDFILE" \
    --bridge=none --iptables=false --ip6tables=false --ip-masq=false \
    >"$LOG" 2>&1 </dev/null 9>&- &
  for _ in $(seq 1 300); do
    api_up && return 0
    if ! kill -0 $! 2>/dev/null; then tail -n 20 "$LOG" >&2; die "dockerd exited; see $LOG"; fi
    sleep 0.1
  done
  tail -n 20 "$LOG" >&2
  die "dockerd API did not answer within 30 s; see $LOG"
}

# The image works: a container from it runs /bin/sh. Existing under the name is not enough: a
# failed import can still leave an image behind.
image_works() { # image
  docker_ run --rm --network none "$1" /bin/sh -c true >/dev/null 2>&1
}

# Builds the image into a temporary name, checks it, then tags it: a failed build leaves nothing
# behind under either name.
build_image() {
  if docker_ image inspect "$IMAGE" >/dev/null 2>&1; then
    if image_works "$IMAGE"; then return 0; fi
    echo "docker.sh: $IMAGE exists but cannot run /bin/sh: removing it and building it again" >&2
    docker_ rmi -f "$IMAGE" >/dev/null 2>&1 || true
  fi
  local tmp=corral-test/busybox-build-$$:latest tar=$D/rootfs.$$.tar
  # The root filesystem is made by busybox-rootfs.sh (shared with the other engine's script),
  # into a file first: a failing maker must not reach the import as an empty stdin.
  if ! bash "$HERE/busybox-rootfs.sh" >"$tar" || ! [ -s "$tar" ]; then
    rm -f "$tar"
    die "could not make the image's root filesystem (busybox-rootfs.sh failed)"
  fi
  if ! docker_ import -c 'ENV PATH=/bin' - "$tmp" <"$tar" >/dev/null; then
    rm -f "$tar"
    docker_ rmi -f "$tmp" >/dev/null 2>&1 || true
    die "docker import of $IMAGE failed"
  fi
  rm -f "$tar"
  if ! image_works "$tmp"; then
    docker_ rmi -f "$tmp" >/dev/null 2>&1 || true
    die "the freshly built $IMAGE cannot run /bin/sh -c true; see $LOG"
  fi
  docker_ tag "$tmp" "$IMAGE" && docker_ rmi "$tmp" >/dev/null || {
    docker_ rmi -f "$tmp" "$IMAGE" >/dev/null 2>&1 || true
    die "could not tag $IMAGE"
  }
}

write_env() {
  mkdir -p "$BASE"
  printf 'export CORRAL_TEST_DOCKER_HOST=%s\nexport CORRAL_TEST_DOCKER_IMAGE=%s\n' "$HOST" "$IMAGE" >"$ENV_FILE.tmp"
  mv "$ENV_FILE.tmp" "$ENV_FILE"
  cat "$ENV_FILE"
}

# Unmounts whatever is still mounted under $D (dockerd's netns mount, container rootfs).
unmount_leftovers() {
  awk -v d="$D/" 'index($2, d) == 1 { print $2 }' /proc/mounts | sort -r | while read -r m; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done
}

stop_engine() {
  if running; then
    local pid
    pid=$(cat "$PIDFILE")
    kill "$pid"
    for _ in $(seq 1 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
    # dockerd leaves its network namespace mount behind.
    unmount_leftovers
    echo "dockerd stopped"
  else
    echo "dockerd not running"
  fi
  rm -f "$ENV_FILE"
}

case "${1:-}" in
  start)
    need
    mkdir -p "$D"
    # One starter at a time (several test files may call this together).
    exec 9>"$D/.lock"
    flock -w 120 9 || die "could not take $D/.lock"
    start_engine
    build_image
    write_env
    ;;
  stop)
    mkdir -p "$D"
    exec 9>"$D/.lock"
    flock -w 120 9 || die "could not take $D/.lock"
    stop_engine
    ;;
  purge)
    mkdir -p "$D"
    exec 9>"$D/.lock"
    flock -w 120 9 || die "could not take $D/.lock"
    stop_engine >/dev/null
    # containerd and shims of ours that outlived dockerd, then what is still mounted.
    pkill -9 -f -- "--exec-root $D/exec" 2>/dev/null || true
    pkill -9 -f -- "$D/exec/containerd" 2>/dev/null || true
    unmount_leftovers
    exec 9>&-
    rm -rf "$D" "$ENV_FILE"
    rmdir "$BASE" 2>/dev/null || true
    echo "docker test backend purged"
    ;;
  env)
    [ -f "$ENV_FILE" ] || die "no $ENV_FILE: run '$0 start' first"
    cat "$ENV_FILE"
    ;;
  *)
    echo "usage: $0 start|stop|purge|env" >&2
    exit 2
    ;;
esac
