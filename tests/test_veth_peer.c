// SPDX-License-Identifier: GPL-2.0-only
/*
 * fp_veth_peer (loader/veth_peer.c) on real veths: the peer's name, transmit checksumming,
 * GRO and XDP program, in our namespace and in the namespace of another process (found
 * through /proc), and the command that turns checksumming off; fp_takes_redirects and
 * fp_strips_vlan_tags on it, which ask the peer. attach's refusal, the daemon's hold and the
 * /run/netns case are tests/e2e/test_peer_checksum.sh.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/wait.h>
#include <linux/if_link.h>
#include <bpf/libbpf.h>

#include "common.h"
#include "fixture.h"
#include "testlib.h"
#include "tests.h"
#include "veth_peer.h"
#include "xdp_features.h"

/* A child in a namespace of its own, which keeps it until killed: its pid. */
static pid_t netns_holder(void)
{
	int ready[2];
	pid_t pid;
	char c;

	if (pipe(ready))
		DIE("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		DIE("fork: %s", strerror(errno));
	if (!pid) {
		if (unshare(CLONE_NEWNET))
			_exit(1);
		if (write(ready[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(ready[1]);
	if (read(ready[0], &c, 1) != 1)
		DIE("the namespace holder did not start");
	close(ready[0]);
	return pid;
}

static void check_peer(const char *what, int ifindex, const char *netns, bool tx_checksum,
		       const char *fix)
{
	struct fp_veth_peer peer;
	char got_fix[128];
	int ret = fp_veth_peer(ifindex, &peer);

	CHECK(ret == 1, "%s: a veth (got %d)", what, ret);
	if (ret != 1)
		return;
	CHECK(!strcmp(peer.name, "fp_vp_peer"), "%s: peer fp_vp_peer (got %s)", what, peer.name);
	CHECK(!strcmp(peer.netns, netns), "%s: in namespace '%s' (got '%s')", what, netns,
	      peer.netns);
	CHECK(peer.tx_checksum == tx_checksum, "%s: tx checksumming %d (got %d)", what, tx_checksum,
	      peer.tx_checksum);
	fp_veth_peer_ethtool(&peer, "tx off", got_fix, sizeof(got_fix));
	CHECK(!strcmp(got_fix, fix), "%s: the fix is '%s' (got '%s')", what, fix, got_fix);
}

void test_veth_peer(void)
{
	struct fp_veth_peer peer;
	char netns[32], fix[128], why[160];
	int ifindex, ret;
	pid_t holder;

	tl_case_begin("veth peer: not a veth");
	ret = fp_veth_peer(if_nametoindex("lo"), &peer);
	CHECK_EQ(ret, 0, "lo is no veth");
	tl_case_end();

	tl_case_begin("veth peer: in our namespace");
	fx_sh("ip link add fp_vp type veth peer name fp_vp_peer");
	ifindex = if_nametoindex("fp_vp");
	fx_sh("ethtool -K fp_vp_peer tx on >/dev/null");
	check_peer("tx on", ifindex, "", true, "ethtool -K fp_vp_peer tx off");
	fx_sh("ethtool -K fp_vp_peer tx off >/dev/null");
	check_peer("tx off", ifindex, "", false, "ethtool -K fp_vp_peer tx off");
	tl_case_end();

	/* A veth passes on the skbs its peer sent: a tag stays where the peer put it. */
	tl_case_begin("veth peer: its VLAN transmit offload keeps the tags from XDP");
	fx_sh("ethtool -K fp_vp_peer txvlan on >/dev/null && ethtool -K fp_vp rxvlan off >/dev/null");
	ret = fp_strips_vlan_tags(ifindex, fix, sizeof(fix));
	CHECK(ret, "the peer's txvlan on: tags beside the frames, whatever fp_vp's rxvlan");
	CHECK(!strcmp(fix, "ethtool -K fp_vp_peer txvlan off"), "the fix (got '%s')", fix);
	fx_sh("ethtool -K fp_vp_peer txvlan off >/dev/null && ethtool -K fp_vp rxvlan on >/dev/null");
	ret = fp_strips_vlan_tags(ifindex, fix, sizeof(fix));
	CHECK(!ret, "the peer's txvlan off: tags in the frames, whatever fp_vp's rxvlan");
	tl_case_end();

	tl_case_begin("veth peer: takes redirected frames with GRO or an XDP program");
	fx_sh("ip link set fp_vp up && ip link set fp_vp_peer up");
	fx_sh("ethtool -K fp_vp_peer gro off >/dev/null");
	ret = fp_veth_peer(ifindex, &peer);
	CHECK(ret == 1 && !peer.gro && !peer.xdp, "neither GRO nor XDP (%d %d %d)", ret, peer.gro,
	      peer.xdp);
	ret = fp_takes_redirects(ifindex, why, sizeof(why));
	CHECK_EQ(ret, 0, "so it takes no redirected frames");
	CHECK(strstr(why, "its veth peer fp_vp_peer"), "why names the peer: '%s'", why);
	fx_sh("ethtool -K fp_vp_peer gro on >/dev/null");
	ret = fp_veth_peer(ifindex, &peer);
	CHECK(ret == 1 && peer.gro && !peer.xdp, "GRO on (%d %d %d)", ret, peer.gro, peer.xdp);
	if (bpf_xdp_attach(if_nametoindex("fp_vp_peer"), fx.prog_fd, XDP_FLAGS_DRV_MODE, NULL))
		DIE("attaching XDP to fp_vp_peer: %s", strerror(errno));
	ret = fp_veth_peer(ifindex, &peer);
	CHECK(ret == 1 && peer.xdp, "an XDP program (%d %d)", ret, peer.xdp);
	ret = fp_takes_redirects(ifindex, why, sizeof(why));
	CHECK_EQ(ret, 1, "which takes redirected frames on every kernel");
	bpf_xdp_detach(if_nametoindex("fp_vp_peer"), XDP_FLAGS_DRV_MODE, NULL);
	tl_case_end();

	tl_case_begin("veth peer: in another process's namespace");
	holder = netns_holder();
	fx_sh("ip link set fp_vp_peer netns %d", holder);
	snprintf(netns, sizeof(netns), "of pid %d", holder);
	snprintf(fix, sizeof(fix), "nsenter -t %d -n ethtool -K fp_vp_peer tx off", holder);
	check_peer("moved, as it was", ifindex, netns, false, fix);
	fx_sh("nsenter -t %d -n ethtool -K fp_vp_peer tx on >/dev/null", holder);
	check_peer("tx on there", ifindex, netns, true, fix);
	/* Asked again: found where it was last time (the daemon asks at every scan). */
	check_peer("asked again", ifindex, netns, true, fix);
	kill(holder, SIGKILL);
	waitpid(holder, NULL, 0);
	tl_case_end();

	tl_case_begin("veth peer: gone with its namespace");
	/* The namespace's end takes the peer, and with it the veth, a moment later. */
	for (int i = 0; i < 200 && if_nametoindex("fp_vp"); i++)
		usleep(10000);
	ret = fp_veth_peer(ifindex, &peer);
	CHECK_EQ(ret, -ENODEV, "an interface that is gone is an error");
	fx_sh("ip link del fp_vp 2>/dev/null || true");
	tl_case_end();
}
