#!/usr/bin/env bash
# A private Podman (its Docker-compatible API) and the same tiny busybox image as docker.sh, for
# running the docker hand's tests against Podman. Run as root.
#
#   start   idempotent: start a private rootful `podman system service` on
#           unix:///tmp/corral-hands/podman/podman.sock if it is not running (its own storage,
#           run and tmp folders under /tmp/corral-hands/podman, its own containers.conf and
#           storage.conf, cgroupfs, events in a file), wait for its API, import the image
#           corral-test/busybox:latest once (bin/busybox from busybox-static and its applet links,
#           etc/passwd, tmp/ 1777: no registry is needed), then write /tmp/corral-hands/podman.env
#           and print it:
#             export CORRAL_TEST_PODMAN_HOST=unix:///tmp/corral-hands/podman/podman.sock
#             export CORRAL_TEST_PODMAN_IMAGE=corral-test/busybox:latest
#           About 0.7 s on a fresh machine once the packages are in (apt: about 11 s more), 0.06 s
#           when already up; a cold start's step times go to /tmp/corral-hands/podman/start.log.
#           The OCI runtime is runc when installed, else crun; CORRAL_TEST_PODMAN_RUNTIME=crun|runc
#           picks one (at a cold start).
#   stop    remove its containers and stop the service.
#   purge   stop, then remove everything start made: the image, the storage, the configuration,
#           /tmp/corral-hands/podman and the env file (the next start is a cold one).
#   env     print the env file.
#
# Packages: podman runc busybox-static (installed here, --no-install-recommends, when missing;
# podman brings conmon; rootful with the kernel's overlayfs, so no uidmap, slirp4netns or
# fuse-overlayfs).
# Logs: /tmp/corral-hands/podman/service.log.
#
# Why the containers.conf: Podman's default container ulimits (nofile 1048576) exceed this
# machine's hard limits, and runc then fails every start with "error setting rlimits"; the
# defaults here are the hard limits of the shell that starts the service.
set -euo pipefail

# Absolute, taken before anything changes directory (start_service cds into $D).
SELF=$(readlink -f "${BASH_SOURCE[0]}")
HERE=$(dirname "$SELF")
BASE=/tmp/corral-hands
D=$BASE/podman
SOCK=$D/podman.sock
HOST=unix://$SOCK
IMAGE=corral-test/busybox:latest
ENV_FILE=$BASE/podman.env
PIDFILE=$D/service.pid
LOG=$D/service.log
TIMES=$D/start.log
export CONTAINERS_CONF=$D/containers.conf
export CONTAINERS_STORAGE_CONF=$D/storage.conf
# No registry is reachable, and nothing here pulls: an empty registries.conf keeps it that way.
export CONTAINERS_REGISTRIES_CONF=$D/registries.conf

die() { echo "podman.sh: $*" >&2; exit 1; }
# Installed? (runc is in /usr/sbin, which some callers' PATH lacks.)
have() { command -v "$1" >/dev/null || [ -x "/usr/sbin/$1" ]; }

# Step times of a start that did something (a cold start, an image import), kept in $TIMES.
T0=$(date +%s%N)
STEPS=
WORKED=
step() { # step NAME: notes the time since the last step
  local now
  now=$(date +%s%N)
  STEPS+=$(printf '%s %-10s %5d ms' "$(date +%T)" "$1" $(((now - T0) / 1000000)))$'\n'
  T0=$now
}

need() {
  [ "$(id -u)" = 0 ] || die "must run as root (a rootful podman service)"
  # runc, not only podman's default alternative crun: crun 1.8 (Debian 12) refuses to run on
  # hosts with the hybrid cgroup layout (v1 plus a v2 mount), as here.
  if ! have podman || ! have runc || ! [ -x /bin/busybox ]; then
    echo "podman.sh: installing podman runc busybox-static" >&2
    export DEBIAN_FRONTEND=noninteractive
    local pkgs=(podman runc busybox-static)
    apt-get install -y --no-install-recommends -o DPkg::Lock::Timeout=600 "${pkgs[@]}" >/dev/null ||
      { apt-get update >/dev/null && apt-get install -y --no-install-recommends -o DPkg::Lock::Timeout=600 "${pkgs[@]}" >/dev/null; } ||
      die "cannot install podman runc busybox-static"
  fi
  command -v podman >/dev/null || die "podman not found: apt-get install -y --no-install-recommends podman runc busybox-static"
}

