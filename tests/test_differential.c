// SPDX-License-Identifier: GPL-2.0-only
/*
 * Randomized differential test of the datapath. Valid frames of installed flows are mutated
 * at random (bit flips, field values, truncation, padding, tuple changes) and run through the
 * program. An independent reference model, written from the README's rules ("What is
 * offloaded") rather than from the BPF code, predicts for each frame the verdict, the
 * counter and the output.
 *
 * Asserted for every frame: the verdict is PASS or REDIRECT and equals the model's; exactly
 * the model's counter moves; a passed frame is unmodified; a redirected frame equals the
 * model's rewrite in every byte but the checksums, its IPv4 header checksum verifies, and its
 * L4 checksum verifies exactly when the input's did (the rewrite must preserve validity).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <linux/bpf.h>

#include "fixture.h"
#include "packet.h"
#include "testlib.h"
#include "tests.h"

#define MAX_REPORTED_FAILURES 10

static uint64_t rng_state;

static uint32_t rnd(void)
{
	/* xorshift64*: reproducible from the seed printed at the start */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (uint32_t)((rng_state * 2685821657736338717ull) >> 32);
}

static uint32_t rnd_below(uint32_t n)
{
	return rnd() % n;
}

/* The flows installed for the whole run: one per template. */
struct ref_flow {
	int family;
	int ingress;
	struct fp_flow_key4 k4;
	struct fp_flow4 v4;
	struct fp_flow_key6 k6;
	struct fp_flow6_full v6;
};

#define NR_TEMPLATES 6
static struct ref_flow flows[NR_TEMPLATES];
static struct pkt_spec templates[NR_TEMPLATES];

struct ref_result {
	int verdict;
	enum fp_stat stat;
	bool closes; /* marks its flow closing */
	uint8_t out[PKT_MAX];
	size_t l4csum_off; /* in the output, for REDIRECT */
	size_t l3_len;
};

static uint16_t get16(const uint8_t *p)
{
	return p[0] << 8 | p[1];
}

static bool ext_header(uint8_t nh)
{
	/* IANA "IPv6 Extension Header Types" */
	return nh == 0 || nh == 43 || nh == 44 || nh == 50 || nh == 51 || nh == 60 || nh == 135 ||
	       nh == 139 || nh == 140 || nh == 253 || nh == 254;
}

static const struct ref_flow *ref_lookup(const uint8_t *l3, const uint8_t *l4, int family,
					 uint8_t proto, int ingress)
{
	for (int i = 0; i < NR_TEMPLATES; i++) {
		const struct ref_flow *f = &flows[i];

		if (f->family != family || f->ingress != ingress)
			continue;
		if (family == 4 && f->k4.proto == proto && !memcmp(&f->k4.saddr, l3 + 12, 4) &&
		    !memcmp(&f->k4.daddr, l3 + 16, 4) && !memcmp(&f->k4.sport, l4, 2) &&
		    !memcmp(&f->k4.dport, l4 + 2, 2))
			return f;
		if (family == 6 && f->k6.proto == proto && !memcmp(f->k6.saddr, l3 + 8, 16) &&
		    !memcmp(f->k6.daddr, l3 + 24, 16) && !memcmp(&f->k6.sport, l4, 2) &&
		    !memcmp(&f->k6.dport, l4 + 2, 2))
			return f;
	}
	return NULL;
}

