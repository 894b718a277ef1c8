#!/bin/bash
# 'xdp-fastpath attach r0 r1' exactly like that: the default pin directory, and a BPF
# filesystem mounted when there is none (tried in a private mount namespace, so the host's
# /sys/fs/bpf is untouched).
. "$(dirname "$0")/testbed.sh"
tb_setup
bare() { nsenter --net=/run/netns/"$TB_RTR" env -u XDP_FASTPATH_PIN_DIR "$FASTPATH_BIN" "$@"; }

if [ -e /sys/fs/bpf/xdp-fastpath ]; then
	tb_log "  skipped: /sys/fs/bpf/xdp-fastpath is in use on this machine"
	exit 0
fi
check "attach with no options" bare attach r0 r1
check "... pins under /sys/fs/bpf/xdp-fastpath" test -e /sys/fs/bpf/xdp-fastpath/fp_flows4
check "... status works without options" bare status
check "detach with no options" bare detach
check "... removes the default pins" test ! -e /sys/fs/bpf/xdp-fastpath

# No BPF filesystem at all: attach mounts one.
cat >"$TB_TMP/nobpffs.sh" <<-EOS
	set -e
	while mountpoint -q /sys/fs/bpf; do umount /sys/fs/bpf; done
	if mountpoint -q /sys/fs/bpf; then exit 1; fi
	nsenter --net=/run/netns/$TB_RTR $FASTPATH_BIN attach r0 >/dev/null
	mountpoint -q /sys/fs/bpf
	nsenter --net=/run/netns/$TB_RTR $FASTPATH_BIN status >/dev/null
	nsenter --net=/run/netns/$TB_RTR $FASTPATH_BIN detach >/dev/null
EOS
check "attach mounts a BPF filesystem where there is none" \
	unshare -m --propagation private bash "$TB_TMP/nobpffs.sh"
check "... and the host's was not touched" mountpoint -q /sys/fs/bpf
rm -f /run/xdp-fastpath/xdp-fastpath.lock # ours: the test skips when a default instance exists
tb_done
