#!/bin/bash
# A TCP connection that closes: the FIN goes to the kernel, the flow is removed, conntrack
# sees the teardown (TIME_WAIT), and nothing is dropped as invalid.
. "$(dirname "$0")/testbed.sh"
tb_setup
tb_attach || exit 1
file=$(tb_random_file 20)
want=$(sha256sum <"$file" | cut -d' ' -f1)
fin0=$(tb_stat pass_tcp_flags)

check "20 MB arrive intact" eq "$(tb_tcp_transfer "$file" up)" "$want"
check "the connection was offloaded" ge "$(tb_status | jq .offload_total)" 1
check "FIN and the closing segments went to the kernel" ge "$(($(tb_stat pass_tcp_flags) - fin0))" 2
no_flows() { [ "$(tb_flow_entries)" = 0 ]; }
check "the flow is removed within two scans" tb_wait 3 no_flows
check "conntrack saw the teardown (TIME_WAIT)" \
	bash -c "ip netns exec $TB_RTR conntrack -L -p tcp --dport 5001 2>/dev/null | grep -q TIME_WAIT"
check "no packet was dropped as invalid" eq "$(tb_invalid_dropped)" 0
tb_done