/* The model: what the fastpath must do with this frame. */
static void ref_model(const uint8_t *in, size_t len, int ingress, struct ref_result *r)
{
	const uint8_t *l3 = in + 14, *l4;
	uint16_t type = get16(in + 12);
	size_t l3_len, l4_len;
	int family;
	uint8_t proto, ttl;
	const struct ref_flow *f;
	const struct fp_flow_meta *meta;

	r->verdict = XDP_PASS;
	r->closes = false;
	if (in[0] & 1) {
		r->stat = FP_STAT_PASS_NOT_UNICAST;
		return;
	}
	/* L2 below IP: no VLAN or PPPoE session is known here (no fp_ingress entries). */
	if (type == 0x8100 || type == 0x88a8 || type == 0x8864) {
		size_t off = 14;
		bool tagged = type == 0x8100;

		r->stat = FP_STAT_PASS_VLAN;
		if (type == 0x88a8)
			return;
		if (tagged) {
			r->stat = FP_STAT_PASS_MALFORMED;
			if (len < 18)
				return;
			type = get16(in + 16);
			r->stat = FP_STAT_PASS_VLAN;
			if (!(get16(in + 14) & 0xfff) || type == 0x8100 || type == 0x88a8)
				return;
			off = 18;
		}
		if (type == 0x8864) {
			r->stat = FP_STAT_PASS_MALFORMED;
			if (len < off + 8)
				return;
			r->stat = FP_STAT_PASS_PPPOE;
			if (in[off] != 0x11 || in[off + 1] != 0 || !get16(in + off + 2))
				return;
			r->stat = FP_STAT_PASS_MALFORMED;
			if (off + 6 + get16(in + off + 4) > len)
				return;
			type = get16(in + off + 6) == 0x0021   ? 0x0800
			       : get16(in + off + 6) == 0x0057 ? 0x86dd
							       : 0;
			r->stat = FP_STAT_PASS_PPPOE;
		}
		if (type != 0x0800 && type != 0x86dd)
			r->stat = FP_STAT_PASS_NOT_IP;
		else if (tagged)
			r->stat = FP_STAT_PASS_VLAN;
		return;
	}
	r->stat = FP_STAT_PASS_MALFORMED;
	if (type == 0x0800) {
		family = 4;
		if (len < 14 + 20 || l3[0] >> 4 != 4 || (l3[0] & 15) < 5)
			return;
		if ((l3[0] & 15) > 5) {
			r->stat = FP_STAT_PASS_IP_OPTIONS;
			return;
		}
		l3_len = get16(l3 + 2);
		if (l3_len < 20 || 14 + l3_len > len || !pkt_ipv4_csum_ok(in, len))
			return;
		if (get16(l3 + 6) & 0x3fff) {
			r->stat = FP_STAT_PASS_FRAGMENT;
			return;
		}
		proto = l3[9];
		ttl = l3[8];
		l4 = l3 + 20;
		l4_len = l3_len - 20;
	} else if (type == 0x86dd) {
		family = 6;
		if (len < 14 + 40 || l3[0] >> 4 != 6)
			return;
		l3_len = 40 + get16(l3 + 4);
		if (l3_len == 40 || 14 + l3_len > len)
			return;
		proto = l3[6];
		if (proto == 44) {
			r->stat = FP_STAT_PASS_FRAGMENT;
			return;
		}
		if (ext_header(proto)) {
			r->stat = FP_STAT_PASS_IP_OPTIONS;
			return;
		}
		ttl = l3[7];
		l4 = l3 + 40;
		l4_len = l3_len - 40;
	} else {
		r->stat = FP_STAT_PASS_NOT_IP;
		return;
	}
	if (proto != IPPROTO_TCP && proto != IPPROTO_UDP) {
		r->stat = FP_STAT_PASS_PROTO;
		return;
	}
	if (proto == IPPROTO_TCP) {
		if (l4_len < 20 || (l4[12] >> 4) < 5 || (size_t)(l4[12] >> 4) * 4 > l4_len)
			return;
	} else {
		if (l4_len < 8 || get16(l4 + 4) < 8 || get16(l4 + 4) > l4_len)
			return;
		if (family == 6 && get16(l4 + 6) == 0)
			return;
	}
	if (ttl <= 1) {
		r->stat = FP_STAT_PASS_TTL;
		return;
	}
	if (proto == IPPROTO_TCP && ((l4[13] & 0x02) || !(l4[13] & 0x14))) {
		r->stat = FP_STAT_PASS_TCP_FLAGS;
		return;
	}
	f = ref_lookup(l3, l4, family, proto, ingress);
	if (!f) {
		r->stat = FP_STAT_PASS_NO_FLOW;
		return;
	}
	if (proto == IPPROTO_TCP && (l4[13] & 0x05)) {
		r->stat = FP_STAT_PASS_TCP_FLAGS;
		r->closes = true;
		return;
	}
	meta = family == 4 ? &f->v4.meta : &f->v6.meta;
	if (l3_len > meta->mtu || len - 14 > meta->mtu) { /* padding counts too */
		r->stat = FP_STAT_PASS_MTU;
		return;
	}

	/* Forwarded: the rewrite, checksum fields left as they are (checked separately). */
	r->verdict = XDP_REDIRECT;
	r->stat = FP_STAT_FORWARDED;
	r->l3_len = l3_len;
	memcpy(r->out, in, len);
	memcpy(r->out, meta->dmac, 6);
	memcpy(r->out + 6, meta->smac, 6);
	uint8_t *o3 = r->out + 14, *o4 = o3 + (family == 4 ? 20 : 40);

	if (family == 4) {
		if (meta->flags & FP_FLOW_SNAT) {
			memcpy(o3 + 12, &f->v4.nat_saddr, 4);
			memcpy(o4, &f->v4.nat_sport, 2);
		}
		if (meta->flags & FP_FLOW_DNAT) {
			memcpy(o3 + 16, &f->v4.nat_daddr, 4);
			memcpy(o4 + 2, &f->v4.nat_dport, 2);
		}
		o3[8]--;
	} else {
		if (meta->flags & FP_FLOW_SNAT) {
			memcpy(o3 + 8, f->v6.nat_saddr, 16);
			memcpy(o4, &f->v6.nat_sport, 2);
		}
		if (meta->flags & FP_FLOW_DNAT) {
			memcpy(o3 + 24, f->v6.nat_daddr, 16);
			memcpy(o4 + 2, &f->v6.nat_dport, 2);
		}
		o3[7]--;
	}
	r->l4csum_off = (size_t)(o4 - r->out) + (proto == IPPROTO_TCP ? 16 : 6);
}

