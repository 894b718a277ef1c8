// SPDX-License-Identifier: GPL-2.0-only
/*
 * make bench-prog: the datapath's own cost per packet, from BPF_PROG_TEST_RUN with repeat.
 * No timing is asserted anywhere: this prints figures for the benchmark notes.
 *
 * A repeated run works on the same buffer, so a forwarded packet comes back already
 * rewritten. Two flows that translate into each other keep every run on the fast path;
 * TTL 255 gives room for 250 runs per call, and the forwarded counter proves they all were.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <linux/bpf.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bench/bench.h"
#include "fixture.h"
#include "packet.h"
#include "testlib.h"
#include "tests.h"

#define RUNS_PER_CALL 250
#define CALLS	      20000

static void pingpong_key(const char *saddr, uint16_t sport, struct fp_flow_key4 *key)
{
	*key = (struct fp_flow_key4){.ifindex = fx.lan_ifindex,
				     .proto = IPPROTO_TCP,
				     .sport = htons(sport),
				     .dport = htons(443)};
	inet_pton(AF_INET, saddr, &key->saddr);
	inet_pton(AF_INET, "198.19.2.2", &key->daddr);
}

static void add_pingpong_flow(const char *saddr, uint16_t sport, const char *nat_saddr,
			      uint16_t nat_sport)
{
	struct fp_flow_key4 key;
	struct fp_flow4 flow = {.meta = {.flags = FP_FLOW_SNAT,
					 .nh_gen = 1,
					 .mtu = FX_WAN_MTU,
					 .oif = fx.wan_ifindex},
				.nat_sport = htons(nat_sport)};

	pingpong_key(saddr, sport, &key);
	inet_pton(AF_INET, nat_saddr, &flow.nat_saddr);
	memcpy(flow.meta.dmac, fx_wan_host_mac, 6);
	memcpy(flow.meta.smac, fx_wan_mac, 6);
	fx_add_flow4(&key, &flow);
}

/* IPv6 as a router mostly forwards it, routed without NAT: the packet's tuple stays as it
 * is, so one flow keeps every repeated run on the fast path. */
static void add_routed_flow6(void)
{
	struct fp_flow_key6 key = {.ifindex = fx.lan_ifindex,
				   .proto = IPPROTO_TCP,
				   .sport = htons(40000),
				   .dport = htons(443)};
	struct fp_flow6_full flow = {
		.meta = {.nh_gen = 1, .mtu = FX_WAN_MTU, .oif = fx.wan_ifindex}};

	inet_pton(AF_INET6, "2001:2:0:1::2", key.saddr);
	inet_pton(AF_INET6, "2001:2:0:2::2", key.daddr);
	memcpy(flow.meta.dmac, fx_wan_host_mac, 6);
	memcpy(flow.meta.smac, fx_wan_mac, 6);
	fx_add_flow6(&key, &flow);
}

/*
 * Average ns per run over CALLS calls of `repeat` runs each, of program @prog_fd. The
 * program is attached (generic XDP, to the fixture's idle port) meanwhile: each test run
 * puts its program into the kernel's XDP dispatcher and takes it out again, which waits
 * for an RCU grace period (milliseconds) unless the program is there already.
 */
static double measure(int prog_fd, const uint8_t *frame, size_t len, uint32_t repeat)
{
	static uint8_t out[PKT_MAX];
	struct xdp_md ctx_in = {.data_end = len, .ingress_ifindex = fx.lan_ifindex};
	uint64_t total_ns = 0;

	if (bpf_xdp_attach(fx.port_ifindex, prog_fd, XDP_FLAGS_SKB_MODE, NULL))
		DIE("bench-prog: attaching to the idle port: %s", strerror(errno));
	for (int i = 0; i < CALLS; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = frame, .data_size_in = len,
			    .data_out = out, .data_size_out = sizeof(out), .ctx_in = &ctx_in,
			    .ctx_size_in = sizeof(ctx_in), .repeat = repeat);

		if (bpf_prog_test_run_opts(prog_fd, &opts))
			DIE("BPF_PROG_TEST_RUN: %s", strerror(errno));
		total_ns += (uint64_t)opts.duration * repeat;
	}
	bpf_xdp_detach(fx.port_ifindex, XDP_FLAGS_SKB_MODE, NULL);
	return (double)total_ns / ((double)CALLS * repeat);
}

