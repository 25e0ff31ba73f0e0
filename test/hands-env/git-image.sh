#!/usr/bin/env bash
# Builds (once) the image corral-test/busybox-git:latest on the test Docker Engine of docker.sh:
# the busybox root filesystem plus this machine's git (/usr/bin/git, /usr/lib/git-core and the
# shared libraries they load, found with ldd), so a container hand can run `git pull` and
# `git push` over HTTP. No registry is needed. Prints the image name.
#   DOCKER_HOST  the engine (default: docker.sh's socket)
set -euo pipefail
HERE=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
HOST=${DOCKER_HOST:-unix:///tmp/corral-hands/docker/docker.sock}
IMAGE=corral-test/busybox-git:latest
docker_() { docker -H "$HOST" "$@"; }
die() { echo "git-image.sh: $*" >&2; exit 1; }

if docker_ image inspect "$IMAGE" >/dev/null 2>&1 && docker_ run --rm --network none "$IMAGE" /usr/bin/git --version >/dev/null 2>&1; then
  echo "$IMAGE"; exit 0
fi
command -v git >/dev/null || die "git is not installed here"
dir=$(mktemp -d "${TMPDIR:-/tmp}/corral-gitfs.XXXXXX")
trap 'rm -rf "$dir"' EXIT
bash "$HERE/busybox-rootfs.sh" | tar -C "$dir" -x
mkdir -p "$dir/usr/bin" "$dir/usr/lib" "$dir/usr/share/git-core"
cp -a /usr/bin/git "$dir/usr/bin/git"
cp -a /usr/lib/git-core "$dir/usr/lib/git-core"
[ -d /usr/share/git-core/templates ] && cp -a /usr/share/git-core/templates "$dir/usr/share/git-core/"
for lib in $(ldd /usr/bin/git /usr/lib/git-core/git-remote-http | awk '/=> \// {print $3} /^\t\// {print $1}' | sort -u); do
  mkdir -p "$dir$(dirname "$lib")"
  cp -L "$lib" "$dir$lib"
done
# The dynamic loader looks in /lib64 or /lib; Debian's are symlinks into /usr.
[ -e /lib64 ] && [ ! -e "$dir/lib64" ] && ln -s usr/lib64 "$dir/lib64" 2>/dev/null || true
tmp=corral-test/busybox-git-build-$$:latest
tar -C "$dir" -c . | docker_ import -c 'ENV PATH=/usr/bin:/bin' - "$tmp" >/dev/null || die "docker import failed"
if ! docker_ run --rm --network none "$tmp" /usr/bin/git --version >/dev/null; then
  docker_ rmi -f "$tmp" >/dev/null 2>&1 || true
  die "git does not run in the built image"
fi
docker_ tag "$tmp" "$IMAGE" && docker_ rmi "$tmp" >/dev/null
echo "$IMAGE"
