#!/bin/bash
# make install honours DESTDIR and PREFIX: the binary, the man page and the systemd unit
# (naming the installed binary), nothing else needed (the BPF object is in the binary).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
fail=0
make -s -C "$root" install DESTDIR="$dest" PREFIX=/opt/fp >/dev/null || fail=1
[ -x "$dest/opt/fp/sbin/xdp-fastpath" ] || { echo "FAIL: binary not installed"; fail=1; }
[ -f "$dest/opt/fp/share/man/man8/xdp-fastpath.8" ] || { echo "FAIL: man page not installed"; fail=1; }
"$dest/opt/fp/sbin/xdp-fastpath" --version | grep -q '^xdp-fastpath ' ||
	{ echo "FAIL: the installed binary does not run"; fail=1; }
unit=$dest/opt/fp/lib/systemd/system/xdp-fastpath.service
grep -q '^ExecStart=/opt/fp/sbin/xdp-fastpath attach --foreground' "$unit" 2>/dev/null ||
	{ echo "FAIL: the systemd unit is not installed for PREFIX"; fail=1; }
[ "$(find "$dest" -type f | wc -l)" = 3 ] || { echo "FAIL: unexpected files"; find "$dest"; fail=1; }
exit $fail