/*
 * One stage of the breakdown: @frame through the fastpath, every run of which must end in
 * @stat (the counters prove the figure is of the path it names). Returns ns per packet.
 */
static double stage(const char *what, const uint8_t *frame, size_t len, enum fp_stat stat,
		    double prev_ns)
{
	uint64_t before[FP_STAT_MAX], after[FP_STAT_MAX];
	double ns;

	fx_read_stats(before);
	ns = measure(fx.prog_fd, frame, len, RUNS_PER_CALL);
	fx_read_stats(after);
	if (after[stat] - before[stat] != (uint64_t)CALLS * RUNS_PER_CALL)
		DIE("bench-prog: %s: %llu of %llu runs ended in %s", what,
		    (unsigned long long)(after[stat] - before[stat]),
		    (unsigned long long)CALLS * RUNS_PER_CALL, fp_stat_names[stat]);
	printf("  %-52s %6.1f  %+6.1f\n", what, ns, ns - prev_ns);
	return ns;
}

/* BPF_PROG_TEST_RUN's own cost per run: a program that only returns XDP_PASS. */
static double empty_program_ns(const uint8_t *frame, size_t len)
{
	const struct bpf_insn insns[] = {
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = XDP_PASS},
		{.code = BPF_JMP | BPF_EXIT},
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "fp_empty", "GPL", insns, 2, NULL);
	double ns;

	if (fd < 0)
		DIE("bench-prog: loading an empty program: %s", strerror(errno));
	ns = measure(fd, frame, len, RUNS_PER_CALL);
	close(fd);
	return ns;
}

/*
 * The benchmark's ceiling (xdp_redirect in @obj, tests/bench/bench.bpf.c): new MACs and a
 * devmap redirect, no lookup and no rewrite, here towards the fixture's WAN port. Its
 * counter proves every run reached the redirect. Returns ns per packet.
 */
static double bare_redirect_ns(const char *obj_path, const uint8_t *frame, size_t len)
{
	struct bpf_object *obj = bpf_object__open_file(obj_path, NULL);
	struct bench_cfg cfg = {0};
	uint32_t zero = 0, oif = fx.wan_ifindex;
	int ncpus = libbpf_num_possible_cpus();
	uint64_t counted = 0, *count;
	struct bpf_program *prog;
	double ns;

	if (!obj || bpf_object__load(obj))
		DIE("bench-prog: loading %s: %s", obj_path, strerror(errno));
	prog = bpf_object__find_program_by_name(obj, "xdp_redirect");
	memcpy(cfg.dmac, fx_wan_host_mac, 6);
	memcpy(cfg.smac, fx_wan_mac, 6);
	if (!prog ||
	    bpf_map__update_elem(bpf_object__find_map_by_name(obj, "bench_cfg"), &zero,
				 sizeof(zero), &cfg, sizeof(cfg), BPF_ANY) ||
	    bpf_map__update_elem(bpf_object__find_map_by_name(obj, "bench_tx"), &zero, sizeof(zero),
				 &oif, sizeof(oif), BPF_ANY))
		DIE("bench-prog: setting up the ceiling program: %s", strerror(errno));
	ns = measure(bpf_program__fd(prog), frame, len, RUNS_PER_CALL);
	count = calloc(ncpus, sizeof(*count));
	if (!count || bpf_map__lookup_elem(bpf_object__find_map_by_name(obj, "bench_count"), &zero,
					   sizeof(zero), count, ncpus * sizeof(*count), 0))
		DIE("bench-prog: reading the ceiling's counter");
	for (int cpu = 0; cpu < ncpus; cpu++)
		counted += count[cpu];
	free(count);
	bpf_object__close(obj);
	if (counted != (uint64_t)CALLS * RUNS_PER_CALL)
		DIE("bench-prog: the ceiling redirected %llu of %llu runs",
		    (unsigned long long)counted, (unsigned long long)CALLS * RUNS_PER_CALL);
	return ns;
}

/*
 * The fast path's cost, and where it goes: frames that leave the program at successive
 * points of its path (each a real outcome, not a build with parts cut out), so each line's
 * difference from the one before is the cost of the stage it adds.
 */
