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
#include <string.h>
#include <netinet/in.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "fixture.h"
#include "packet.h"
#include "testlib.h"
#include "tests.h"

#define RUNS_PER_CALL 250
#define CALLS	      4000

static void add_pingpong_flow(const char *saddr, uint16_t sport, const char *nat_saddr,
			      uint16_t nat_sport)
{
	struct fp_flow_key4 key = {.ifindex = fx.lan_ifindex,
				   .proto = IPPROTO_TCP,
				   .sport = htons(sport),
				   .dport = htons(443)};
	struct fp_flow4 flow = {.meta = {.flags = FP_FLOW_SNAT,
					 .nh_gen = 1,
					 .mtu = FX_WAN_MTU,
					 .oif = fx.wan_ifindex},
				.nat_sport = htons(nat_sport)};

	inet_pton(AF_INET, saddr, &key.saddr);
	inet_pton(AF_INET, "198.19.2.2", &key.daddr);
	inet_pton(AF_INET, nat_saddr, &flow.nat_saddr);
	memcpy(flow.meta.dmac, fx_wan_host_mac, 6);
	memcpy(flow.meta.smac, fx_wan_mac, 6);
	fx_add_flow4(&key, &flow);
}

/* Average ns per run over CALLS calls of `repeat` runs each. */
static double measure(const uint8_t *frame, size_t len, uint32_t repeat, uint32_t *retval)
{
	static uint8_t out[PKT_MAX];
	struct xdp_md ctx_in = {.data_end = len, .ingress_ifindex = fx.lan_ifindex};
	uint64_t total_ns = 0;

	for (int i = 0; i < CALLS; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = frame, .data_size_in = len,
			    .data_out = out, .data_size_out = sizeof(out), .ctx_in = &ctx_in,
			    .ctx_size_in = sizeof(ctx_in), .repeat = repeat);

		if (bpf_prog_test_run_opts(fx.prog_fd, &opts))
			DIE("BPF_PROG_TEST_RUN: %s", strerror(errno));
		total_ns += (uint64_t)opts.duration * repeat;
		*retval = opts.retval;
	}
	return (double)total_ns / ((double)CALLS * repeat);
}

void prog_cost(void)
{
	static uint8_t frame[PKT_MAX];
	/* TTL 255: room for the repeated runs; 18 bytes of payload: a 64-byte frame */
	const struct pkt_spec spec = {FROM_LAN, CLI4, .proto = IPPROTO_TCP, .ttl = 255,
				      .payload_len = 18};
	uint64_t before[FP_STAT_MAX], after[FP_STAT_MAX];
	size_t len = pkt_build(&spec, frame);
	uint32_t retval;
	double fast_ns, pass_ns;

	fx_reset();
	add_pingpong_flow("198.18.1.2", 40000, "198.19.2.1", 61000);
	add_pingpong_flow("198.19.2.1", 61000, "198.18.1.2", 40000);

	fx_read_stats(before);
	fast_ns = measure(frame, len, RUNS_PER_CALL, &retval);
	fx_read_stats(after);
	if (after[FP_STAT_FORWARDED] - before[FP_STAT_FORWARDED] != (uint64_t)CALLS * RUNS_PER_CALL)
		DIE("bench: only %llu of %llu runs took the fast path",
		    (unsigned long long)(after[FP_STAT_FORWARDED] - before[FP_STAT_FORWARDED]),
		    (unsigned long long)CALLS * RUNS_PER_CALL);

	fx_reset(); /* no flows: the lookup-miss path, which leaves the frame as it is */
	pass_ns = measure(frame, len, RUNS_PER_CALL, &retval);

	printf("bench-prog: BPF_PROG_TEST_RUN, %d calls x %d runs, 64-byte IPv4 TCP frame\n", CALLS,
	       RUNS_PER_CALL);
	printf("  fast path (flow hit, SNAT, cached next hop, redirect): %6.1f ns/packet\n",
	       fast_ns);
	printf("  miss (parse, lookup, pass to the kernel):             %6.1f ns/packet\n",
	       pass_ns);
}
