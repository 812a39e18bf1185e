#!/usr/bin/env bash
# Collects the host's redis-server and the shared libraries it loads into docker/rootfs/,
# so the Dockerfile can build an image FROM scratch without pulling anything from a
# registry. Run from anywhere; needs redis-server installed (apt-get install -y redis-server).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="$(command -v redis-server)" || { echo "redis-server not found: apt-get install -y redis-server" >&2; exit 2; }
bin="$(readlink -f "$bin")"
root="$here/rootfs"
rm -rf "$root"
mkdir -p "$root/usr/bin" "$root/data" "$root/tmp"
cp "$bin" "$root/usr/bin/redis-server"
# Every library the dynamic loader resolves, plus the loader itself, at the same paths.
ldd "$bin" | grep -o '/[^ ]*' | sort -u | while read -r lib; do
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
done
echo "rootfs ready in $root ($(du -sh "$root" | cut -f1))"