# The configuration files, rewritten at every cold start (the limits are this shell's).
write_config() {
  local nofile nproc runtime
  # The OCI runtime: CORRAL_TEST_PODMAN_RUNTIME (runc or crun) if set, else runc when present
  # (what Docker uses too), else crun. Podman itself would prefer crun when both exist, and
  # crun 1.8 cannot run containers on a host with hybrid cgroups (v1 plus a v2 mount).
  runtime=${CORRAL_TEST_PODMAN_RUNTIME:-}
  if [ -z "$runtime" ]; then
    if have runc; then runtime=runc; else runtime=crun; fi
  fi
  nofile=$(ulimit -Hn)
  nproc=$(ulimit -Hu)
  [ "$nofile" = unlimited ] && nofile=1048576
  if [ "$nproc" = unlimited ] || [ "$nproc" -gt 32768 ]; then nproc=32768; fi
  cat >"$CONTAINERS_CONF" <<EOF
[containers]
default_ulimits = ["nofile=$nofile:$nofile", "nproc=$nproc:$nproc"]

[engine]
runtime = "$runtime"
# No systemd to ask for cgroups, and maybe no journald: plain cgroupfs, events in a file.
cgroup_manager = "cgroupfs"
events_logger = "file"
tmp_dir = "$D/tmp"
# An exec's conmon waits this long after the exec ends before cleaning it up (default 300 s, like
# Docker keeping finished execs): the tests run hundreds of execs, so keep fewer waiting around.
exit_command_delay = 15
volume_path = "$D/root/volumes"

[network]
# Our own (empty) network config folder: nothing is written to /etc/cni or /etc/containers.
network_config_dir = "$D/net"
EOF
  cat >"$CONTAINERS_STORAGE_CONF" <<EOF
[storage]
driver = "$(cat "$D/driver")"
graphroot = "$D/root"
runroot = "$D/run"
EOF
  : >"$CONTAINERS_REGISTRIES_CONF"
}

# The storage driver, chosen once for the life of $D/root: overlay where the kernel and the
# filesystem under /tmp allow it (e.g. not when /tmp is itself on overlayfs), else vfs (slower:
# every container copies its image).
choose_driver() {
  [ -s "$D/driver" ] && return 0
  mkdir -p "$D/probe"
  echo overlay >"$D/driver"
  write_config
  if ! podman --root "$D/probe/root" --runroot "$D/probe/run" --tmpdir "$D/probe/tmp" info >/dev/null 2>"$D/probe.log"; then
    echo vfs >"$D/driver"
  fi
  unmount_under "$D/probe"
  rm -rf "$D/probe"
}

# Our service is running: the pid file names a live (not zombie) podman serving our socket.
# After a hard stop the file stays behind and its pid may be a zombie or reused.
running() {
  local pid
  [ -f "$PIDFILE" ] || return 1
  pid=$(cat "$PIDFILE" 2>/dev/null) || return 1
  [ -n "$pid" ] && [ -r "/proc/$pid/stat" ] || return 1
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = podman ] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$HOST" || return 1
  ! awk '{ exit ($3 == "Z") ? 0 : 1 }' "/proc/$pid/stat" 2>/dev/null
}

api_up() {
  curl -fsS --max-time 2 --unix-socket "$SOCK" http://podman/_ping >/dev/null 2>&1
}

# Unmounts whatever is mounted under $1 (container rootfs and shm, the storage's own bind mount).
unmount_under() {
  awk -v d="$1/" 'index($2, d) == 1 { print $2 }' /proc/mounts | sort -r | while read -r m; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done
}

# What a hard stop (every process of the last session killed, or only some) leaves behind:
# conmon monitors, `podman container cleanup` runs, container processes, runtime state naming
# our bundles, mounts, and a tmp folder that tells podman its state is current. Clear it all so
# podman starts as after a reboot (it then resets every container to stopped).
clear_leftovers() {
  local pid
  for pid in $(pgrep -x conmon; pgrep -x podman); do
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$D/" && kill -9 "$pid" 2>/dev/null
  done
  # The containers' processes, cgroups and runtime state: `delete --force` kills every process
  # in the container's cgroup (init and execs), for each container whose state names our bundle.
  local rt f id
  for rt in runc crun; do
    have "$rt" || continue
    rt=$(command -v "$rt" || echo "/usr/sbin/$rt")
    for f in /run/"${rt##*/}"/*/state.json /run/"${rt##*/}"/*/status; do
      [ -f "$f" ] && grep -qF -- "$D/" "$f" 2>/dev/null || continue
      id=$(basename "$(dirname "$f")")
      # In parallel: one with an exec running takes about a second.
      { "$rt" delete --force "$id" >/dev/null 2>&1 || rm -rf "$(dirname "$f")"; } &
    done
  done
  wait
  unmount_under "$D"
  rm -rf "$D/run" "$D/tmp"
}

