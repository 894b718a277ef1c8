#!/bin/bash
# The pid and lock files in /run/xdp-fastpath cannot be turned against root: a symlink
# planted at the pid file's path is replaced, not followed; one at the lock's path makes
# attach refuse (and change nothing); an unsafe run directory (a symlink, or writable by
# others) is refused. The last case runs in a private mount namespace with its own /run.
. "$(dirname "$0")/testbed.sh"
tb_setup
run=/run/xdp-fastpath
name=xdp-fastpath-$TB
mkdir -p "$run"
victim=$TB_TMP/victim
echo "precious" >"$victim"

ln -sf "$victim" "$run/$name.pid"
tb_attach || exit 1
check "a symlink at the pid file's path is not followed" eq "$(cat "$victim")" precious
check "... the pid file is a regular file" test -f "$run/$name.pid" -a ! -L "$run/$name.pid"
check "... naming the daemon" eq "$(cat "$run/$name.pid")" "$(tb_daemon_pid)"
check "... readable by others but writable by root only" eq "$(stat -c %a "$run/$name.pid")" 644
world_writable=$(find "$TB_PIN" "$run" "$TB_TMP/daemon.log" -perm -o+w | wc -l)
check "nothing it made is world-writable: pins, run files, log ($world_writable)" \
	eq "$world_writable" 0
check "the daemon's log file is private (0600)" eq "$(stat -c %a "$TB_TMP/daemon.log")" 600
fastpath detach >/dev/null

ln -sf "$victim" "$run/$name.lock"
check "attach refuses a symlink at the lock's path" \
	bash -c "! nsenter --net=/run/netns/$TB_RTR $FASTPATH_BIN --pin-dir $TB_PIN attach r0 \
		2>$TB_TMP/lock.err"
check "... with a one-line error naming it" \
	bash -c "[ \$(wc -l <$TB_TMP/lock.err) = 1 ] && grep -q '$name.lock' $TB_TMP/lock.err"
check "... and changes nothing" test ! -e "$TB_PIN" -a "$(cat "$victim")" = precious
rm -f "$run/$name.lock"

cat >"$TB_TMP/unsafe-run.sh" <<-EOS
	set -e
	mount -t tmpfs tmpfs /run
	mkdir -m 0777 /run/world
	ln -s /run/world /run/xdp-fastpath
	if $FASTPATH_BIN --pin-dir $TB_PIN attach r0 --mode generic 2>/run/err1; then exit 1; fi
	grep -q 'not safe' /run/err1
	rm /run/xdp-fastpath && mkdir -m 0777 /run/xdp-fastpath
	if $FASTPATH_BIN --pin-dir $TB_PIN attach r0 --mode generic 2>/run/err2; then exit 1; fi
	grep -q 'not safe' /run/err2
	test ! -e $TB_PIN
EOS
check "an unsafe run directory (symlink, world-writable) is refused" \
	nsenter --net=/run/netns/"$TB_RTR" unshare -m --propagation private bash "$TB_TMP/unsafe-run.sh"
tb_done