static void set_flow(struct ref_flow *f, const struct pkt_spec *t, int ingress, uint16_t flags,
		     const char *nat_saddr, uint16_t nat_sport, const char *nat_daddr,
		     uint16_t nat_dport)
{
	int egress = ingress == fx.lan_ifindex ? fx.wan_ifindex : fx.lan_ifindex;
	struct fp_flow_meta meta = {.flags = flags, .nh_gen = 1, .oif = egress};

	meta.mtu = egress == fx.wan_ifindex ? FX_WAN_MTU : 1500;
	memcpy(meta.dmac, egress == fx.wan_ifindex ? fx_wan_host_mac : fx_lan_host_mac, 6);
	memcpy(meta.smac, egress == fx.wan_ifindex ? fx_wan_mac : fx_lan_mac, 6);
	memset(f, 0, sizeof(*f));
	f->family = t->family;
	f->ingress = ingress;
	if (t->family == 4) {
		f->k4 = (struct fp_flow_key4){.ifindex = ingress,
					      .proto = t->proto,
					      .sport = htons(t->sport),
					      .dport = htons(t->dport)};
		inet_pton(AF_INET, t->saddr, &f->k4.saddr);
		inet_pton(AF_INET, t->daddr, &f->k4.daddr);
		f->v4.meta = meta;
		if (nat_saddr)
			inet_pton(AF_INET, nat_saddr, &f->v4.nat_saddr);
		if (nat_daddr)
			inet_pton(AF_INET, nat_daddr, &f->v4.nat_daddr);
		f->v4.nat_sport = htons(nat_sport);
		f->v4.nat_dport = htons(nat_dport);
	} else {
		f->k6 = (struct fp_flow_key6){.ifindex = ingress,
					      .proto = t->proto,
					      .sport = htons(t->sport),
					      .dport = htons(t->dport)};
		inet_pton(AF_INET6, t->saddr, f->k6.saddr);
		inet_pton(AF_INET6, t->daddr, f->k6.daddr);
		f->v6.meta = meta;
		if (nat_saddr)
			inet_pton(AF_INET6, nat_saddr, f->v6.nat_saddr);
		if (nat_daddr)
			inet_pton(AF_INET6, nat_daddr, f->v6.nat_daddr);
		f->v6.nat_sport = htons(nat_sport);
		f->v6.nat_dport = htons(nat_dport);
	}
}