start_service() {
  if running && api_up; then return 0; fi
  if running; then
    # Started but not answering: give it a moment, as another caller may have just started it.
    for _ in $(seq 1 100); do api_up && return 0; sleep 0.1; done
    die "podman service (pid $(cat "$PIDFILE")) runs but its API does not answer; see $LOG"
  fi
  WORKED=1
  clear_leftovers
  step cleanup
  choose_driver
  write_config
  mkdir -p "$D/root" "$D/run" "$D/tmp" "$D/net"
  rm -f "$SOCK" "$PIDFILE"
  # setsid: the service outlives the shell (and the test runner) that started it. In a script
  # the background job leads no process group, so setsid execs in place and $! is podman's pid.
  # Run from $D: conmon writes a file named `oom` into its working folder when a container's
  # cgroup reports an OOM kill, and it inherits the service's.
  cd "$D"
  setsid podman system service --time=0 "$HOST" >"$LOG" 2>&1 </dev/null 9>&- &
  local pid=$!
  echo "$pid" >"$PIDFILE"
  for _ in $(seq 1 300); do
    if api_up; then
      step service
      # Hands of a session that ended hard are stopped now; nothing will use them again.
      podman --remote --url "$HOST" container prune -f --filter label=corral.hand=1 >/dev/null 2>&1 || true
      step prune
      return 0
    fi
    if ! kill -0 "$pid" 2>/dev/null; then tail -n 20 "$LOG" >&2; die "podman service exited; see $LOG"; fi
    sleep 0.05
  done
  tail -n 20 "$LOG" >&2
  die "podman API did not answer within 15 s; see $LOG"
}

podman_() { podman --remote --url "$HOST" "$@"; }

# The image works: a container from it runs /bin/sh. Existing under the name is not enough: a
# failed import still leaves an image (podman import of an empty stdin makes a 1.1 kB one).
image_works() { # image
  podman_ run --rm --network none "$1" /bin/sh -c true >/dev/null 2>&1
}

# Builds the image into a temporary name, checks it, then tags it: a failed build leaves nothing
# behind under either name.
build_image() {
  if podman_ image exists "$IMAGE" 2>/dev/null; then
    if image_works "$IMAGE"; then return 0; fi
    echo "podman.sh: $IMAGE exists but cannot run /bin/sh: removing it and building it again" >&2
    podman_ rmi -f "$IMAGE" >/dev/null 2>&1 || true
  fi
  WORKED=1
  local tmp=corral-test/busybox-build-$$:latest tar=$D/rootfs.$$.tar
  # The root filesystem is made by busybox-rootfs.sh (shared with the other engine's script),
  # into a file first: a failing maker must not reach the import as an empty stdin.
  if ! bash "$HERE/busybox-rootfs.sh" >"$tar" || ! [ -s "$tar" ]; then
    rm -f "$tar"
    die "could not make the image's root filesystem (busybox-rootfs.sh failed)"
  fi
  # Through the service (--remote), so it sees the image at once.
  if ! podman_ import -q -c 'ENV PATH=/bin' - "$tmp" <"$tar" >/dev/null; then
    rm -f "$tar"
    podman_ rmi -f "$tmp" >/dev/null 2>&1 || true
    die "podman import of $IMAGE failed"
  fi
  rm -f "$tar"
  if ! image_works "$tmp"; then
    podman_ rmi -f "$tmp" >/dev/null 2>&1 || true
    die "the freshly built $IMAGE cannot run /bin/sh -c true; see $LOG"
  fi
  podman_ tag "$tmp" "$IMAGE" && podman_ rmi "$tmp" >/dev/null || {
    podman_ rmi -f "$tmp" "$IMAGE" >/dev/null 2>&1 || true
    die "could not tag $IMAGE"
  }
  step image
}

write_env() {
  mkdir -p "$BASE"
  printf 'export CORRAL_TEST_PODMAN_HOST=%s\nexport CORRAL_TEST_PODMAN_IMAGE=%s\n' "$HOST" "$IMAGE" >"$ENV_FILE.tmp"
  mv "$ENV_FILE.tmp" "$ENV_FILE"
  cat "$ENV_FILE"
}

stop_service() {
  if running; then
    local pid
    pid=$(cat "$PIDFILE")
    # Podman's containers outlive its service (conmon watches them): remove them first.
    podman --remote --url "$HOST" rm -af -t 0 >/dev/null 2>&1 || true
    kill "$pid"
    for _ in $(seq 1 150); do kill -0 "$pid" 2>/dev/null && ! awk '{ exit ($3 == "Z") ? 0 : 1 }' "/proc/$pid/stat" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null
    echo "podman service stopped"
  else
    echo "podman service not running"
  fi
  clear_leftovers
  rm -f "$ENV_FILE" "$SOCK" "$PIDFILE"
}

case "${1:-}" in
  start)
    mkdir -p "$D"
    step begin
    need
    step install
    # One starter at a time (several test files may call this together).
    exec 9>"$D/.lock"
    flock -w 120 9 || die "could not take $D/.lock"
    start_service
    build_image
    write_env
    step ready
    if [ -n "$WORKED" ]; then printf '%s' "$STEPS" >>"$TIMES"; fi
    ;;
  stop)
    mkdir -p "$D"
    exec 9>"$D/.lock"
    flock -w 120 9 || die "could not take $D/.lock"
    stop_service
    ;;
  purge)
    mkdir -p "$D"
    exec 9>"$D/.lock"
    flock -w 120 9 || die "could not take $D/.lock"
    stop_service >/dev/null
    # Whatever is still mounted in the storage (overlay layers) goes before the folder does.
    unmount_under "$D"
    exec 9>&-
    rm -rf "$D" "$ENV_FILE"
    rmdir "$BASE" 2>/dev/null || true
    echo "podman test backend purged"
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
