// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <net/if.h>
#include <linux/if_ether.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "common.h"
#include "fixture.h"
#include "flowmap.h"
#include "instance.h"
#include "kernel.h"
#include "packet.h"
#include "testlib.h"
#include "wire.h"

struct fixture fx;

const uint8_t fx_lan_mac[6] = {2, 0, 0, 0, 1, 1}, fx_lan_host_mac[6] = {2, 0, 0, 0, 1, 2};
const uint8_t fx_wan_mac[6] = {2, 0, 0, 0, 2, 1}, fx_wan_host_mac[6] = {2, 0, 0, 0, 2, 2};
const uint8_t fx_port_mac[6] = {2, 0, 0, 0, 3, 1}, fx_peer_mac[6] = {2, 0, 0, 0, 3, 2};

void fx_sh(const char *fmt, ...)
{
	char cmd[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if (system(cmd) != 0)
		DIE("setup command failed: %s", cmd);
}

uint64_t fx_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* Linux 5.15: BPF_PROG_TEST_RUN of XDP takes an xdp_md, and with it the ingress interface. */
static bool test_run_takes_context(void)
{
	uint8_t frame[ETH_HLEN] = {0}, out[PKT_MAX];
	struct xdp_md ctx_in = {.data_end = sizeof(frame), .ingress_ifindex = fx.lan_ifindex};
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = frame, .data_size_in = sizeof(frame),
		    .data_out = out, .data_size_out = sizeof(out), .ctx_in = &ctx_in,
		    .ctx_size_in = sizeof(ctx_in), .repeat = 1);

	return bpf_prog_test_run_opts(fx.prog_fd, &opts) == 0;
}

#define FX_UPTIME_NS 15000000000ull

void fx_setup(void)
{
	/* Tests date heartbeats and clocks up to 10 s back. In a guest just booted,
	 * CLOCK_MONOTONIC may not be that far from 0 yet: a time before it would wrap. */
	if (fx_now_ns() < FX_UPTIME_NS) {
		uint64_t wait = FX_UPTIME_NS - fx_now_ns();
		struct timespec ts = {.tv_sec = wait / 1000000000ull,
				      .tv_nsec = wait % 1000000000ull};

		printf("  (waiting %.1f s for CLOCK_MONOTONIC to pass %llu s)\n", wait / 1e9,
		       FX_UPTIME_NS / 1000000000ull);
		nanosleep(&ts, NULL);
	}
	if (unshare(CLONE_NEWNET))
		DIE("unshare(CLONE_NEWNET): %s (the tests need root)", strerror(errno));
	fx_sh("ip link set lo up");
	fx_sh("ip link add fp_lan address 02:00:00:00:01:01 type veth peer name fp_lan_peer");
	fx_sh("ip link add fp_wan address 02:00:00:00:02:01 mtu %d type veth peer name fp_wan_peer "
	      "mtu %d",
	      FX_WAN_MTU, FX_WAN_MTU);
	fx_sh("ip link add fp_port address 02:00:00:00:03:01 mtu %d type veth peer name "
	      "fp_port_peer mtu %d",
	      FX_WAN_MTU, FX_WAN_MTU);
	/* make bench-prog attaches programs to fp_port and counts their runs: without IPv6
	 * its peer sends it no router solicitation or MLD report, which would run them too. */
	fx_sh("sysctl -qw net.ipv6.conf.fp_port.disable_ipv6=1 "
	      "net.ipv6.conf.fp_port_peer.disable_ipv6=1");
	fx_sh("for l in fp_lan fp_lan_peer fp_wan fp_wan_peer fp_port fp_port_peer; do "
	      "ip link set $l up; done");
	fx_sh("ip addr add 198.18.1.1/24 dev fp_lan && ip addr add 198.19.2.1/24 dev fp_wan");
	fx_sh("ip addr add 2001:2:0:1::1/64 dev fp_lan nodad && "
	      "ip addr add 2001:2:0:2::1/64 dev fp_wan nodad");
	fx_sh("ip neigh add 198.18.1.2 lladdr 02:00:00:00:01:02 dev fp_lan nud permanent && "
	      "ip neigh add 198.19.2.2 lladdr 02:00:00:00:02:02 dev fp_wan nud permanent && "
	      "ip neigh add 2001:2:0:1::2 lladdr 02:00:00:00:01:02 dev fp_lan nud permanent && "
	      "ip neigh add 2001:2:0:2::2 lladdr 02:00:00:00:02:02 dev fp_wan nud permanent");
	fx_sh("sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1");

	fx.lan_ifindex = if_nametoindex("fp_lan");
	fx.wan_ifindex = if_nametoindex("fp_wan");
	fx.port_ifindex = if_nametoindex("fp_port");
	fx.nr_cpus = libbpf_num_possible_cpus();

	fx_load(fp_kernel_probe());
	/* FP_TEST_WIRE=1 tries the wire on a kernel that does not need it. */
	if (!test_run_takes_context() || getenv("FP_TEST_WIRE"))
		fx_wire_setup();
}