static void install_flows(void)
{
	for (int i = 0; i < NR_TEMPLATES; i++) {
		if (flows[i].family == 4)
			fx_add_flow4(&flows[i].k4, &flows[i].v4);
		else
			fx_add_flow6(&flows[i].k6, &flows[i].v6);
	}
}

static void setup_templates(void)
{
	static const struct pkt_spec t[NR_TEMPLATES] = {
		{FROM_LAN, CLI4, .proto = IPPROTO_TCP},
		{FROM_LAN, .family = 4, .saddr = "198.18.1.2", .daddr = "198.19.2.2",
		 .sport = 40001, .dport = 53, .proto = IPPROTO_UDP},
		{FROM_WAN, .family = 4, .saddr = "198.19.2.2", .daddr = "198.19.2.1", .sport = 443,
		 .dport = 61000, .proto = IPPROTO_TCP},
		{FROM_WAN, .family = 4, .saddr = "198.19.2.2", .daddr = "198.19.2.1", .sport = 4500,
		 .dport = 61001, .proto = IPPROTO_UDP, .udp_no_csum = true},
		{FROM_LAN, .family = 6, .saddr = "2001:2:0:1::2", .daddr = "2001:2:0:2::2",
		 .sport = 40000, .dport = 443, .proto = IPPROTO_TCP},
		{FROM_WAN, .family = 6, .saddr = "2001:2:0:2::2", .daddr = "2001:2:0:2::1",
		 .sport = 443, .dport = 61000, .proto = IPPROTO_UDP},
	};

	memcpy(templates, t, sizeof(t));
	set_flow(&flows[0], &t[0], fx.lan_ifindex, FP_FLOW_SNAT, "198.19.2.1", 61000, NULL, 0);
	set_flow(&flows[1], &t[1], fx.lan_ifindex, FP_FLOW_SNAT, "198.19.2.1", 61001, NULL, 0);
	set_flow(&flows[2], &t[2], fx.wan_ifindex, FP_FLOW_DNAT, NULL, 0, "198.18.1.2", 40000);
	set_flow(&flows[3], &t[3], fx.wan_ifindex, FP_FLOW_DNAT, NULL, 0, "198.18.1.2", 4500);
	set_flow(&flows[4], &t[4], fx.lan_ifindex, 0, NULL, 0, NULL, 0);
	set_flow(&flows[5], &t[5], fx.wan_ifindex, FP_FLOW_DNAT, NULL, 0, "2001:2:0:1::2", 40001);
}

static void refresh_ipv4_csum(uint8_t *buf, size_t len)
{
	size_t ihl = (buf[14] & 15) * 4;

	if (get16(buf + 12) != 0x0800 || ihl < 20 || 14 + ihl > len)
		return;
	buf[24] = buf[25] = 0;
	uint16_t c = ~csum_fold32(csum_partial(buf + 14, ihl, 0));
	buf[24] = c >> 8;
	buf[25] = c & 0xff;
}

