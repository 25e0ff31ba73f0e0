#!/usr/bin/env bash
# Writes to stdout a tarball of the tiny root filesystem the container hands' tests import as
# their image (docker.sh, podman.sh): bin/busybox from busybox-static with its applet links,
# etc/passwd and etc/group, tmp/ 1777, and empty work, root, proc, sys and dev folders.
# No registry is needed. Exits non-zero with a message on stderr when busybox is unusable.
set -euo pipefail

die() { echo "busybox-rootfs.sh: $*" >&2; exit 1; }

bb=$(command -v busybox || true)
[ -x /bin/busybox ] && bb=/bin/busybox
[ -n "$bb" ] || die "busybox not found: apt-get install -y busybox-static"
# ldd fails on a static binary; Debian's plain `busybox` package is dynamic and useless in an empty image.
if ldd "$bb" >/dev/null 2>&1; then die "$bb is not statically linked: apt-get install -y busybox-static"; fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/corral-rootfs.XXXXXX")
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/bin" "$dir/etc" "$dir/tmp" "$dir/root" "$dir/work" "$dir/proc" "$dir/sys" "$dir/dev"
chmod 1777 "$dir/tmp"
cp "$bb" "$dir/bin/busybox"
for applet in $("$bb" --list); do
  [ "$applet" = busybox ] || ln -sf busybox "$dir/bin/$applet"
done
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' >"$dir/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$dir/etc/group"
tar -C "$dir" -c .