void prog_cost(const char *ceiling_obj)
{
	static uint8_t tcp[PKT_MAX], tcp_ttl1[PKT_MAX], icmp[PKT_MAX], arp[PKT_MAX], tcp6[PKT_MAX];
	/* TTL 255: room for the repeated runs; 18 bytes of payload: a 64-byte frame */
	const struct pkt_spec tcp_spec = {FROM_LAN, CLI4, .proto = IPPROTO_TCP, .ttl = 255,
					  .payload_len = 18};
	const struct pkt_spec ttl1_spec = {FROM_LAN, CLI4, .proto = IPPROTO_TCP, .ttl = 1,
					   .payload_len = 18};
	const struct pkt_spec icmp_spec = {FROM_LAN, CLI4, .proto = IPPROTO_ICMP,
					   .payload_len = 18};
	const struct pkt_spec arp_spec = {FROM_LAN, CLI4, .ethertype = 0x0806, .payload_len = 18};
	const struct pkt_spec tcp6_spec = {FROM_LAN, CLI6, .proto = IPPROTO_TCP, .ttl = 255};
	size_t tcp_len = pkt_build(&tcp_spec, tcp);
	size_t ttl1_len = pkt_build(&ttl1_spec, tcp_ttl1);
	size_t icmp_len = pkt_build(&icmp_spec, icmp);
	size_t arp_len = pkt_build(&arp_spec, arp);
	size_t tcp6_len = pkt_build(&tcp6_spec, tcp6);
	struct fp_flow_key4 key;
	struct fp_flow4 flow;
	double ns, empty_ns;

	printf("bench-prog: BPF_PROG_TEST_RUN, %d calls x %d runs, 64-byte IPv4 TCP frame\n", CALLS,
	       RUNS_PER_CALL);
	printf("  %-52s %6s  %6s\n", "ns per packet, to the end of:", "total", "stage");
	ns = empty_ns = empty_program_ns(tcp, tcp_len);
	printf("  %-52s %6.1f\n", "an empty program (the test run's own cost)", ns);

	fx_reset();
	ns = stage("Ethernet, not IP: config, parse L2, count, pass", arp, arp_len,
		   FP_STAT_PASS_NOT_IP, ns);
	ns = stage("+ parse IPv4; ICMP: pass", icmp, icmp_len, FP_STAT_PASS_PROTO, ns);
	ns = stage("+ parse TCP, clock, lease; TTL 1: pass", tcp_ttl1, ttl1_len, FP_STAT_PASS_TTL,
		   ns);
	ns = stage("+ TCP flags, key, flow lookup: no flow, pass", tcp, tcp_len,
		   FP_STAT_PASS_NO_FLOW, ns);

	/* The flow, closing: the lookup hits, the flags send it on to the kernel. */
	add_pingpong_flow("198.18.1.2", 40000, "198.19.2.1", 61000);
	pingpong_key("198.18.1.2", 40000, &key);
	if (!fx_get_flow4(&key, &flow))
		DIE("bench-prog: the flow is not in the map");
	fx_set_flow4_state(&key, FP_SLOT_LIVE | FP_SLOT_CLOSING);
	ns = stage("+ the flow found (closing: pass)", tcp, tcp_len, FP_STAT_PASS_CLOSING, ns);

	/* Its egress not attached: the cached next hop is checked, then the devmap. */
	fx_set_flow4_state(&key, FP_SLOT_LIVE);
	fx_del_tx_port(fx.wan_ifindex);
	ns = stage("+ next hop (cached), egress not attached: pass", tcp, tcp_len,
		   FP_STAT_PASS_EGRESS, ns);

	/* The fast path: two flows that translate into each other, so that every repeated
	 * run on the same, rewritten buffer hits one of them. */
	fx_reset();
	add_pingpong_flow("198.18.1.2", 40000, "198.19.2.1", 61000);
	add_pingpong_flow("198.19.2.1", 61000, "198.18.1.2", 40000);
	stage("+ MTU, NAT and checksums, MACs, counters: redirect", tcp, tcp_len, FP_STAT_FORWARDED,
	      ns);

	/* The stage column of this line is its cost above the empty program. */
	fx_reset();
	add_routed_flow6();
	stage("IPv6 (a 74-byte TCP frame, routed): redirect", tcp6, tcp6_len, FP_STAT_FORWARDED,
	      empty_ns);
	fx_reset();

	/* make bench's ceiling, the same frame: the stage column is above the empty program. */
	if (ceiling_obj) {
		ns = bare_redirect_ns(ceiling_obj, tcp, tcp_len);
		printf("  %-52s %6.1f  %+6.1f\n", "the bare redirect (make bench's ceiling)", ns,
		       ns - empty_ns);
	}
}
