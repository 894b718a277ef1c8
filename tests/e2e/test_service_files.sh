#!/bin/bash
# The service files in scripts/: the systemd unit passes systemd-analyze verify; the
# OpenWrt init script, run against a UCI config with procd's functions stubbed, builds a
# command line that, run for real on the testbed's router, attaches and offloads; a daemon
# whose stderr is the journal (JOURNAL_STREAM) prefixes each line with its syslog level.
. "$(dirname "$0")/testbed.sh"
tb_setup

# systemd
sed "s|/usr/local/sbin/xdp-fastpath|$FASTPATH_BIN|g" "$TB_ROOT/scripts/systemd/xdp-fastpath.service" \
	>"$TB_TMP/xdp-fastpath.service"
check "the systemd unit passes systemd-analyze verify" \
	bash -c "systemd-analyze verify --man=no $TB_TMP/xdp-fastpath.service 2>&1 | tee /dev/stderr | (! grep -q .)"

# OpenWrt: procd and UCI stubbed; the config is the sample with this testbed's values.
sed -e "s/option enabled '0'/option enabled '1'/" -e "s/'eth0'/'r0'/" -e "s/'eth1'/'r1'/" \
	-e "s/#option flows '[0-9]*'/option flows '4096'/" \
	-e "s/#option skip_mark '0x100\/0xff00'/option skip_mark '0x10\/0xf0'/" \
	-e "s/option steer '0'/option steer '1'/" \
	"$TB_ROOT/scripts/openwrt/xdp-fastpath.config" >"$TB_TMP/uci"
cat >"$TB_TMP/procd-stubs.sh" <<'EOS'
# A tiny reader of one UCI section ('main') and procd's command building, for the test.
uci_value() { # KIND NAME: the values of "option|list NAME '...'" lines, one per line
	sed -n "s/^[[:space:]]*$1 $2 '\(.*\)'$/\1/p" "$UCI_FILE"
}
config_load() { :; }
config_get() { eval "$1=\"\$(uci_value option $3)\""; [ -n "${!1}" ] || eval "$1=\"\$(uci_value list $3 | tr '\n' ' ')\""; }
config_get_bool() { local v; v=$(uci_value option "$3"); eval "$1=\"${v:-$4}\""; }
config_list_foreach() { local item; for item in $(uci_value list "$2"); do "$3" "$item"; done; }
procd_open_instance() { CMD=(); }
procd_close_instance() { :; }
procd_set_param() { [ "$1" = command ] && { shift; CMD=("$@"); }; }
procd_append_param() { [ "$1" = command ] && { shift; CMD+=("$@"); }; }
procd_add_reload_trigger() { TRIGGERS="$*"; }
EOS
# load_init UCI: the init script with procd stubbed, reading the UCI config file UCI.
load_init() {
	UCI_FILE=$1
	. "$TB_TMP/procd-stubs.sh"
	. "$TB_ROOT/scripts/openwrt/xdp-fastpath.init"
}
build_cmd() {
	load_init "$TB_TMP/uci"
	start_service && printf '%s\n' "${CMD[@]}"
}
triggers() {
	load_init "$TB_TMP/uci"
	service_triggers && echo "$TRIGGERS"
}
# procd re-runs start_service when these configs change (an unchanged command keeps the
# daemon, which follows links, bridges and the firewall by itself).
check "the init script reloads on its own, the network's and the firewall's config" eq \
	"$(triggers)" "xdp-fastpath network firewall"
mapfile -t cmd <<<"$(build_cmd)"
check "the init script builds the command from the UCI config" eq "${cmd[*]}" \
	"/usr/sbin/xdp-fastpath attach --foreground --flows 4096 --skip-mark 0x10/0xf0 --steer r0 r1"
# Run it: the command line as procd would, with this build and the test's pin directory.
cmd[0]=$FASTPATH_BIN
nsenter --net=/run/netns/"$TB_RTR" env JOURNAL_STREAM="$(stat -c %d:%i "$TB_TMP")" \
	"${cmd[@]:0:1}" --pin-dir "$TB_PIN" "${cmd[@]:1}" 2>"$TB_TMP/foreground.log" &
TB_PIDS+=($!)
check "... and that command attaches and runs the daemon" tb_wait 10 tb_daemon_running
tb_udp_server 6000
tb_share_start
check "... which offloads a conversation" \
	cli "$FP_UDP" client 198.19.2.2 6000 2000 "$TB_SETTLE_MS"
check "... (>= 90% on the fastpath)" tb_share_at_least 90
check "... with the configured table size" eq "$(tb_status | jq .max_flows)" 4096
check "... and steering on" eq "$(tb_status | jq .steer_cpus)" "$(nproc)"
check "its stderr, not the journal, has no level prefixes" \
	bash -c "grep -q '^xdp-fastpath: daemon running' $TB_TMP/foreground.log"

# Turned off in UCI: on the reload, start_service makes no instance, so procd stops the
# daemon (which leaves the interfaces attached, for a respawn): the script detaches them.
sed "s/option enabled '1'/option enabled '0'/" "$TB_TMP/uci" >"$TB_TMP/uci-off"
printf '#!/bin/bash\nexec nsenter --net=/run/netns/%s %s --pin-dir %s "$@"\n' \
	"$TB_RTR" "$FASTPATH_BIN" "$TB_PIN" >"$TB_TMP/prog"
chmod +x "$TB_TMP/prog"
turn_off() {
	load_init "$TB_TMP/uci-off"
	PROG=$TB_TMP/prog
	CMD=()
	start_service && [ ${#CMD[@]} = 0 ]
}
check "turned off in UCI, the init script makes no instance" turn_off
check "... and detaches everything" tb_wait 5 tb_nothing_attached

# The same foreground daemon with its stderr as "the journal" (JOURNAL_STREAM matches it).
journal=$TB_TMP/journal.log
: >"$journal"
nsenter --net=/run/netns/"$TB_RTR" bash -c "JOURNAL_STREAM=\$(stat -c %d:%i $journal) \
	exec $FASTPATH_BIN --pin-dir $TB_PIN attach --foreground r0 r1 2>>$journal" &
TB_PIDS+=($!)
check "a journal-attached daemon starts" tb_wait 10 tb_daemon_running
check "... and its lines carry syslog levels (<5> notice)" \
	bash -c "grep -q '^<5>xdp-fastpath: daemon running' $journal"
fastpath detach >/dev/null
tb_done