void fx_load(uint32_t kernel)
{
	fx_wire_release();
	fp_slots_unmap(&fx.slots4);
	fp_slots_unmap(&fx.slots6);
	xdp_fastpath__destroy(fx.skel);
	fx.kernel = kernel;
	fx.clock = (struct fp_clock){0};
	if (kernel & FP_KERNEL_JIFFIES)
		fx.clock = fp_kernel_clock();
	fx.skel = fp_datapath_open(kernel);
	if (!fx.skel)
		DIE("opening the XDP program failed: %s", strerror(errno));
	/* A small table: every reset clears it whole, in slow guests too. */
	fp_datapath_set_slots(fx.skel, FX_SLOTS, FX_SLOTS);
	if (xdp_fastpath__load(fx.skel))
		DIE("loading the XDP program failed: %s", strerror(errno));
	fx.prog_fd = bpf_program__fd(fx.skel->progs.xdp_fastpath);
	fx.prog_tc_fd = bpf_program__fd(fx.skel->progs.xdp_fastpath_tc);
	if (fp_slots_map(&fx.slots4, bpf_map__fd(fx.skel->maps.fp_flows4), &fp_slot_shape4) ||
	    fp_slots_map(&fx.slots6, bpf_map__fd(fx.skel->maps.fp_flows6), &fp_slot_shape6))
		DIE("mapping the flow tables failed: %s", strerror(errno));
	fx.slots4.owner = fx.slots6.owner = true;
	fx_reset();
}

void fx_teardown(void)
{
	fp_slots_unmap(&fx.slots4);
	fp_slots_unmap(&fx.slots6);
	xdp_fastpath__destroy(fx.skel);
	fx.skel = NULL;
}

static void clear_map(struct bpf_map *map, size_t key_size)
{
	uint8_t key[64], next[64];
	int fd = bpf_map__fd(map);

	while (bpf_map_get_next_key(fd, NULL, next) == 0) {
		memcpy(key, next, key_size);
		if (bpf_map_delete_elem(fd, key))
			DIE("delete from %s: %s", bpf_map__name(map), strerror(errno));
	}
}

void fx_set_config(const struct fp_config *cfg)
{
	struct fp_config with_clock = *cfg;
	uint32_t zero = 0;

	if (!with_clock.clock.tick_ns)
		with_clock.clock = fx.clock;
	if (bpf_map_update_elem(bpf_map__fd(fx.skel->maps.fp_config), &zero, &with_clock, 0))
		DIE("config update: %s", strerror(errno));
}

void fx_get_config(struct fp_config *cfg)
{
	uint32_t zero = 0;

	if (bpf_map_lookup_elem(bpf_map__fd(fx.skel->maps.fp_config), &zero, cfg))
		DIE("config lookup: %s", strerror(errno));
}

void fx_reset(void)
{
	struct fp_config cfg = {.nh_gen = 1};
	int ports[] = {fx.lan_ifindex, fx.wan_ifindex, fx.port_ifindex};

	/* No program runs but the tests' own: every slot FREE at once. */
	memset(fx.slots4.slot, 0, (size_t)(fx.slots4.mask + 1) * sizeof(struct fp_slot4));
	fx.slots4.pending.count = fx.slots4.limbo.count = 0;
	memset(fx.slots6.slot6, 0, (size_t)(fx.slots6.mask + 1) * sizeof(struct fp_slot6));
	fx.slots6.pending.count = fx.slots6.limbo.count = 0;
	clear_map(fx.skel->maps.fp_nat6, sizeof(struct fp_flow_key6));
	clear_map(fx.skel->maps.fp_nh_ctx_claim, sizeof(uint32_t));
	for (uint32_t i = 0; i < 2 * FP_NH_CTX_HALF; i++)
		if (bpf_map_update_elem(bpf_map__fd(fx.skel->maps.fp_nh_ctx), &i,
					&(struct fp_nh_ctx){}, 0))
			DIE("next-hop context %u: %s", i, strerror(errno));
	clear_map(fx.skel->maps.fp_marks4, sizeof(struct fp_flow_key4));
	clear_map(fx.skel->maps.fp_marks6, sizeof(struct fp_flow_key6));
	clear_map(fx.skel->maps.fp_ingress, sizeof(struct fp_ingress_key));
	clear_map(fx.skel->maps.fp_egress, sizeof(uint32_t));
	clear_map(fx.skel->maps.fp_fdb, sizeof(struct fp_fdb_key));
	clear_map(fx.skel->maps.fp_ports, sizeof(uint32_t));
	fx_set_config(&cfg);
	for (int i = 0; i < 3; i++) {
		uint32_t ifindex = ports[i];

		if (bpf_map_update_elem(bpf_map__fd(fx.skel->maps.fp_tx_ports), &ifindex, &ifindex,
					0))
			DIE("tx port %u: %s", ifindex, strerror(errno));
	}
}