/* A frame of a random template, mutated 0 to 3 times. */
static size_t make_frame(uint8_t *buf, int *ingress)
{
	int t = rnd_below(NR_TEMPLATES);
	struct pkt_spec s = templates[t];
	size_t len;
	int mutations = rnd_below(4);

	*ingress = flows[t].ingress;
	s.payload_len = rnd_below(4) ? rnd_below(200) : rnd_below(1600);
	s.payload_word = rnd();
	s.ttl = rnd_below(8) ? 64 : rnd_below(4);
	if (s.proto == IPPROTO_TCP && rnd_below(4) == 0)
		s.tcp_flags = rnd() & 0xff;
	if (rnd_below(10) == 0)
		s.pad_to = 60 + rnd_below(40);
	if (rnd_below(20) == 0)
		s.frag = rnd() & (s.family == 4 ? 0xffff : 0xfff9);
	if (rnd_below(20) == 0)
		s.ip_opt_words = 1 + rnd_below(3);
	len = pkt_build(&s, buf);

	for (int m = 0; m < mutations; m++) {
		size_t span = len < 94 ? len : 94; /* the headers */

		switch (rnd_below(7)) {
		case 0: /* a bit flip in the headers */
			buf[rnd_below(span)] ^= 1 << rnd_below(8);
			break;
		case 1: /* a random byte in the headers */
			buf[rnd_below(span)] = rnd();
			break;
		case 2: /* truncation, never below the Ethernet header */
			len = 14 + rnd_below(len - 13);
			break;
		case 3: /* trailing bytes beyond the L3 length */
			for (int n = rnd_below(64); n > 0 && len < 2000; n--)
				buf[len++] = rnd();
			break;
		case 4: /* another ingress interface */
			*ingress = *ingress == fx.lan_ifindex ? fx.wan_ifindex : fx.lan_ifindex;
			break;
		case 5: /* the L3 length field */
			if (s.family == 4)
				buf[16 + rnd_below(2)] = rnd();
			else
				buf[18 + rnd_below(2)] = rnd();
			break;
		case 6: { /* a VLAN tag or PPPoE session no interface has */
			static const uint16_t l2_types[] = {0x8100, 0x88a8, 0x8864};
			uint16_t type = l2_types[rnd_below(3)];

			buf[12] = type >> 8;
			buf[13] = type & 0xff;
			break;
		}
		}
	}
	/* Mostly keep the IPv4 header checksum right, so mutations reach the layers beyond. */
	if (mutations && rnd_below(4))
		refresh_ipv4_csum(buf, len);
	return len;
}

static unsigned long undeliverable;

static void check_frame(unsigned long iter, const uint8_t *in, size_t in_len, int ingress,
			int *failures)
{
	static uint8_t out[PKT_MAX];
	static struct ref_result r;
	uint64_t before[FP_STAT_MAX], after[FP_STAT_MAX];
	bool ok = true;
	uint32_t out_len;
	int verdict;

	ref_model(in, in_len, ingress, &r);
	fx_read_stats(before);
	verdict = fx_run(in, in_len, ingress, out, &out_len);
	fx_read_stats(after);
	if (verdict == FX_UNDELIVERABLE) { /* over the wire only: see fixture.h */
		undeliverable++;
		return;
	}

#define FUZZ_CHECK(cond, fmt, ...)                                                                 \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			ok = false;                                                                \
			if (*failures < MAX_REPORTED_FAILURES)                                     \
				CHECK(cond, "iteration %lu: " fmt, iter, ##__VA_ARGS__);           \
		}                                                                                  \
	} while (0)

	FUZZ_CHECK(verdict == XDP_PASS || verdict == XDP_REDIRECT, "verdict %d", verdict);
	FUZZ_CHECK(verdict == r.verdict, "verdict %d, model says %d (%s)", verdict, r.verdict,
		   fp_stat_names[r.stat]);
	for (int i = 0; i < FP_STAT_MAX; i++) {
		uint64_t want = i == (int)r.stat;

		if (i == FP_STAT_FORWARDED_BYTES && r.verdict == XDP_REDIRECT)
			want = r.l3_len;
		FUZZ_CHECK(after[i] - before[i] == want, "counter %s moved by %llu, want %llu",
			   fp_stat_names[i], (unsigned long long)(after[i] - before[i]),
			   (unsigned long long)want);
	}
	if (r.verdict == XDP_PASS || verdict != r.verdict) {
		FUZZ_CHECK(out_len == in_len && !memcmp(out, in, in_len), "passed frame modified");
	} else {
		size_t c4 = r.l4csum_off;
		bool in_l4_ok = pkt_l4_csum_ok(in, in_len);
		bool udp_zero = get16(in + 12) == 0x0800 && in[14 + 9] == IPPROTO_UDP &&
				get16(in + c4) == 0;

		FUZZ_CHECK(out_len == in_len, "length %u, want %zu", out_len, in_len);
		/* Every byte but the checksum fields as the model rewrote it. */
		for (size_t i = 0; i < in_len && out_len == in_len; i++) {
			bool csum_byte = i == c4 || i == c4 + 1 ||
					 (get16(in + 12) == 0x0800 && (i == 24 || i == 25));

			if (!csum_byte && out[i] != r.out[i]) {
				FUZZ_CHECK(false, "byte %zu is %02x, model says %02x", i, out[i],
					   r.out[i]);
				break;
			}
		}
		if (get16(in + 12) == 0x0800)
			FUZZ_CHECK(pkt_ipv4_csum_ok(out, out_len), "bad IPv4 header checksum out");
		FUZZ_CHECK(pkt_l4_csum_ok(out, out_len) == in_l4_ok,
			   "L4 checksum validity changed (in %s)", in_l4_ok ? "valid" : "invalid");
		if (udp_zero)
			FUZZ_CHECK(get16(out + c4) == 0, "zero UDP checksum rewritten");
	}
	if (!ok) {
		if (*failures < MAX_REPORTED_FAILURES) {
			printf("  input frame (%zu bytes), ingress %d:\n", in_len, ingress);
			tl_hexdump_diff(in, in_len, (const uint8_t *)"", 0);
		}
		(*failures)++;
	}
	/* FIN/RST marked the flow closing: put the flows back for the next frames. */
	if (r.closes)
		install_flows();
}

