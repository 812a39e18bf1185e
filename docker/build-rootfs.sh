#!/usr/bin/env bash
# Collects the host's redis-server and the shared libraries it loads into a root
# filesystem, so the Dockerfile can build an image FROM scratch without pulling anything
# from a registry. The image also carries libfaketime and lockstorm's allocator shim
# (src/real/faketime_shim.c, compiled here) under /usr/lib/lockstorm/, for node clock
# faults in containers.
#   docker/build-rootfs.sh [ROOTFS_DIR [SHIM_SOURCE_DIR]]
# Defaults: docker/rootfs and src/real. Needs redis-server, faketime and a C compiler
# (apt-get install -y redis-server faketime gcc). lockstorm runs this same script when
# it builds its image itself.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="${1:-$here/rootfs}"
shim_src="${2:-$here/../src/real}"
bin="$(command -v redis-server)" || { echo "redis-server not found: apt-get install -y redis-server" >&2; exit 2; }
bin="$(readlink -f "$bin")"
libfaketime=""
for f in /usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1 /usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1 \
         /usr/lib/faketime/libfaketime.so.1 /usr/local/lib/faketime/libfaketime.so.1; do
    if [ -f "$f" ]; then libfaketime="$f"; break; fi
done
[ -n "$libfaketime" ] || { echo "libfaketime not found: apt-get install -y faketime" >&2; exit 2; }
cc="${CC:-cc}"
command -v "$cc" >/dev/null || { echo "no C compiler ($cc) for the faketime shim: apt-get install -y gcc" >&2; exit 2; }

rm -rf "$root"
mkdir -p "$root/usr/bin" "$root/usr/lib/lockstorm" "$root/data" "$root/tmp" "$root/lockstorm"
cp "$bin" "$root/usr/bin/redis-server"
cp -L "$libfaketime" "$root/usr/lib/lockstorm/libfaketime.so.1"
"$cc" -shared -fPIC -O2 -o "$root/usr/lib/lockstorm/faketime_shim.so" "$shim_src/faketime_shim.c" -ldl
# Every library the dynamic loader resolves for any of them, plus the loader itself,
# at the same paths.
for f in "$bin" "$libfaketime" "$root/usr/lib/lockstorm/faketime_shim.so"; do
    ldd "$f" | grep -o '/[^ ]*'
done | sort -u | while read -r lib; do
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
done
echo "rootfs ready in $root ($(du -sh "$root" | cut -f1))"