void fx_del_tx_port(int ifindex)
{
	uint32_t key = ifindex;

	bpf_map_delete_elem(bpf_map__fd(fx.skel->maps.fp_tx_ports), &key);
}

void fx_add_ingress(const struct fp_ingress_key *key, const struct fp_ingress *upper)
{
	if (bpf_map_update_elem(bpf_map__fd(fx.skel->maps.fp_ingress), key, upper, 0))
		DIE("fp_ingress insert: %s", strerror(errno));
}

void fx_add_egress(uint32_t upper, const struct fp_egress *egress)
{
	if (bpf_map_update_elem(bpf_map__fd(fx.skel->maps.fp_egress), &upper, egress, 0))
		DIE("fp_egress insert: %s", strerror(errno));
}

void fx_add_fdb(uint32_t bridge, const uint8_t mac[6], uint32_t port)
{
	struct fp_fdb_key key = {.bridge = bridge};
	struct fp_fdb_port value = {.ifindex = port};

	memcpy(key.mac, mac, 6);
	if (bpf_map_update_elem(bpf_map__fd(fx.skel->maps.fp_fdb), &key, &value, 0))
		DIE("fp_fdb insert: %s", strerror(errno));
}

void fx_add_flow4(const struct fp_flow_key4 *key, const struct fp_flow4 *flow)
{
	uint32_t existing;
	int64_t index = fp_slots_insert(&fx.slots4, key, flow, &existing);

	/* Tests replace entries to change them: in place, as no program runs now. */
	if (index == -EEXIST) {
		fx.slots4.slot[existing].flow = *flow;
		fx.slots4.slot[existing].key.state = FP_SLOT_LIVE;
		index = existing;
	}
	if (index < 0 || fp_slots_sync(&fx.slots4))
		DIE("flow4 insert: %s", strerror(errno));
}

void fx_add_flow6(const struct fp_flow_key6 *key, const struct fp_flow6_full *full)
{
	struct fp_flow6 flow;
	struct fp_nat6 nat;
	uint32_t existing;
	int64_t index;

	fp_flow6_split(full, &flow, &nat);
	if ((full->meta.flags & (FP_FLOW_SNAT | FP_FLOW_DNAT)) &&
	    bpf_map_update_elem(bpf_map__fd(fx.skel->maps.fp_nat6), key, &nat, 0))
		DIE("nat6 insert: %s", strerror(errno));
	if (full->meta.nh_gen) {
		/* Resolved already: its next hop where the same one is in its generation's
		 * half, or in the first free entry there, claimed as the datapath claims one. */
		struct fp_nh_ctx ctx = {.meta = full->meta, .used = 1}, have;
		int ctx_fd = bpf_map__fd(fx.skel->maps.fp_nh_ctx);
		uint32_t at = fp_nh_ctx_half(full->meta.nh_gen) * FP_NH_CTX_HALF;
		uint32_t end = at + FP_NH_CTX_HALF;

		ctx.meta.nh_gen = 0;
		ctx.meta.last_seen = 0;
		ctx.meta.flags &= FP_NH_MASK;
		for (; at < end; at++) {
			if (bpf_map_lookup_elem(ctx_fd, &at, &have))
				DIE("next hop %u: %s", at, strerror(errno));
			if (!have.used || !memcmp(&have, &ctx, sizeof(ctx)))
				break;
		}
		if (at == end ||
		    bpf_map_update_elem(bpf_map__fd(fx.skel->maps.fp_nh_ctx_claim), &at, &ctx, 0) ||
		    bpf_map_update_elem(ctx_fd, &at, &ctx, 0))
			DIE("next hop: %s", strerror(errno));
		flow.nh_ctx = at;
		flow.nh_gen = full->meta.nh_gen;
	}
	/* Tests replace entries to change them: in place, as no program runs now. */
	index = fp_slots_insert(&fx.slots6, key, &flow, &existing);
	if (index == -EEXIST) {
		fx.slots6.slot6[existing].flow = flow;
		fx.slots6.slot6[existing].key.state = FP_SLOT_LIVE;
		index = existing;
	}
	if (index < 0 || fp_slots_sync(&fx.slots6))
		DIE("flow6 insert: %s", strerror(errno));
	if (full->state)
		fx.slots6.slot6[index].key.state = full->state;
}

