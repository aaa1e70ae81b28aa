#!/usr/bin/env bash
# Optional: build ntttcp-for-linux (github.com/microsoft/ntttcp-for-linux) from a source tree
# you fetched yourself, for a lab that wants to run NTttcp tests on Linux hosts. nicbench does
# not ship its code; this only runs its own Makefile and copies the binary out.
#
#   scripts/build-ntttcp.sh SOURCE_TREE [DEST_DIR]
#
# SOURCE_TREE is a checkout or an unpacked archive (it holds src/Makefile); DEST_DIR
# (default /usr/local/bin) receives the `ntttcp` binary. Needs make and a C compiler
# (Debian: build-essential). The lab's hosts share this machine's files, so one binary
# serves them all; on other hosts name it in the inventory (hosts[].tools.ntttcp).
set -euo pipefail

die() { printf 'build-ntttcp: error: %s\n' "$*" >&2; exit 2; }

if [ $# -lt 1 ] || [ $# -gt 2 ]; then die "usage: $0 SOURCE_TREE [DEST_DIR]"; fi
src="$1"
dest="${2:-/usr/local/bin}"
[ -f "$src/src/Makefile" ] || die "$src/src/Makefile not found: give the top of an ntttcp-for-linux tree"
command -v make >/dev/null || die "make not found (Debian: apt-get install build-essential)"
command -v cc >/dev/null || die "no C compiler (Debian: apt-get install build-essential)"
[ -d "$dest" ] || die "$dest is not a directory"

build="$(mktemp -d)"
trap 'rm -rf -- "$build"' EXIT
cp -R -- "$src/src/." "$build/"
make -C "$build" >/dev/null
install -m 0755 -- "$build/ntttcp" "$dest/ntttcp"
"$dest/ntttcp" -h 2>/dev/null | head -n 1 || true     # the banner: "NTTTCP for Linux 1.4.3"