void test_differential(unsigned long iterations, unsigned int seed)
{
	static uint8_t frame[PKT_MAX];
	unsigned long outcome[FP_STAT_MAX] = {0};
	char name[160];
	int failures = 0;

	snprintf(name, sizeof(name), "randomized: %lu mutated frames, seed %u (FP_FUZZ_SEED)",
		 iterations, seed);
	tl_case_begin(name);
	undeliverable = 0;
	rng_state = 0x9e3779b97f4a7c15ull ^ seed;
	fx_reset();
	setup_templates();
	install_flows();

	for (unsigned long i = 0; i < iterations; i++) {
		static struct ref_result r;
		int ingress;
		size_t len = make_frame(frame, &ingress);

		ref_model(frame, len, ingress, &r);
		outcome[r.stat]++;
		check_frame(i, frame, len, ingress, &failures);
	}
	CHECK(failures == 0, "%d of %lu frames failed", failures, iterations);
	if (undeliverable) /* over the wire only */
		printf("  %lu frames could not go over the wire (see fixture.h)\n", undeliverable);
	CHECK(undeliverable <= iterations / 10, "%lu frames could not go over the wire",
	      undeliverable);

	/* The run must have exercised the interesting outcomes, or it proves nothing. */
	printf("  outcomes:");
	for (int i = 0; i < FP_STAT_MAX; i++)
		if (outcome[i])
			printf(" %s=%lu", fp_stat_names[i], outcome[i]);
	printf("\n");
	if (iterations >= 5000) {
		static const enum fp_stat must_see[] = {
			FP_STAT_FORWARDED, FP_STAT_PASS_MALFORMED,  FP_STAT_PASS_NO_FLOW,
			FP_STAT_PASS_TTL,  FP_STAT_PASS_TCP_FLAGS,  FP_STAT_PASS_FRAGMENT,
			FP_STAT_PASS_MTU,  FP_STAT_PASS_IP_OPTIONS, FP_STAT_PASS_NOT_IP,
		};

		CHECK(outcome[FP_STAT_FORWARDED] >= iterations / 10, "only %lu frames forwarded",
		      outcome[FP_STAT_FORWARDED]);
		for (size_t i = 0; i < sizeof(must_see) / sizeof(must_see[0]); i++)
			CHECK(outcome[must_see[i]] > 0, "no frame reached %s",
			      fp_stat_names[must_see[i]]);
	}
	tl_case_end();
}