void fx_set_mark4(const struct fp_flow_key4 *key, uint32_t mark)
{
	if (bpf_map_update_elem(bpf_map__fd(fx.skel->maps.fp_marks4), key, &mark, 0))
		DIE("mark4 insert: %s", strerror(errno));
}

int fx_get_flow4_state(const struct fp_flow_key4 *key)
{
	int64_t index = fp_slots_find(&fx.slots4, key);

	return index >= 0 ? fx.slots4.slot[index].key.state : -1;
}

void fx_set_flow4_state(const struct fp_flow_key4 *key, uint8_t state)
{
	int64_t index = fp_slots_find(&fx.slots4, key);

	if (index < 0)
		DIE("no IPv4 flow to set the state of");
	fx.slots4.slot[index].key.state = state;
}

bool fx_get_flow4(const struct fp_flow_key4 *key, struct fp_flow4 *flow)
{
	int64_t index = fp_slots_find(&fx.slots4, key);

	if (index >= 0)
		*flow = fx.slots4.slot[index].flow;
	return index >= 0;
}

bool fx_get_flow6(const struct fp_flow_key6 *key, struct fp_flow6_full *full)
{
	struct fp_flow6 flow;
	struct fp_nat6 nat;
	struct fp_nh_ctx ctx;
	int64_t slot = fp_slots_find(&fx.slots6, key);
	uint32_t index;
	bool has_nat, has_ctx;

	if (slot < 0)
		return false;
	flow = fx.slots6.slot6[slot].flow;
	index = flow.nh_ctx;
	has_nat = bpf_map_lookup_elem(bpf_map__fd(fx.skel->maps.fp_nat6), key, &nat) == 0;
	has_ctx = flow.nh_gen &&
		  bpf_map_lookup_elem(bpf_map__fd(fx.skel->maps.fp_nh_ctx), &index, &ctx) == 0;
	fp_flow6_join(&flow, has_nat ? &nat : NULL, has_ctx ? &ctx : NULL, full);
	full->state = fx.slots6.slot6[slot].key.state;
	return true;
}

int fx_run(const uint8_t *in, uint32_t in_len, int ingress, uint8_t *out, uint32_t *out_len)
{
	struct xdp_md ctx_in = {.data_end = in_len, .ingress_ifindex = ingress};
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = in, .data_size_in = in_len, .data_out = out,
		    .data_size_out = PKT_MAX, .ctx_in = &ctx_in, .ctx_size_in = sizeof(ctx_in),
		    .repeat = 1);

	if (fx_wire)
		return fx_wire_run(in, in_len, ingress, out, out_len);
	if (bpf_prog_test_run_opts(fx.prog_fd, &opts))
		DIE("BPF_PROG_TEST_RUN: %s", strerror(errno));
	*out_len = opts.data_size_out;
	return opts.retval;
}

int fx_run_tc(const uint8_t *in, uint32_t in_len, int ingress, uint16_t gso_size, uint8_t *out,
	      uint32_t *out_len)
{
	/* ifindex puts the skb on the device, as the tc hook sees it; gso_segs stays 0, as
	 * the program counts the segments itself. */
	struct __sk_buff ctx = {.ifindex = ingress, .gso_size = gso_size};
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = in, .data_size_in = in_len, .data_out = out,
		    .data_size_out = PKT_MAX, .ctx_in = &ctx, .ctx_size_in = sizeof(ctx),
		    .repeat = 1);

	if (bpf_prog_test_run_opts(fx.prog_tc_fd, &opts))
		DIE("BPF_PROG_TEST_RUN of the tc entry point: %s", strerror(errno));
	*out_len = opts.data_size_out;
	return opts.retval;
}

void fx_read_stats(uint64_t stats[FP_STAT_MAX])
{
	struct fp_stats percpu[fx.nr_cpus];
	int fd = bpf_map__fd(fx.skel->maps.fp_stats);
	uint32_t zero = 0;

	if (bpf_map_lookup_elem(fd, &zero, percpu))
		DIE("stats lookup: %s", strerror(errno));
	for (int i = 0; i < FP_STAT_MAX; i++)
		stats[i] = fp_stat_total(percpu, fx.nr_cpus, i);
}
