#!/bin/bash
# The datapath's jiffies clock when its calibration failed (attach's, on a busy router): the
# datapath reads the kernel's clock meanwhile and goes on forwarding, status says so, and
# the daemon calibrates it at its next scan.
. "$(dirname "$0")/testbed.sh"
tb_setup
tb_attach || exit 1
tick() { tb_status | jq .kernel.clock_tick_ns; }
# 1200 Hz, the fastest tick a kernel can have (loader/clock.c)
check "attach calibrated the clock" ge "$(tick)" 833333
tb_udp_server 6000
tb_udp_conversation 198.19.2.2 6000 "$TB_TMP/udp.out"
carried() { ge "$(tb_stat forwarded)" 200; }
check "the fastpath carries a UDP conversation" tb_wait 10 carried

# fp_config's one entry with clock.tick_ns (bytes 48-55) 0, as attach leaves it when the
# calibration fails. The daemon is stopped meanwhile, so that its next scan reads it.
config="$TB_PIN/fp_config"
no_tick() {
	# shellcheck disable=SC2046 # bytes, split into bpftool's arguments
	bpftool map update pinned "$config" key 0 0 0 0 value \
		$(bpftool -j map lookup pinned "$config" key 0 0 0 0 |
			jq -r '.value[:48] + ["0","0","0","0","0","0","0","0"] | .[]')
}
calibrated() { grep -q "calibrated the datapath's jiffies clock" "$TB_TMP/daemon.log"; }
pid=$(tb_daemon_pid)
kill -STOP "$pid"
no_tick
check "the clock has no tick" eq "$(tick)" 0
says_no_tick() { fastpath status | grep -q 'the jiffies clock has not calibrated yet'; }
check "status says the datapath reads the kernel's clock" says_no_tick
was=$(tb_stat forwarded)
more() { ge "$(tb_stat forwarded)" $((was + 200)); }
check "... and the fastpath goes on carrying the conversation" tb_wait 10 more
kill -CONT "$pid"
check "the daemon calibrates it" tb_wait 10 calibrated
check "... to a kernel's tick" ge "$(tick)" 833333
says_nothing() { ! says_no_tick; }
check "status says no more of it" says_nothing
was=$(tb_stat forwarded)
check "the fastpath carries the conversation with it" tb_wait 10 more
check "every datagram of the conversation came back" tb_udp_conversation_end
tb_done
