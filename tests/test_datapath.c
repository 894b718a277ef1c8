// SPDX-License-Identifier: GPL-2.0-only
/*
 * Table-driven datapath tests: for each case a crafted frame in, a flow map state, and the
 * exact verdict, output bytes and counter expected out. Expected frames are built from
 * scratch with fully computed checksums, never derived from the program's output.
 *
 * Both entry points run the table: XDP all of it, tc the cases without a tag or PPPoE
 * header coming in (at the tc hook a tag is in the skb, not the frame, and PPPoE in
 * passes), with the same expectations; tc_cases add what only the tc hook does (GRO
 * aggregates).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_ether.h>
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "fixture.h"
#include "instance.h"
#include "kernel.h"
#include "packet.h"
#include "testlib.h"
#include "tests.h"
#include "wire.h"

enum iface { LAN = 1, WAN, PORT };

#define SNAT_WAN .flags = FP_FLOW_SNAT, .nat_saddr = "198.19.2.1", .nat_sport = 61000

struct flow_spec {
	bool none;	    /* install no flow */
	enum iface ingress; /* key's ingress, if not the packet's */
	uint16_t flags;
	bool closing; /* the datapath saw its FIN or RST */
	const char *nat_saddr, *nat_daddr;
	uint16_t nat_sport, nat_dport;
};

enum cfg_state { CFG_NO_LEASE, CFG_FRESH, CFG_STALE, CFG_UNCONFIGURED };

/* What lies below LAN or WAN (fp_ingress, fp_egress, fp_fdb), as the daemon would describe
 * it; PORT is the Ethernet port underneath. */
enum topo {
	TOPO_PLAIN,
	TOPO_WAN_VLAN,	     /* WAN is VLAN 7 on PORT */
	TOPO_WAN_PPPOE,	     /* WAN is PPPoE session 0x1234 on PORT, peer MAC_PEER */
	TOPO_WAN_VLAN_PPPOE, /* the session on VLAN 7 */
	TOPO_LAN_BRIDGE,     /* LAN is a bridge, PORT its port; the LAN host learnt on PORT */
	TOPO_LAN_BRIDGE_NO_FDB,
	TOPO_WAN_NO_XMIT,	 /* WAN cannot take redirected frames now */
	TOPO_LAN_BRIDGE_NO_XMIT, /* the bridge port the host was learnt on cannot */
};

#define FX_VLAN	     7
#define FX_SID	     0x1234
#define FX_PPPOE_MTU (FX_WAN_MTU - 8)

struct dp_case {
	const char *name;
	enum iface ingress;
	struct pkt_spec in;
	struct flow_spec flow;
	enum cfg_state cfg;
	enum topo topo;
	void (*mangle)(uint8_t *buf, size_t *len); /* applied to the built input frame */
	bool wan_detached;			   /* WAN removed from the tx ports */
	uint32_t ingress_port;			   /* FP_PORT_* of the ingress (fp_ports) */
	int verdict;
	enum fp_stat stat;
	enum iface egress;		 /* REDIRECT: expected egress */
	struct pkt_spec out;		 /* REDIRECT: the expected frame */
	bool out_udp_csum_folds_to_zero; /* choose the payload so it does */
	uint16_t gso_size;		 /* tc: the input is a GRO aggregate of such segments */
};

enum hook { HOOK_XDP, HOOK_TC };

/* PPPoE length (after a 14-byte Ethernet header) one short of the IP packet it carries. */
static void pppoe_len_short(uint8_t *buf, size_t *len)
{
	(void)len;
	buf[19]--;
}

/* PPPoE length past the end of the frame. */
static void pppoe_len_past_end(uint8_t *buf, size_t *len)
{
	(void)len;
	buf[19] += 2;
}

/* Mangles for malformed input; each leaves every other field valid. */
static void ipv4_fix_csum(uint8_t *buf)
{
	buf[24] = buf[25] = 0;
	uint16_t c = ~csum_fold32(csum_partial(buf + 14, (buf[14] & 15) * 4, 0));
	buf[24] = c >> 8;
	buf[25] = c & 0xff;
}
/* BPF_PROG_TEST_RUN refuses XDP input shorter than an Ethernet header: cut right after it. */
static void cut_after_eth(uint8_t *buf, size_t *len)
{
	(void)buf;
	*len = 14;
}
static void cut_ipv4(uint8_t *buf, size_t *len)
{
	(void)buf;
	*len = 14 + 19;
}
static void cut_ipv6(uint8_t *buf, size_t *len)
{
	(void)buf;
	*len = 14 + 39;
}
static void cut_last_byte(uint8_t *buf, size_t *len)
{
	(void)buf;
	(*len)--;
}
static void ipv4_short_tcp(uint8_t *buf, size_t *len)
{
	/* Total length leaves 10 bytes for a TCP header, and the frame ends there too. */
	buf[16] = 0;
	buf[17] = 30;
	ipv4_fix_csum(buf);
	*len = 14 + 30;
}
static void ipv4_short_udp(uint8_t *buf, size_t *len)
{
	buf[16] = 0;
	buf[17] = 26;
	ipv4_fix_csum(buf);
	*len = 14 + 26;
}
static void ipv6_short_tcp(uint8_t *buf, size_t *len)
{
	buf[18] = 0;
	buf[19] = 12;
	*len = 14 + 40 + 12;
}
static void udp_len_too_big(uint8_t *buf, size_t *len)
{
	(void)len;
	buf[14 + 20 + 5] += 1; /* UDP length one past the IP payload */
}
static void udp_len_too_small(uint8_t *buf, size_t *len)
{
	(void)len;
	buf[14 + 20 + 4] = 0;
	buf[14 + 20 + 5] = 7;
}
static void tcp_doff_4(uint8_t *buf, size_t *len)
{
	(void)len;
	buf[14 + 20 + 12] = 4 << 4;
}
static void tcp_doff_past_end(uint8_t *buf, size_t *len)
{
	(void)len;
	buf[14 + 20 + 12] = 15 << 4; /* 60-byte header in a 20-byte segment */
}
static void ipv4_bad_csum(uint8_t *buf, size_t *len)
{
	(void)len;
	buf[25] ^= 0x40;
}
static void ipv4_ihl_4(uint8_t *buf, size_t *len)
{
	(void)len;
	buf[14] = 0x44;
	ipv4_fix_csum(buf);
}
static void ipv4_version_6(uint8_t *buf, size_t *len)
{
	(void)len;
	buf[14] = 0x65;
	ipv4_fix_csum(buf);
}
static void ipv4_tot_len_short(uint8_t *buf, size_t *len)
{
	(void)len;
	buf[16] = 0;
	buf[17] = 19;
	ipv4_fix_csum(buf);
}
/* The checksum a CHECKSUM_PARTIAL skb carries: the pseudo-header's sum, the rest to come. */
static void l4_csum_partial(uint8_t *buf, size_t *len)
{
	if (!pkt_l4_csum_seed(buf, *len))
		DIE("l4_csum_partial: no TCP or UDP");
}
static void ipv6_udp_zero_csum(uint8_t *buf, size_t *len)
{
	(void)len;
	buf[14 + 40 + 6] = buf[14 + 40 + 7] = 0;
}
static void ipv6_jumbo(uint8_t *buf, size_t *len)
{
	(void)len;
	buf[18] = buf[19] = 0;
}

/* clang-format off */
static const struct dp_case cases[] = {
	/* Forwarded: NAT in every form, both families. */
	{ "ipv4 tcp snat lan->wan", LAN, { FROM_LAN, CLI4, .proto = IPPROTO_TCP, .payload_len = 100 },
	  { SNAT_WAN }, .verdict = XDP_REDIRECT, .stat = FP_STAT_FORWARDED, .egress = WAN,
	  .out = { TO_WAN, CLI4_SNAT_OUT, .proto = IPPROTO_TCP, .ttl = 63, .payload_len = 100 } },
	{ "ipv4 udp snat lan->wan", LAN, { FROM_LAN, CLI4, .proto = IPPROTO_UDP, .payload_len = 33 },
	  { SNAT_WAN }, .verdict = XDP_REDIRECT, .stat = FP_STAT_FORWARDED, .egress = WAN,
	  .out = { TO_WAN, CLI4_SNAT_OUT, .proto = IPPROTO_UDP, .ttl = 63, .payload_len = 33 } },
	{ "ipv4 tcp reply dnat wan->lan", WAN,
	  { FROM_WAN, .family = 4, .saddr = "198.19.2.2", .daddr = "198.19.2.1", .sport = 443,
	    .dport = 61000, .proto = IPPROTO_TCP, .payload_len = 1000 },
	  { .flags = FP_FLOW_DNAT, .nat_daddr = "198.18.1.2", .nat_dport = 40000 },
	  .verdict = XDP_REDIRECT, .stat = FP_STAT_FORWARDED, .egress = LAN,
	  .out = { TO_LAN, .family = 4, .saddr = "198.19.2.2", .daddr = "198.18.1.2", .sport = 443,
		   .dport = 40000, .proto = IPPROTO_TCP, .ttl = 63, .payload_len = 1000 } },
	{ "ipv4 udp dnat port forward wan->lan", WAN,
	  { FROM_WAN, .family = 4, .saddr = "198.19.2.2", .daddr = "198.19.2.1", .sport = 5555,
	    .dport = 8080, .proto = IPPROTO_UDP, .payload_len = 64 },
	  { .flags = FP_FLOW_DNAT, .nat_daddr = "198.18.1.2", .nat_dport = 80 },
	  .verdict = XDP_REDIRECT, .stat = FP_STAT_FORWARDED, .egress = LAN,
	  .out = { TO_LAN, .family = 4, .saddr = "198.19.2.2", .daddr = "198.18.1.2", .sport = 5555,
		   .dport = 80, .proto = IPPROTO_UDP, .ttl = 63, .payload_len = 64 } },
	{ "ipv4 tcp snat and dnat together", LAN,
	  { FROM_LAN, .family = 4, .saddr = "198.18.1.2", .daddr = "198.18.1.1", .sport = 40000,
	    .dport = 8080, .proto = IPPROTO_TCP, .payload_len = 10 },
	  { .flags = FP_FLOW_SNAT | FP_FLOW_DNAT, .nat_saddr = "198.19.2.1", .nat_sport = 62000,
	    .nat_daddr = "198.19.2.2", .nat_dport = 80 },
	  .verdict = XDP_REDIRECT, .stat = FP_STAT_FORWARDED, .egress = WAN,
	  .out = { TO_WAN, .family = 4, .saddr = "198.19.2.1", .daddr = "198.19.2.2", .sport = 62000,
		   .dport = 80, .proto = IPPROTO_TCP, .ttl = 63, .payload_len = 10 } },
	{ "ipv4 tcp routed without nat", LAN, { FROM_LAN, CLI4, .proto = IPPROTO_TCP, .tos = 0x2e },
	  { 0 }, .verdict = XDP_REDIRECT, .stat = FP_STAT_FORWARDED, .egress = WAN,
	  .out = { TO_WAN, CLI4, .proto = IPPROTO_TCP, .ttl = 63, .tos = 0x2e } },
	{ "ipv6 tcp forward", LAN, { FROM_LAN, CLI6, .proto = IPPROTO_TCP, .payload_len = 200 },
	  { 0 }, .verdict = XDP_REDIRECT, .stat = FP_STAT_FORWARDED, .egress = WAN,
	  .out = { TO_WAN, CLI6, .proto = IPPROTO_TCP, .ttl = 63, .payload_len = 200 } },
	{ "ipv6 udp forward wan->lan", WAN,
	  { FROM_WAN, .family = 6, .saddr = "2001:2:0:2::2", .daddr = "2001:2:0:1::2", .sport = 53,
	    .dport = 40000, .proto = IPPROTO_UDP, .payload_len = 77 },
	  { 0 }, .verdict = XDP_REDIRECT, .stat = FP_STAT_FORWARDED, .egress = LAN,
	  .out = { TO_LAN, .family = 6, .saddr = "2001:2:0:2::2", .daddr = "2001:2:0:1::2",
		   .sport = 53, .dport = 40000, .proto = IPPROTO_UDP, .ttl = 63, .payload_len = 77 } },
	{ "ipv6 udp snat (nat66)", LAN, { FROM_LAN, CLI6, .proto = IPPROTO_UDP, .payload_len = 20 },
	  { .flags = FP_FLOW_SNAT, .nat_saddr = "2001:2:0:2::1", .nat_sport = 61000 },
	  .verdict = XDP_REDIRECT, .stat = FP_STAT_FORWARDED, .egress = WAN,
	  .out = { TO_WAN, .family = 6, .saddr = "2001:2:0:2::1", .daddr = "2001:2:0:2::2",
		   .sport = 61000, .dport = 443, .proto = IPPROTO_UDP, .ttl = 63,
		   .payload_len = 20 } },
	{ "ipv4 udp zero checksum stays zero", LAN,
	  { FROM_LAN, CLI4, .proto = IPPROTO_UDP, .payload_len = 40, .udp_no_csum = true },
	  { SNAT_WAN }, .verdict = XDP_REDIRECT, .stat = FP_STAT_FORWARDED, .egress = WAN,
	  .out = { TO_WAN, CLI4_SNAT_OUT, .proto = IPPROTO_UDP, .ttl = 63, .payload_len = 40,
		   .udp_no_csum = true } },
	{ "ipv4 udp checksum folding to zero is sent as 0xffff", LAN,
	  { FROM_LAN, CLI4, .proto = IPPROTO_UDP, .payload_len = 16 },
	  { SNAT_WAN }, .verdict = XDP_REDIRECT, .stat = FP_STAT_FORWARDED, .egress = WAN,
	  .out = { TO_WAN, CLI4_SNAT_OUT, .proto = IPPROTO_UDP, .ttl = 63, .payload_len = 16 },
	  .out_udp_csum_folds_to_zero = true },
	{ "ipv4 ttl 2 is forwarded with ttl 1", LAN,
	  { FROM_LAN, CLI4, .proto = IPPROTO_TCP, .ttl = 2 }, { SNAT_WAN },
	  .verdict = XDP_REDIRECT, .stat = FP_STAT_FORWARDED, .egress = WAN,
	  .out = { TO_WAN, CLI4_SNAT_OUT, .proto = IPPROTO_TCP, .ttl = 1 } },
	{ "ethernet padding is kept", LAN,
	  { FROM_LAN, CLI4, .proto = IPPROTO_TCP, .pad_to = 64 }, { SNAT_WAN },
	  .verdict = XDP_REDIRECT, .stat = FP_STAT_FORWARDED, .egress = WAN,
	  .out = { TO_WAN, CLI4_SNAT_OUT, .proto = IPPROTO_TCP, .ttl = 63, .pad_to = 64 } },
	{ "packet exactly at egress mtu is forwarded", LAN,
	  { FROM_LAN, CLI4, .proto = IPPROTO_UDP, .payload_len = FX_WAN_MTU - 28 }, { SNAT_WAN },
	  .verdict = XDP_REDIRECT, .stat = FP_STAT_FORWARDED, .egress = WAN,
	  .out = { TO_WAN, CLI4_SNAT_OUT, .proto = IPPROTO_UDP, .ttl = 63,
		   .payload_len = FX_WAN_MTU - 28 } },
	{ "heartbeat within the lease forwards", LAN, { FROM_LAN, CLI4, .proto = IPPROTO_TCP },
	  { SNAT_WAN }, .cfg = CFG_FRESH, .verdict = XDP_REDIRECT, .stat = FP_STAT_FORWARDED,
	  .egress = WAN, .out = { TO_WAN, CLI4_SNAT_OUT, .proto = IPPROTO_TCP, .ttl = 63 } },

	/* Passed to the kernel, unmodified, each for its reason. */
	{ "ipv4 ttl 1 passes", LAN, { FROM_LAN, CLI4, .proto = IPPROTO_TCP, .ttl = 1 }, { SNAT_WAN },
	  .verdict = XDP_PASS, .stat = FP_STAT_PASS_TTL },
	{ "ipv6 hop limit 1 passes", LAN, { FROM_LAN, CLI6, .proto = IPPROTO_UDP, .ttl = 1 }, { 0 },
	  .verdict = XDP_PASS, .stat = FP_STAT_PASS_TTL },
	{ "ipv4 options pass", LAN, { FROM_LAN, CLI4, .proto = IPPROTO_TCP, .ip_opt_words = 1 },
	  { SNAT_WAN }, .verdict = XDP_PASS, .stat = FP_STAT_PASS_IP_OPTIONS },
	{ "ipv6 extension header passes", LAN,
	  { FROM_LAN, CLI6, .proto = IPPROTO_TCP, .ip_opt_words = 1 }, { 0 },
	  .verdict = XDP_PASS, .stat = FP_STAT_PASS_IP_OPTIONS },
	{ "ipv6 esp counts as an extension header", LAN,
	  { FROM_LAN, CLI6, .proto = IPPROTO_ESP, .payload_len = 16 }, { 0 },
	  .verdict = XDP_PASS, .stat = FP_STAT_PASS_IP_OPTIONS },
	{ "ipv4 first fragment passes", LAN,
	  { FROM_LAN, CLI4, .proto = IPPROTO_UDP, .payload_len = 64, .frag = 0x2000 }, { SNAT_WAN },
	  .verdict = XDP_PASS, .stat = FP_STAT_PASS_FRAGMENT },
	{ "ipv4 later fragment passes", LAN,
	  { FROM_LAN, CLI4, .proto = IPPROTO_UDP, .payload_len = 64, .frag = 0x0010 }, { SNAT_WAN },
	  .verdict = XDP_PASS, .stat = FP_STAT_PASS_FRAGMENT },
	{ "ipv4 dont-fragment bit alone is no fragment", LAN,
	  { FROM_LAN, CLI4, .proto = IPPROTO_TCP, .frag = 0x4000 }, { SNAT_WAN },
	  .verdict = XDP_REDIRECT, .stat = FP_STAT_FORWARDED, .egress = WAN,
	  .out = { TO_WAN, CLI4_SNAT_OUT, .proto = IPPROTO_TCP, .ttl = 63, .frag = 0x4000 } },
	{ "ipv6 first fragment passes", LAN,
	  { FROM_LAN, CLI6, .proto = IPPROTO_UDP, .payload_len = 64, .frag = 0x0001 }, { 0 },
	  .verdict = XDP_PASS, .stat = FP_STAT_PASS_FRAGMENT },
	{ "ipv6 later fragment passes", LAN,
	  { FROM_LAN, CLI6, .proto = IPPROTO_UDP, .payload_len = 64, .frag = 0x0008 }, { 0 },
	  .verdict = XDP_PASS, .stat = FP_STAT_PASS_FRAGMENT },
	{ "tcp syn passes", LAN, { FROM_LAN, CLI4, .proto = IPPROTO_TCP, .tcp_flags = 0x02 },
	  { SNAT_WAN }, .verdict = XDP_PASS, .stat = FP_STAT_PASS_TCP_FLAGS },
	{ "tcp fin passes (and closes the flow)", LAN,
	  { FROM_LAN, CLI4, .proto = IPPROTO_TCP, .tcp_flags = 0x11 }, { SNAT_WAN },
	  .verdict = XDP_PASS, .stat = FP_STAT_PASS_TCP_FLAGS },
	{ "tcp rst passes (and closes the flow)", LAN,
	  { FROM_LAN, CLI4, .proto = IPPROTO_TCP, .tcp_flags = 0x04 }, { SNAT_WAN },
	  .verdict = XDP_PASS, .stat = FP_STAT_PASS_TCP_FLAGS },
	{ "tcp without ack passes", LAN, { FROM_LAN, CLI4, .proto = IPPROTO_TCP, .tcp_flags = 0x08 },
	  { SNAT_WAN }, .verdict = XDP_PASS, .stat = FP_STAT_PASS_TCP_FLAGS },
	{ "closing flow passes", LAN, { FROM_LAN, CLI4, .proto = IPPROTO_TCP },
	  { .flags = FP_FLOW_SNAT, .closing = true, .nat_saddr = "198.19.2.1", .nat_sport = 61000 },
	  .verdict = XDP_PASS, .stat = FP_STAT_PASS_CLOSING },
	{ "non-ip (arp ethertype) passes", LAN,
	  { FROM_LAN, CLI4, .proto = IPPROTO_UDP, .ethertype = 0x0806 }, { SNAT_WAN },
	  .verdict = XDP_PASS, .stat = FP_STAT_PASS_NOT_IP },
	{ "vlan-tagged frame passes", LAN, { FROM_LAN, CLI4, .proto = IPPROTO_UDP, .vlan_id = 10 },
	  { SNAT_WAN }, .verdict = XDP_PASS, .stat = FP_STAT_PASS_VLAN },
	{ "broadcast destination passes", LAN,
	  { .dmac = MAC_BCAST, .smac = MAC_LAN_HOST, CLI4, .proto = IPPROTO_UDP }, { SNAT_WAN },
	  .verdict = XDP_PASS, .stat = FP_STAT_PASS_NOT_UNICAST },
	{ "icmp passes", LAN, { FROM_LAN, CLI4, .proto = IPPROTO_ICMP, .payload_len = 8 },
	  { SNAT_WAN }, .verdict = XDP_PASS, .stat = FP_STAT_PASS_PROTO },
	{ "packet over egress mtu passes", LAN,
	  { FROM_LAN, CLI4, .proto = IPPROTO_UDP, .payload_len = FX_WAN_MTU - 27 }, { SNAT_WAN },
	  .verdict = XDP_PASS, .stat = FP_STAT_PASS_MTU },
	/* A redirect drops a frame longer than its egress takes, whatever its IP length says:
	 * found sending frames over veth (tests/wire.c), where such a frame vanished. */
	{ "packet within the egress mtu, padded past it, passes", LAN,
	  { FROM_LAN, CLI4, .proto = IPPROTO_UDP, .payload_len = 100,
	    .pad_to = ETH_HLEN + FX_WAN_MTU + 1 },
	  { SNAT_WAN }, .verdict = XDP_PASS, .stat = FP_STAT_PASS_MTU },
	{ "packet padded to exactly the egress mtu is forwarded", LAN,
	  { FROM_LAN, CLI4, .proto = IPPROTO_UDP, .payload_len = 100,
	    .pad_to = ETH_HLEN + FX_WAN_MTU },
	  { SNAT_WAN }, .verdict = XDP_REDIRECT, .stat = FP_STAT_FORWARDED, .egress = WAN,
	  .out = { TO_WAN, CLI4_SNAT_OUT, .proto = IPPROTO_UDP, .ttl = 63, .payload_len = 100,
		   .pad_to = ETH_HLEN + FX_WAN_MTU } },
	{ "stale heartbeat passes", LAN, { FROM_LAN, CLI4, .proto = IPPROTO_TCP }, { SNAT_WAN },
	  .cfg = CFG_STALE, .verdict = XDP_PASS, .stat = FP_STAT_PASS_HEARTBEAT },
	{ "unconfigured program passes", LAN, { FROM_LAN, CLI4, .proto = IPPROTO_TCP }, { SNAT_WAN },
	  .cfg = CFG_UNCONFIGURED, .verdict = XDP_PASS, .stat = FP_STAT_PASS_HEARTBEAT },
	{ "no flow passes", LAN, { FROM_LAN, CLI4, .proto = IPPROTO_TCP }, { .none = true },
	  .verdict = XDP_PASS, .stat = FP_STAT_PASS_NO_FLOW },
	{ "flow of another ingress interface does not match", LAN,
	  { FROM_LAN, CLI4, .proto = IPPROTO_TCP }, { SNAT_WAN, .ingress = WAN },
	  .verdict = XDP_PASS, .stat = FP_STAT_PASS_NO_FLOW },
	{ "egress not attached passes", LAN, { FROM_LAN, CLI4, .proto = IPPROTO_TCP }, { SNAT_WAN },
	  .wan_detached = true, .verdict = XDP_PASS, .stat = FP_STAT_PASS_EGRESS },
	{ "next hop without neighbour passes", LAN,
	  { FROM_LAN, .family = 4, .saddr = "198.18.1.2", .daddr = "198.19.2.3", .sport = 1,
	    .dport = 2, .proto = IPPROTO_UDP },
	  { 0 }, .verdict = XDP_PASS, .stat = FP_STAT_PASS_NO_NEIGH },
	{ "next hop without route passes", LAN,
	  { FROM_LAN, .family = 4, .saddr = "198.18.1.2", .daddr = "198.19.99.1", .sport = 1,
	    .dport = 2, .proto = IPPROTO_UDP },
	  { 0 }, .verdict = XDP_PASS, .stat = FP_STAT_PASS_NO_ROUTE },

	/* Malformed at every layer: passed unmodified, never forwarded. */
	{ "ethernet header without ipv4 header", LAN, { FROM_LAN, CLI4, .proto = IPPROTO_TCP },
	  { SNAT_WAN }, .mangle = cut_after_eth, .verdict = XDP_PASS, .stat = FP_STAT_PASS_MALFORMED },
	{ "truncated ipv4 header", LAN, { FROM_LAN, CLI4, .proto = IPPROTO_TCP }, { SNAT_WAN },
	  .mangle = cut_ipv4, .verdict = XDP_PASS, .stat = FP_STAT_PASS_MALFORMED },
	{ "ipv4 total length beyond the frame", LAN, { FROM_LAN, CLI4, .proto = IPPROTO_TCP },
	  { SNAT_WAN }, .mangle = cut_last_byte, .verdict = XDP_PASS,
	  .stat = FP_STAT_PASS_MALFORMED },
	{ "ipv4 total length below the header", LAN, { FROM_LAN, CLI4, .proto = IPPROTO_TCP },
	  { SNAT_WAN }, .mangle = ipv4_tot_len_short, .verdict = XDP_PASS,
	  .stat = FP_STAT_PASS_MALFORMED },
	{ "ipv4 header length below 5", LAN, { FROM_LAN, CLI4, .proto = IPPROTO_TCP }, { SNAT_WAN },
	  .mangle = ipv4_ihl_4, .verdict = XDP_PASS, .stat = FP_STAT_PASS_MALFORMED },
	{ "ipv4 ethertype with version 6", LAN, { FROM_LAN, CLI4, .proto = IPPROTO_TCP },
	  { SNAT_WAN }, .mangle = ipv4_version_6, .verdict = XDP_PASS,
	  .stat = FP_STAT_PASS_MALFORMED },
	{ "ipv4 bad header checksum", LAN, { FROM_LAN, CLI4, .proto = IPPROTO_TCP }, { SNAT_WAN },
	  .mangle = ipv4_bad_csum, .verdict = XDP_PASS, .stat = FP_STAT_PASS_MALFORMED },
	{ "truncated tcp header", LAN, { FROM_LAN, CLI4, .proto = IPPROTO_TCP }, { SNAT_WAN },
	  .mangle = ipv4_short_tcp, .verdict = XDP_PASS, .stat = FP_STAT_PASS_MALFORMED },
	{ "truncated udp header", LAN, { FROM_LAN, CLI4, .proto = IPPROTO_UDP }, { SNAT_WAN },
	  .mangle = ipv4_short_udp, .verdict = XDP_PASS, .stat = FP_STAT_PASS_MALFORMED },
	{ "tcp data offset below 5", LAN, { FROM_LAN, CLI4, .proto = IPPROTO_TCP }, { SNAT_WAN },
	  .mangle = tcp_doff_4, .verdict = XDP_PASS, .stat = FP_STAT_PASS_MALFORMED },
	{ "tcp data offset past the segment", LAN, { FROM_LAN, CLI4, .proto = IPPROTO_TCP },
	  { SNAT_WAN }, .mangle = tcp_doff_past_end, .verdict = XDP_PASS,
	  .stat = FP_STAT_PASS_MALFORMED },
	{ "udp length beyond the ip payload", LAN,
	  { FROM_LAN, CLI4, .proto = IPPROTO_UDP, .payload_len = 10 }, { SNAT_WAN },
	  .mangle = udp_len_too_big, .verdict = XDP_PASS, .stat = FP_STAT_PASS_MALFORMED },
	{ "udp length below its header", LAN,
	  { FROM_LAN, CLI4, .proto = IPPROTO_UDP, .payload_len = 10 }, { SNAT_WAN },
	  .mangle = udp_len_too_small, .verdict = XDP_PASS, .stat = FP_STAT_PASS_MALFORMED },
	{ "truncated ipv6 header", LAN, { FROM_LAN, CLI6, .proto = IPPROTO_TCP }, { 0 },
	  .mangle = cut_ipv6, .verdict = XDP_PASS, .stat = FP_STAT_PASS_MALFORMED },
	{ "ipv6 payload beyond the frame", LAN, { FROM_LAN, CLI6, .proto = IPPROTO_TCP }, { 0 },
	  .mangle = cut_last_byte, .verdict = XDP_PASS, .stat = FP_STAT_PASS_MALFORMED },
	{ "ipv6 truncated tcp header", LAN, { FROM_LAN, CLI6, .proto = IPPROTO_TCP }, { 0 },
	  .mangle = ipv6_short_tcp, .verdict = XDP_PASS, .stat = FP_STAT_PASS_MALFORMED },
	{ "ipv6 jumbo payload length", LAN, { FROM_LAN, CLI6, .proto = IPPROTO_TCP }, { 0 },
	  .mangle = ipv6_jumbo, .verdict = XDP_PASS, .stat = FP_STAT_PASS_MALFORMED },
	{ "ipv6 udp zero checksum passes", LAN, { FROM_LAN, CLI6, .proto = IPPROTO_UDP }, { 0 },
	  .mangle = ipv6_udp_zero_csum, .verdict = XDP_PASS, .stat = FP_STAT_PASS_MALFORMED },

	/* Below the routed interfaces: a tag or a PPPoE session pushed and stripped, bridge
	 * ports, and the MTU left once the headers are in. */
	{ "vlan: lan->wan pushes the wan's tag", LAN,
	  { FROM_LAN, CLI4, .proto = IPPROTO_TCP, .payload_len = 100 }, { SNAT_WAN },
	  .topo = TOPO_WAN_VLAN, .verdict = XDP_REDIRECT, .stat = FP_STAT_FORWARDED, .egress = PORT,
	  .out = { TO_WAN, .vlan_id = FX_VLAN, CLI4_SNAT_OUT, .proto = IPPROTO_TCP, .ttl = 63,
		   .payload_len = 100 } },
	{ "vlan: tagged wan->lan is stripped", PORT,
	  { FROM_WAN, .vlan_id = FX_VLAN, .family = 4, .saddr = "198.19.2.2", .daddr = "198.19.2.1",
	    .sport = 443, .dport = 61000, .proto = IPPROTO_UDP, .payload_len = 200 },
	  { .ingress = WAN, .flags = FP_FLOW_DNAT, .nat_daddr = "198.18.1.2", .nat_dport = 40000 },
	  .topo = TOPO_WAN_VLAN, .verdict = XDP_REDIRECT, .stat = FP_STAT_FORWARDED, .egress = LAN,
	  .out = { TO_LAN, .family = 4, .saddr = "198.19.2.2", .daddr = "198.18.1.2", .sport = 443,
		   .dport = 40000, .proto = IPPROTO_UDP, .ttl = 63, .payload_len = 200 } },
	{ "vlan: ipv6 lan->wan", LAN, { FROM_LAN, CLI6, .proto = IPPROTO_UDP, .payload_len = 30 },
	  { 0 }, .topo = TOPO_WAN_VLAN, .verdict = XDP_REDIRECT, .stat = FP_STAT_FORWARDED,
	  .egress = PORT,
	  .out = { TO_WAN, .vlan_id = FX_VLAN, CLI6, .proto = IPPROTO_UDP, .ttl = 63,
		   .payload_len = 30 } },
	{ "vlan: a tag fits the port's mtu", LAN,
	  { FROM_LAN, CLI4, .proto = IPPROTO_UDP, .payload_len = FX_WAN_MTU - 28 }, { SNAT_WAN },
	  .topo = TOPO_WAN_VLAN, .verdict = XDP_REDIRECT, .stat = FP_STAT_FORWARDED, .egress = PORT,
	  .out = { TO_WAN, .vlan_id = FX_VLAN, CLI4_SNAT_OUT, .proto = IPPROTO_UDP, .ttl = 63,
		   .payload_len = FX_WAN_MTU - 28 } },
	{ "vlan: unknown vlan id passes", PORT,
	  { FROM_WAN, .vlan_id = 9, .family = 4, .saddr = "198.19.2.2", .daddr = "198.19.2.1",
	    .sport = 443, .dport = 61000, .proto = IPPROTO_UDP },
	  { .ingress = WAN, .flags = FP_FLOW_DNAT, .nat_daddr = "198.18.1.2", .nat_dport = 40000 },
	  .topo = TOPO_WAN_VLAN, .verdict = XDP_PASS, .stat = FP_STAT_PASS_VLAN },
	{ "vlan: frame for another host passes", PORT,
	  { .dmac = MAC_OTHER, .smac = MAC_WAN_HOST, .vlan_id = FX_VLAN, .family = 4,
	    .saddr = "198.19.2.2", .daddr = "198.19.2.1", .sport = 443, .dport = 61000,
	    .proto = IPPROTO_UDP },
	  { .ingress = WAN, .flags = FP_FLOW_DNAT, .nat_daddr = "198.18.1.2", .nat_dport = 40000 },
	  .topo = TOPO_WAN_VLAN, .verdict = XDP_PASS, .stat = FP_STAT_PASS_OTHER_HOST },
	{ "vlan: stacked tags (qinq) pass", PORT,
	  { FROM_WAN, .vlan_id = FX_VLAN, .ethertype = 0x8100, CLI4, .proto = IPPROTO_UDP }, { 0 },
	  .topo = TOPO_WAN_VLAN, .verdict = XDP_PASS, .stat = FP_STAT_PASS_VLAN },
	{ "pppoe: lan->wan pushes the session header", LAN,
	  { FROM_LAN, CLI4, .proto = IPPROTO_TCP, .payload_len = 100 }, { SNAT_WAN },
	  .topo = TOPO_WAN_PPPOE, .verdict = XDP_REDIRECT, .stat = FP_STAT_FORWARDED, .egress = PORT,
	  .out = { .dmac = MAC_PEER, .smac = MAC_PORT, .pppoe_sid = FX_SID, CLI4_SNAT_OUT,
		   .proto = IPPROTO_TCP, .ttl = 63, .payload_len = 100 } },
	{ "pppoe: ipv6 lan->wan (ppp protocol 0x0057)", LAN,
	  { FROM_LAN, CLI6, .proto = IPPROTO_TCP, .payload_len = 10 }, { 0 },
	  .topo = TOPO_WAN_PPPOE, .verdict = XDP_REDIRECT, .stat = FP_STAT_FORWARDED, .egress = PORT,
	  .out = { .dmac = MAC_PEER, .smac = MAC_PORT, .pppoe_sid = FX_SID, CLI6,
		   .proto = IPPROTO_TCP, .ttl = 63, .payload_len = 10 } },
	{ "pppoe: wan->lan strips the session header", PORT,
	  { .dmac = MAC_PORT, .smac = MAC_PEER, .pppoe_sid = FX_SID, .family = 4,
	    .saddr = "198.19.2.2", .daddr = "198.19.2.1", .sport = 443, .dport = 61000,
	    .proto = IPPROTO_TCP, .payload_len = 500 },
	  { .ingress = WAN, .flags = FP_FLOW_DNAT, .nat_daddr = "198.18.1.2", .nat_dport = 40000 },
	  .topo = TOPO_WAN_PPPOE, .verdict = XDP_REDIRECT, .stat = FP_STAT_FORWARDED, .egress = LAN,
	  .out = { TO_LAN, .family = 4, .saddr = "198.19.2.2", .daddr = "198.18.1.2", .sport = 443,
		   .dport = 40000, .proto = IPPROTO_TCP, .ttl = 63, .payload_len = 500 } },
	{ "pppoe: padded short frame is stripped to its length", PORT,
	  { .dmac = MAC_PORT, .smac = MAC_PEER, .pppoe_sid = FX_SID, .family = 4,
	    .saddr = "198.19.2.2", .daddr = "198.19.2.1", .sport = 443, .dport = 61000,
	    .proto = IPPROTO_UDP, .payload_len = 2, .pad_to = 60 },
	  { .ingress = WAN, .flags = FP_FLOW_DNAT, .nat_daddr = "198.18.1.2", .nat_dport = 40000 },
	  .topo = TOPO_WAN_PPPOE, .verdict = XDP_REDIRECT, .stat = FP_STAT_FORWARDED, .egress = LAN,
	  .out = { TO_LAN, .family = 4, .saddr = "198.19.2.2", .daddr = "198.18.1.2", .sport = 443,
		   .dport = 40000, .proto = IPPROTO_UDP, .ttl = 63, .payload_len = 2,
		   .pad_to = 52 } },
	{ "pppoe: packet filling the session mtu is forwarded", LAN,
	  { FROM_LAN, CLI4, .proto = IPPROTO_UDP, .payload_len = FX_PPPOE_MTU - 28 }, { SNAT_WAN },
	  .topo = TOPO_WAN_PPPOE, .verdict = XDP_REDIRECT, .stat = FP_STAT_FORWARDED, .egress = PORT,
	  .out = { .dmac = MAC_PEER, .smac = MAC_PORT, .pppoe_sid = FX_SID, CLI4_SNAT_OUT,
		   .proto = IPPROTO_UDP, .ttl = 63, .payload_len = FX_PPPOE_MTU - 28 } },
	{ "pppoe: one byte over the session mtu passes", LAN,
	  { FROM_LAN, CLI4, .proto = IPPROTO_UDP, .payload_len = FX_PPPOE_MTU - 27 }, { SNAT_WAN },
	  .topo = TOPO_WAN_PPPOE, .verdict = XDP_PASS, .stat = FP_STAT_PASS_MTU },
	{ "pppoe: wrong peer passes", PORT,
	  { .dmac = MAC_PORT, .smac = MAC_WAN_HOST, .pppoe_sid = FX_SID, .family = 4,
	    .saddr = "198.19.2.2", .daddr = "198.19.2.1", .sport = 443, .dport = 61000,
	    .proto = IPPROTO_TCP },
	  { .ingress = WAN, .flags = FP_FLOW_DNAT, .nat_daddr = "198.18.1.2", .nat_dport = 40000 },
	  .topo = TOPO_WAN_PPPOE, .verdict = XDP_PASS, .stat = FP_STAT_PASS_PPPOE },
	{ "pppoe: unknown session passes", PORT,
	  { .dmac = MAC_PORT, .smac = MAC_PEER, .pppoe_sid = FX_SID + 1, .family = 4,
	    .saddr = "198.19.2.2", .daddr = "198.19.2.1", .sport = 443, .dport = 61000,
	    .proto = IPPROTO_TCP },
	  { .ingress = WAN, .flags = FP_FLOW_DNAT, .nat_daddr = "198.18.1.2", .nat_dport = 40000 },
	  .topo = TOPO_WAN_PPPOE, .verdict = XDP_PASS, .stat = FP_STAT_PASS_PPPOE },
	{ "pppoe: lcp passes", PORT,
	  { .dmac = MAC_PORT, .smac = MAC_PEER, .pppoe_sid = FX_SID, .ethertype = 0xc021, CLI4,
	    .proto = IPPROTO_UDP },
	  { 0 }, .topo = TOPO_WAN_PPPOE, .verdict = XDP_PASS, .stat = FP_STAT_PASS_NOT_IP },
	{ "pppoe: length shorter than the ip packet passes", PORT,
	  { .dmac = MAC_PORT, .smac = MAC_PEER, .pppoe_sid = FX_SID, .family = 4,
	    .saddr = "198.19.2.2", .daddr = "198.19.2.1", .sport = 443, .dport = 61000,
	    .proto = IPPROTO_UDP, .payload_len = 20 },
	  { .ingress = WAN, .flags = FP_FLOW_DNAT, .nat_daddr = "198.18.1.2", .nat_dport = 40000 },
	  .topo = TOPO_WAN_PPPOE, .mangle = pppoe_len_short, .verdict = XDP_PASS,
	  .stat = FP_STAT_PASS_MALFORMED },
	{ "pppoe: length past the frame's end passes", PORT,
	  { .dmac = MAC_PORT, .smac = MAC_PEER, .pppoe_sid = FX_SID, .family = 4,
	    .saddr = "198.19.2.2", .daddr = "198.19.2.1", .sport = 443, .dport = 61000,
	    .proto = IPPROTO_UDP, .payload_len = 20 },
	  { .ingress = WAN, .flags = FP_FLOW_DNAT, .nat_daddr = "198.18.1.2", .nat_dport = 40000 },
	  .topo = TOPO_WAN_PPPOE, .mangle = pppoe_len_past_end, .verdict = XDP_PASS,
	  .stat = FP_STAT_PASS_MALFORMED },
	{ "pppoe on vlan: lan->wan pushes tag and session", LAN,
	  { FROM_LAN, CLI4, .proto = IPPROTO_UDP, .payload_len = 64 }, { SNAT_WAN },
	  .topo = TOPO_WAN_VLAN_PPPOE, .verdict = XDP_REDIRECT, .stat = FP_STAT_FORWARDED,
	  .egress = PORT,
	  .out = { .dmac = MAC_PEER, .smac = MAC_PORT, .vlan_id = FX_VLAN, .pppoe_sid = FX_SID,
		   CLI4_SNAT_OUT, .proto = IPPROTO_UDP, .ttl = 63, .payload_len = 64 } },
	{ "pppoe on vlan: wan->lan strips both", PORT,
	  { .dmac = MAC_PORT, .smac = MAC_PEER, .vlan_id = FX_VLAN, .pppoe_sid = FX_SID,
	    .family = 6, .saddr = "2001:2:0:2::2", .daddr = "2001:2:0:1::2", .sport = 443,
	    .dport = 40000, .proto = IPPROTO_TCP, .payload_len = 64 },
	  { .ingress = WAN }, .topo = TOPO_WAN_VLAN_PPPOE, .verdict = XDP_REDIRECT,
	  .stat = FP_STAT_FORWARDED, .egress = LAN,
	  .out = { TO_LAN, .family = 6, .saddr = "2001:2:0:2::2", .daddr = "2001:2:0:1::2",
		   .sport = 443, .dport = 40000, .proto = IPPROTO_TCP, .ttl = 63,
		   .payload_len = 64 } },
	{ "bridge: wan->lan goes to the host's bridge port", WAN,
	  { FROM_WAN, .family = 4, .saddr = "198.19.2.2", .daddr = "198.19.2.1", .sport = 443,
	    .dport = 61000, .proto = IPPROTO_TCP, .payload_len = 40 },
	  { .flags = FP_FLOW_DNAT, .nat_daddr = "198.18.1.2", .nat_dport = 40000 },
	  .topo = TOPO_LAN_BRIDGE, .verdict = XDP_REDIRECT, .stat = FP_STAT_FORWARDED,
	  .egress = PORT,
	  .out = { TO_LAN, .family = 4, .saddr = "198.19.2.2", .daddr = "198.18.1.2", .sport = 443,
		   .dport = 40000, .proto = IPPROTO_TCP, .ttl = 63, .payload_len = 40 } },
	{ "bridge: host not in the fdb passes", WAN,
	  { FROM_WAN, .family = 4, .saddr = "198.19.2.2", .daddr = "198.19.2.1", .sport = 443,
	    .dport = 61000, .proto = IPPROTO_TCP },
	  { .flags = FP_FLOW_DNAT, .nat_daddr = "198.18.1.2", .nat_dport = 40000 },
	  .topo = TOPO_LAN_BRIDGE_NO_FDB, .verdict = XDP_PASS, .stat = FP_STAT_PASS_NO_FDB },
	{ "bridge: a port that cannot take xdp frames now passes", WAN,
	  { FROM_WAN, .family = 4, .saddr = "198.19.2.2", .daddr = "198.19.2.1", .sport = 443,
	    .dport = 61000, .proto = IPPROTO_TCP },
	  { .flags = FP_FLOW_DNAT, .nat_daddr = "198.18.1.2", .nat_dport = 40000 },
	  .topo = TOPO_LAN_BRIDGE_NO_XMIT, .verdict = XDP_PASS, .stat = FP_STAT_PASS_EGRESS },
	{ "an egress that cannot take xdp frames now passes", LAN,
	  { FROM_LAN, CLI4, .proto = IPPROTO_TCP }, { SNAT_WAN }, .topo = TOPO_WAN_NO_XMIT,
	  .verdict = XDP_PASS, .stat = FP_STAT_PASS_EGRESS },
	{ "generic mode: an egress that cannot take xdp frames takes the skb", LAN,
	  { FROM_LAN, CLI4, .proto = IPPROTO_TCP, .payload_len = 30 }, { SNAT_WAN },
	  .topo = TOPO_WAN_NO_XMIT, .ingress_port = FP_PORT_GENERIC, .verdict = XDP_REDIRECT,
	  .stat = FP_STAT_FORWARDED, .egress = WAN,
	  .out = { TO_WAN, CLI4_SNAT_OUT, .proto = IPPROTO_TCP, .ttl = 63, .payload_len = 30 } },
	{ "generic mode: bridge: a port that cannot take xdp frames takes the skb", WAN,
	  { FROM_WAN, .family = 4, .saddr = "198.19.2.2", .daddr = "198.19.2.1", .sport = 443,
	    .dport = 61000, .proto = IPPROTO_TCP, .payload_len = 40 },
	  { .flags = FP_FLOW_DNAT, .nat_daddr = "198.18.1.2", .nat_dport = 40000 },
	  .topo = TOPO_LAN_BRIDGE_NO_XMIT, .ingress_port = FP_PORT_GENERIC, .verdict = XDP_REDIRECT,
	  .stat = FP_STAT_FORWARDED, .egress = PORT,
	  .out = { TO_LAN, .family = 4, .saddr = "198.19.2.2", .daddr = "198.18.1.2", .sport = 443,
		   .dport = 40000, .proto = IPPROTO_TCP, .ttl = 63, .payload_len = 40 } },
	/* A tap (its guest's virtio NIC offloads checksums), or virtio in generic mode. */
	{ "a port that may hand over partial checksums: a partial one passes", LAN,
	  { FROM_LAN, CLI4, .proto = IPPROTO_TCP, .payload_len = 100 }, { SNAT_WAN },
	  .ingress_port = FP_PORT_PARTIAL_CSUM, .mangle = l4_csum_partial, .verdict = XDP_PASS,
	  .stat = FP_STAT_PASS_PARTIAL_CSUM },
	{ "a port that may hand over partial checksums: a partial udp one passes", LAN,
	  { FROM_LAN, CLI4, .proto = IPPROTO_UDP, .payload_len = 100 }, { SNAT_WAN },
	  .ingress_port = FP_PORT_PARTIAL_CSUM, .mangle = l4_csum_partial, .verdict = XDP_PASS,
	  .stat = FP_STAT_PASS_PARTIAL_CSUM },
	{ "a port that may hand over partial checksums: a partial ipv6 one passes", LAN,
	  { FROM_LAN, CLI6, .proto = IPPROTO_TCP, .payload_len = 100 }, { 0 },
	  .ingress_port = FP_PORT_PARTIAL_CSUM, .mangle = l4_csum_partial, .verdict = XDP_PASS,
	  .stat = FP_STAT_PASS_PARTIAL_CSUM },
	{ "a port that may hand over partial checksums: a complete one is forwarded", LAN,
	  { FROM_LAN, CLI4, .proto = IPPROTO_UDP, .payload_len = 100 }, { SNAT_WAN },
	  .ingress_port = FP_PORT_PARTIAL_CSUM, .verdict = XDP_REDIRECT,
	  .stat = FP_STAT_FORWARDED, .egress = WAN,
	  .out = { TO_WAN, CLI4_SNAT_OUT, .proto = IPPROTO_UDP, .ttl = 63, .payload_len = 100 } },
	{ "bridge: a port's frame matches the bridge's flow", PORT,
	  { FROM_LAN, CLI4, .proto = IPPROTO_UDP, .payload_len = 10 }, { SNAT_WAN, .ingress = LAN },
	  .topo = TOPO_LAN_BRIDGE, .verdict = XDP_REDIRECT, .stat = FP_STAT_FORWARDED, .egress = WAN,
	  .out = { TO_WAN, CLI4_SNAT_OUT, .proto = IPPROTO_UDP, .ttl = 63, .payload_len = 10 } },
	{ "bridge: a frame bridged to another host passes", PORT,
	  { .dmac = MAC_OTHER, .smac = MAC_LAN_HOST, CLI4, .proto = IPPROTO_UDP },
	  { SNAT_WAN, .ingress = LAN }, .topo = TOPO_LAN_BRIDGE, .verdict = XDP_PASS,
	  .stat = FP_STAT_PASS_OTHER_HOST },
};

/* What only the tc entry point does; verdicts are written as XDP's and mapped. WAN's MTU is
 * 1400: an aggregate of 800-byte segments is 840 bytes per segment of IPv4 and TCP. */
static const struct dp_case tc_cases[] = {
	{ "tc: ipv4 tcp aggregate goes out whole, snat", LAN,
	  { FROM_LAN, CLI4, .proto = IPPROTO_TCP, .payload_len = 2400 }, { SNAT_WAN },
	  .gso_size = 800, .verdict = XDP_REDIRECT, .stat = FP_STAT_FORWARDED, .egress = WAN,
	  .out = { TO_WAN, CLI4_SNAT_OUT, .proto = IPPROTO_TCP, .ttl = 63, .payload_len = 2400 } },
	{ "tc: ipv4 tcp aggregate with a short last segment", WAN,
	  { FROM_WAN, .family = 4, .saddr = "198.19.2.2", .daddr = "198.19.2.1", .sport = 443,
	    .dport = 61000, .proto = IPPROTO_TCP, .payload_len = 2001 },
	  { .flags = FP_FLOW_DNAT, .nat_daddr = "198.18.1.2", .nat_dport = 40000 },
	  .gso_size = 1000, .verdict = XDP_REDIRECT, .stat = FP_STAT_FORWARDED, .egress = LAN,
	  .out = { TO_LAN, .family = 4, .saddr = "198.19.2.2", .daddr = "198.18.1.2", .sport = 443,
		   .dport = 40000, .proto = IPPROTO_TCP, .ttl = 63, .payload_len = 2001 } },
	{ "tc: ipv6 tcp aggregate goes out whole", LAN,
	  { FROM_LAN, CLI6, .proto = IPPROTO_TCP, .payload_len = 2400 }, { 0 },
	  .gso_size = 800, .verdict = XDP_REDIRECT, .stat = FP_STAT_FORWARDED, .egress = WAN,
	  .out = { TO_WAN, CLI6, .proto = IPPROTO_TCP, .ttl = 63, .payload_len = 2400 } },
	{ "tc: ipv6 tcp aggregate, nat66", LAN,
	  { FROM_LAN, CLI6, .proto = IPPROTO_TCP, .payload_len = 1600 },
	  { .flags = FP_FLOW_SNAT, .nat_saddr = "2001:2:0:2::1", .nat_sport = 61000 },
	  .gso_size = 800, .verdict = XDP_REDIRECT, .stat = FP_STAT_FORWARDED, .egress = WAN,
	  .out = { TO_WAN, .family = 6, .saddr = "2001:2:0:2::1", .daddr = "2001:2:0:2::2",
		   .sport = 61000, .dport = 443, .proto = IPPROTO_TCP, .ttl = 63,
		   .payload_len = 1600 } },
	{ "tc: ipv4 tcp aggregate of 47 segments, the last one short", LAN,
	  { FROM_LAN, CLI4, .proto = IPPROTO_TCP, .payload_len = 3000 }, { SNAT_WAN },
	  .gso_size = 64, .verdict = XDP_REDIRECT, .stat = FP_STAT_FORWARDED, .egress = WAN,
	  .out = { TO_WAN, CLI4_SNAT_OUT, .proto = IPPROTO_TCP, .ttl = 63, .payload_len = 3000 } },
	{ "tc: aggregate whose segments exceed the mtu passes", LAN,
	  { FROM_LAN, CLI4, .proto = IPPROTO_TCP, .payload_len = 2800 }, { SNAT_WAN },
	  .gso_size = FX_WAN_MTU - 40 + 1, .verdict = XDP_PASS, .stat = FP_STAT_PASS_MTU },
	{ "tc: aggregate of segments of exactly the mtu", LAN,
	  { FROM_LAN, CLI4, .proto = IPPROTO_TCP, .payload_len = 2 * (FX_WAN_MTU - 40) },
	  { SNAT_WAN }, .gso_size = FX_WAN_MTU - 40, .verdict = XDP_REDIRECT,
	  .stat = FP_STAT_FORWARDED, .egress = WAN,
	  .out = { TO_WAN, CLI4_SNAT_OUT, .proto = IPPROTO_TCP, .ttl = 63,
		   .payload_len = 2 * (FX_WAN_MTU - 40) } },
	{ "tc: a packet over the mtu passes", LAN,
	  { FROM_LAN, CLI4, .proto = IPPROTO_UDP, .payload_len = FX_WAN_MTU }, { SNAT_WAN },
	  .verdict = XDP_PASS, .stat = FP_STAT_PASS_MTU },
	{ "tc: a tag in the frame is an inner one and passes", LAN,
	  { FROM_LAN, CLI4, .vlan_id = 7, .proto = IPPROTO_TCP }, { SNAT_WAN },
	  .verdict = XDP_PASS, .stat = FP_STAT_PASS_VLAN },
	{ "tc: pppoe in passes", PORT,
	  { .dmac = MAC_PORT, .smac = MAC_PEER, .pppoe_sid = FX_SID, .family = 4,
	    .saddr = "198.19.2.2", .daddr = "198.19.2.1", .sport = 443, .dport = 61000,
	    .proto = IPPROTO_TCP }, { .flags = FP_FLOW_DNAT, .nat_daddr = "198.18.1.2",
	  .nat_dport = 40000, .ingress = WAN }, .topo = TOPO_WAN_PPPOE, .verdict = XDP_PASS,
	  .stat = FP_STAT_PASS_PPPOE },
	{ "tc: pppoe out, an aggregate stays with the kernel", LAN,
	  { FROM_LAN, CLI4, .proto = IPPROTO_TCP, .payload_len = 2400 }, { SNAT_WAN },
	  .gso_size = 800, .topo = TOPO_WAN_PPPOE, .verdict = XDP_PASS,
	  .stat = FP_STAT_PASS_PPPOE },
	{ "tc: pppoe out, a partial checksum stays with the kernel", LAN,
	  { FROM_LAN, CLI4, .proto = IPPROTO_TCP, .payload_len = 100 }, { SNAT_WAN },
	  .topo = TOPO_WAN_PPPOE, .mangle = l4_csum_partial, .verdict = XDP_PASS,
	  .stat = FP_STAT_PASS_PPPOE },
	{ "tc: pppoe out, a partial udp checksum stays with the kernel", LAN,
	  { FROM_LAN, CLI4, .proto = IPPROTO_UDP, .payload_len = 100 }, { SNAT_WAN },
	  .topo = TOPO_WAN_PPPOE, .mangle = l4_csum_partial, .verdict = XDP_PASS,
	  .stat = FP_STAT_PASS_PPPOE },
	{ "tc: pppoe out, a partial ipv6 checksum stays with the kernel", LAN,
	  { FROM_LAN, CLI6, .proto = IPPROTO_TCP, .payload_len = 100 }, { 0 },
	  .topo = TOPO_WAN_PPPOE, .mangle = l4_csum_partial, .verdict = XDP_PASS,
	  .stat = FP_STAT_PASS_PPPOE },
	{ "tc: pppoe on vlan out: the tag into the skb, the session header into the frame", LAN,
	  { FROM_LAN, CLI4, .proto = IPPROTO_UDP, .payload_len = 64 }, { SNAT_WAN },
	  .topo = TOPO_WAN_VLAN_PPPOE, .verdict = XDP_REDIRECT, .stat = FP_STAT_FORWARDED,
	  .egress = PORT,
	  .out = { .dmac = MAC_PEER, .smac = MAC_PORT, .pppoe_sid = FX_SID, CLI4_SNAT_OUT,
		   .proto = IPPROTO_UDP, .ttl = 63, .payload_len = 64 } },
	{ "tc: the tag out goes into the skb, not the frame", LAN,
	  { FROM_LAN, CLI4, .proto = IPPROTO_TCP, .payload_len = 50 }, { SNAT_WAN },
	  .topo = TOPO_WAN_VLAN, .verdict = XDP_REDIRECT, .stat = FP_STAT_FORWARDED, .egress = PORT,
	  .out = { .dmac = MAC_WAN_HOST, .smac = MAC_WAN, CLI4_SNAT_OUT, .proto = IPPROTO_TCP,
		   .ttl = 63, .payload_len = 50 } },
	{ "tc: an egress that cannot take xdp frames takes skbs", LAN,
	  { FROM_LAN, CLI4, .proto = IPPROTO_TCP, .payload_len = 30 }, { SNAT_WAN },
	  .topo = TOPO_WAN_NO_XMIT, .verdict = XDP_REDIRECT, .stat = FP_STAT_FORWARDED,
	  .egress = WAN,
	  .out = { TO_WAN, CLI4_SNAT_OUT, .proto = IPPROTO_TCP, .ttl = 63, .payload_len = 30 } },
	{ "tc: bridge: a port that cannot take xdp frames takes skbs", WAN,
	  { FROM_WAN, .family = 4, .saddr = "198.19.2.2", .daddr = "198.19.2.1", .sport = 443,
	    .dport = 61000, .proto = IPPROTO_TCP, .payload_len = 40 },
	  { .flags = FP_FLOW_DNAT, .nat_daddr = "198.18.1.2", .nat_dport = 40000 },
	  .topo = TOPO_LAN_BRIDGE_NO_XMIT, .verdict = XDP_REDIRECT, .stat = FP_STAT_FORWARDED,
	  .egress = PORT,
	  .out = { TO_LAN, .family = 4, .saddr = "198.19.2.2", .daddr = "198.18.1.2", .sport = 443,
		   .dport = 40000, .proto = IPPROTO_TCP, .ttl = 63, .payload_len = 40 } },
};
/* clang-format on */

/* The table cases the tc entry point takes as XDP does: no tag in or out, no PPPoE in
 * (PPPoE out it pushes as XDP does). And no frame cut inside its IP header, which the
 * kernel's test run of an skb refuses. */
static bool shared_with_tc(const struct dp_case *c)
{
	if (c->mangle == cut_after_eth || c->mangle == cut_ipv4 || c->mangle == cut_ipv6)
		return false;
	/* The tc hook forwards partial checksums right (its own cases): no port flag there. */
	if (c->ingress_port & FP_PORT_PARTIAL_CSUM)
		return false;
	switch (c->topo) {
	case TOPO_WAN_PPPOE:
		return !c->in.vlan_id && !c->in.pppoe_sid;
	case TOPO_WAN_VLAN:
	case TOPO_WAN_VLAN_PPPOE:
	case TOPO_WAN_NO_XMIT:
	case TOPO_LAN_BRIDGE_NO_XMIT:
		return false;
	default:
		return !c->in.vlan_id && !c->in.pppoe_sid && !c->out.vlan_id && !c->out.pppoe_sid;
	}
}

static int tc_verdict(int xdp_verdict)
{
	if (xdp_verdict == XDP_REDIRECT)
		return TC_ACT_REDIRECT;
	if (xdp_verdict == XDP_PASS)
		return TC_ACT_UNSPEC; /* on to the next filter, then the kernel */
	return TC_ACT_SHOT;
}

/* Segments of a GRO aggregate of the case's output packet, and the IP and TCP/UDP bytes
 * each repeats. */
static uint32_t case_segs(const struct dp_case *c, uint32_t *hdrs)
{
	uint32_t payload = c->in.payload_len;

	*hdrs = (c->in.family == 6 ? 40 : 20) + (c->in.proto == IPPROTO_TCP ? 20 : 8);
	if (!c->gso_size || payload <= c->gso_size)
		return 1;
	return (payload + c->gso_size - 1) / c->gso_size;
}

static int iface_index(enum iface i)
{
	return i == WAN ? fx.wan_ifindex : i == PORT ? fx.port_ifindex : fx.lan_ifindex;
}

/* The daemon's description of what lies below LAN or WAN, for the case's topology. */
static void apply_topo(enum topo topo)
{
	struct fp_ingress_key in_key = {.ifindex = fx.port_ifindex};
	struct fp_ingress upper = {0};
	struct fp_egress eg = {.ifindex = fx.port_ifindex, .mtu = FX_WAN_MTU};
	struct fp_config cfg;

	switch (topo) {
	case TOPO_PLAIN:
		return;
	case TOPO_WAN_VLAN:
	case TOPO_WAN_PPPOE:
	case TOPO_WAN_VLAN_PPPOE:
		upper.ifindex = fx.wan_ifindex;
		memcpy(upper.mac, fx_wan_mac, 6);
		if (topo != TOPO_WAN_PPPOE) {
			in_key.vlan_id = FX_VLAN;
			eg.flags |= FP_EGRESS_VLAN;
			eg.vlan_tci = htons(FX_VLAN);
		}
		if (topo != TOPO_WAN_VLAN) {
			in_key.pppoe_sid = htons(FX_SID);
			memcpy(upper.mac, fx_port_mac, 6);
			memcpy(upper.peer, fx_peer_mac, 6);
			eg.flags |= FP_EGRESS_PPPOE;
			eg.pppoe_sid = htons(FX_SID);
			memcpy(eg.smac, fx_port_mac, 6);
			memcpy(eg.dmac, fx_peer_mac, 6);
		}
		fx_add_ingress(&in_key, &upper);
		fx_add_egress(fx.wan_ifindex, &eg);
		return;
	case TOPO_WAN_NO_XMIT:
		eg = (struct fp_egress){.flags = FP_EGRESS_NO_XMIT};
		fx_add_egress(fx.wan_ifindex, &eg);
		return;
	case TOPO_LAN_BRIDGE:
	case TOPO_LAN_BRIDGE_NO_FDB:
	case TOPO_LAN_BRIDGE_NO_XMIT:
		upper.ifindex = fx.lan_ifindex;
		memcpy(upper.mac, fx_lan_mac, 6);
		fx_add_ingress(&in_key, &upper);
		eg = (struct fp_egress){.flags = FP_EGRESS_BRIDGE};
		fx_add_egress(fx.lan_ifindex, &eg);
		if (topo != TOPO_LAN_BRIDGE_NO_FDB)
			fx_add_fdb(fx.lan_ifindex, fx_lan_host_mac, fx.port_ifindex);
		if (topo == TOPO_LAN_BRIDGE_NO_XMIT) {
			eg = (struct fp_egress){.flags = FP_EGRESS_NO_XMIT};
			fx_add_egress(fx.port_ifindex, &eg);
		}
		fx_get_config(&cfg);
		cfg.flags |= FP_CONFIG_BRIDGE_PORTS;
		fx_set_config(&cfg);
		return;
	}
}

static void addr(int family, const char *text, void *dst)
{
	if (inet_pton(family == 6 ? AF_INET6 : AF_INET, text, dst) != 1)
		DIE("bad address in a test case: %s", text);
}

/* The key of the case's flow: the input packet's tuple on the flow's ingress. */
static void case_key(const struct dp_case *c, struct fp_flow_key4 *k4, struct fp_flow_key6 *k6)
{
	int ingress = iface_index(c->flow.ingress ? c->flow.ingress : c->ingress);

	*k4 = (struct fp_flow_key4){.ifindex = ingress,
				    .proto = c->in.proto,
				    .sport = htons(c->in.sport),
				    .dport = htons(c->in.dport)};
	*k6 = (struct fp_flow_key6){.ifindex = ingress,
				    .proto = c->in.proto,
				    .sport = htons(c->in.sport),
				    .dport = htons(c->in.dport)};
	if (c->in.family == 4) {
		addr(4, c->in.saddr, &k4->saddr);
		addr(4, c->in.daddr, &k4->daddr);
	} else {
		addr(6, c->in.saddr, k6->saddr);
		addr(6, c->in.daddr, k6->daddr);
	}
}

/* Installs the case's flow, keyed on the input packet's tuple. */
static void install_flow(const struct dp_case *c)
{
	const struct flow_spec *f = &c->flow;
	struct fp_flow_key4 k4;
	struct fp_flow_key6 k6;

	if (f->none)
		return;
	case_key(c, &k4, &k6);
	if (c->in.family == 4) {
		struct fp_flow4 flow = {.meta.flags = f->flags,
					.nat_sport = htons(f->nat_sport),
					.nat_dport = htons(f->nat_dport)};

		if (f->nat_saddr)
			addr(4, f->nat_saddr, &flow.nat_saddr);
		if (f->nat_daddr)
			addr(4, f->nat_daddr, &flow.nat_daddr);
		fx_add_flow4(&k4, &flow);
		if (f->closing)
			fx_set_flow4_state(&k4, FP_SLOT_LIVE | FP_SLOT_CLOSING);
	} else {
		struct fp_flow6_full flow = {.meta.flags = f->flags,
					     .nat_sport = htons(f->nat_sport),
					     .nat_dport = htons(f->nat_dport),
					     .state = FP_SLOT_LIVE |
						      (f->closing ? FP_SLOT_CLOSING : 0)};

		if (f->nat_saddr)
			addr(6, f->nat_saddr, flow.nat_saddr);
		if (f->nat_daddr)
			addr(6, f->nat_daddr, flow.nat_daddr);
		fx_add_flow6(&k6, &flow);
	}
}

/* A flow as a run left it, either family. */
struct flow_after {
	struct fp_flow_meta meta;
	uint64_t packets, bytes;
	bool closing;
};

static bool read_flow(const struct dp_case *c, struct flow_after *fa)
{
	struct fp_flow_key4 k4;
	struct fp_flow_key6 k6;
	struct fp_flow4 f4;
	struct fp_flow6_full f6;

	case_key(c, &k4, &k6);
	if (c->in.family == 4) {
		if (!fx_get_flow4(&k4, &f4))
			return false;
		*fa = (struct flow_after){f4.meta, f4.packets, f4.bytes,
					  fx_get_flow4_state(&k4) & FP_SLOT_CLOSING};
	} else {
		if (!fx_get_flow6(&k6, &f6))
			return false;
		*fa = (struct flow_after){f6.meta, f6.packets, f6.bytes,
					  f6.state & FP_SLOT_CLOSING};
	}
	return true;
}

static void apply_cfg(enum cfg_state state)
{
	struct fp_config cfg = {.nh_gen = 1};

	switch (state) {
	case CFG_NO_LEASE:
		break;
	case CFG_FRESH:
		cfg.lease_ns = 3000000000ull;
		cfg.heartbeat_ns = fx_now_ns();
		break;
	case CFG_STALE:
		cfg.lease_ns = 3000000000ull;
		cfg.heartbeat_ns = fx_now_ns() - 10000000000ull;
		break;
	case CFG_UNCONFIGURED:
		cfg.nh_gen = 0;
		break;
	}
	fx_set_config(&cfg);
}

/* Builds the expected frame; makes its UDP checksum fold to zero if the case asks. */
static size_t build_expected(const struct dp_case *c, uint8_t *buf)
{
	struct pkt_spec out = c->out;
	size_t len = pkt_build(&out, buf);

	if (c->out_udp_csum_folds_to_zero) {
		/* With payload word w = ~sum(frame with w = 0), the checksum sum is 0xffff,
		 * so the computed checksum is 0, which is sent as 0xffff. */
		struct pkt_view v;

		out.payload_word = 0;
		len = pkt_build(&out, buf);
		pkt_view(buf, len, &v);
		out.payload_word = buf[pkt_l4_csum_off(&v)] << 8 | buf[pkt_l4_csum_off(&v) + 1];
		len = pkt_build(&out, buf);
	}
	return len;
}

static void check_stats(const uint64_t before[FP_STAT_MAX], const uint64_t after[FP_STAT_MAX],
			enum fp_stat want, uint64_t l3_len, uint32_t segs)
{
	for (int i = 0; i < FP_STAT_MAX; i++) {
		uint64_t delta = after[i] - before[i], expect = 0;

		if (i == (int)want)
			expect = 1;
		if (i == FP_STAT_FORWARDED_BYTES && want == FP_STAT_FORWARDED)
			expect = l3_len;
		if (i == FP_STAT_FORWARDED_GSO && want == FP_STAT_FORWARDED && segs > 1)
			expect = 1;
		if (i == FP_STAT_FORWARDED_GSO_SEGS && want == FP_STAT_FORWARDED && segs > 1)
			expect = segs;
		CHECK(delta == expect, "counter %s moved by %llu, want %llu", fp_stat_names[i],
		      (unsigned long long)delta, (unsigned long long)expect);
	}
}

static void run_case(const struct dp_case *c, enum hook hook)
{
	static uint8_t in[PKT_MAX], out[PKT_MAX], want[PKT_MAX];
	uint64_t before[FP_STAT_MAX], after[FP_STAT_MAX];
	struct pkt_spec in_spec = c->in;
	uint32_t out_len, hdrs, segs = case_segs(c, &hdrs);
	size_t in_len, want_len;
	int verdict, want_verdict = hook == HOOK_TC ? tc_verdict(c->verdict) : c->verdict;
	char name[160];

	snprintf(name, sizeof(name), "%s%s",
		 hook == HOOK_TC && strncmp(c->name, "tc: ", 4) ? "tc: " : "", c->name);
	tl_case_begin(name);
	fx_reset();
	apply_cfg(c->cfg);
	apply_topo(c->topo);
	install_flow(c);
	if (c->wan_detached)
		fx_del_tx_port(fx.wan_ifindex);
	if (c->ingress_port) {
		uint32_t port = iface_index(c->ingress), flags = c->ingress_port;
		struct fp_config cfg;

		if (bpf_map_update_elem(bpf_map__fd(fx.skel->maps.fp_ports), &port, &flags, 0))
			DIE("fp_ports: %s", strerror(errno));
		fx_get_config(&cfg);
		if (flags & FP_PORT_PARTIAL_CSUM)
			cfg.flags |= FP_CONFIG_PARTIAL_CSUM; /* as attach sets it */
		fx_set_config(&cfg);
	}

	if (c->out_udp_csum_folds_to_zero) {
		/* The input carries the same payload as the expected output. */
		want_len = build_expected(c, want);
		struct pkt_view v;

		pkt_view(want, want_len, &v);
		in_spec.payload_word = want[v.l4_off + 8] << 8 | want[v.l4_off + 9];
		CHECK(want[v.l4_off + 6] == 0xff && want[v.l4_off + 7] == 0xff,
		      "test precondition: expected checksum is not the folded zero");
	}
	in_len = pkt_build(&in_spec, in);
	if (c->mangle)
		c->mangle(in, &in_len);

	fx_read_stats(before);
	if (hook == HOOK_TC)
		verdict =
			fx_run_tc(in, in_len, iface_index(c->ingress), c->gso_size, out, &out_len);
	else
		verdict = fx_run(in, in_len, iface_index(c->ingress), out, &out_len);
	fx_read_stats(after);

	CHECK(verdict == want_verdict, "verdict %d, want %d", verdict, want_verdict);
	if (c->verdict == XDP_REDIRECT) {
		uint64_t l3_bytes;
		struct flow_after fa;
		struct pkt_view v;

		want_len = build_expected(c, want);
		CHECK(out_len == want_len && !memcmp(out, want, want_len),
		      "output frame differs from the expected one");
		if (out_len != want_len || memcmp(out, want, want_len))
			tl_hexdump_diff(out, out_len, want, want_len);
		/* Independently of the expected frame: the checksums must verify. */
		CHECK(pkt_view(out, out_len, &v), "output does not parse");
		if (v.family == 4)
			CHECK(pkt_ipv4_csum_ok(out, out_len), "bad IPv4 header checksum out");
		CHECK(pkt_l4_csum_ok(out, out_len), "bad L4 checksum out");
		CHECK(read_flow(c, &fa), "flow vanished");
		CHECK(fa.meta.oif == (uint32_t)iface_index(c->egress), "egress %u, want %d",
		      fa.meta.oif, iface_index(c->egress));
		/* An aggregate counts as the segments it leaves as. */
		l3_bytes = v.l3_len + (segs - 1) * hdrs;
		CHECK(fa.packets == segs && fa.bytes == l3_bytes,
		      "flow counters %llu packets %llu bytes, want %u and %llu",
		      (unsigned long long)fa.packets, (unsigned long long)fa.bytes, segs,
		      (unsigned long long)l3_bytes);
		check_stats(before, after, c->stat, l3_bytes, segs);
	} else {
		struct flow_after fa;

		CHECK(out_len == in_len && !memcmp(out, in, in_len), "passed frame was modified");
		if (out_len != in_len || memcmp(out, in, in_len))
			tl_hexdump_diff(out, out_len, in, in_len);
		check_stats(before, after, c->stat, 0, 1);
		if (!c->flow.none && read_flow(c, &fa)) {
			bool fin_rst = c->in.proto == IPPROTO_TCP && (c->in.tcp_flags & 0x05) &&
				       c->stat == FP_STAT_PASS_TCP_FLAGS;

			CHECK_EQ(fa.packets, 0, "the flow counter of a passed packet");
			CHECK(fa.closing == (fin_rst || c->flow.closing), "closing %s",
			      fa.closing ? "set" : "not set");
		}
	}
	tl_case_end();
}

/* A cached next hop is used as long as its generation is current, and looked up again
 * after a bump: the daemon relies on this to follow route and neighbour changes. */
static void test_nexthop_generation(void)
{
	const struct dp_case *c = &cases[0]; /* ipv4 tcp snat lan->wan */
	static uint8_t in[PKT_MAX], out[PKT_MAX];
	struct fp_flow_key4 key = {.ifindex = fx.lan_ifindex,
				   .proto = IPPROTO_TCP,
				   .sport = htons(40000),
				   .dport = htons(443)};
	struct fp_flow4 flow = {.meta = {.flags = FP_FLOW_SNAT,
					 .nh_gen = 1,
					 .mtu = 1500,
					 .dmac = {2, 0, 0, 0, 0xee, 0xee},
					 .smac = {2, 0, 0, 0, 0xee, 0xef}},
				.nat_sport = htons(61000)};
	struct fp_config cfg = {.nh_gen = 1};
	uint32_t out_len;
	size_t in_len;

	tl_case_begin("next hop cache is used until the generation changes");
	fx_reset();
	addr(4, "198.18.1.2", &key.saddr);
	addr(4, "198.19.2.2", &key.daddr);
	addr(4, "198.19.2.1", &flow.nat_saddr);
	flow.meta.oif = fx.wan_ifindex;
	fx_add_flow4(&key, &flow);
	in_len = pkt_build(&c->in, in);

	CHECK(fx_run(in, in_len, fx.lan_ifindex, out, &out_len) == XDP_REDIRECT, "not redirected");
	CHECK(!memcmp(out, flow.meta.dmac, 6) && !memcmp(out + 6, flow.meta.smac, 6),
	      "cached MACs not used");

	cfg.nh_gen = 2;
	fx_set_config(&cfg);
	CHECK(fx_run(in, in_len, fx.lan_ifindex, out, &out_len) == XDP_REDIRECT, "not redirected");
	CHECK(!memcmp(out, fx_wan_host_mac, 6) && !memcmp(out + 6, fx_wan_mac, 6),
	      "MACs not looked up again after the generation bump");
	CHECK(fx_get_flow4(&key, &flow), "flow vanished");
	CHECK(flow.meta.nh_gen == 2 && flow.meta.oif == (uint32_t)fx.wan_ifindex &&
		      flow.meta.mtu == FX_WAN_MTU && !memcmp(flow.meta.dmac, fx_wan_host_mac, 6) &&
		      !memcmp(flow.meta.smac, fx_wan_mac, 6),
	      "cache holds gen %u oif %u mtu %u", flow.meta.nh_gen, flow.meta.oif, flow.meta.mtu);
	CHECK(flow.packets == 2, "flow counted %llu packets, want 2",
	      (unsigned long long)flow.packets);
	tl_case_end();
}

/* Runs @in, arriving on @ingress: it must come out unmodified with @want_verdict, counted
 * as @stat and nothing else. */
static void expect_untouched(const uint8_t *in, size_t in_len, int ingress, int want_verdict,
			     int stat)
{
	static uint8_t out[PKT_MAX];
	uint64_t before[FP_STAT_MAX], after[FP_STAT_MAX];
	uint32_t out_len;
	int verdict;

	fx_read_stats(before);
	verdict = fx_run(in, in_len, ingress, out, &out_len);
	fx_read_stats(after);
	CHECK(verdict == want_verdict, "verdict %d, want %d", verdict, want_verdict);
	CHECK(out_len == in_len && !memcmp(out, in, in_len), "the frame was modified");
	for (int i = 0; i < FP_STAT_MAX; i++)
		CHECK(after[i] - before[i] == (i == stat), "counter %s moved by %llu",
		      fp_stat_names[i], (unsigned long long)(after[i] - before[i]));
}

/* The case called @name. */
static const struct dp_case *case_named(const char *name)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (!strcmp(cases[i].name, name))
			return &cases[i];
	DIE("no case %s", name);
}

/* Used entries of fp_nh_ctx's half @half. */
static int nh_ctx_used(uint32_t half)
{
	int fd = bpf_map__fd(fx.skel->maps.fp_nh_ctx), used = 0;
	struct fp_nh_ctx ctx;

	for (uint32_t i = half * FP_NH_CTX_HALF; i < (half + 1) * FP_NH_CTX_HALF; i++)
		if (bpf_map_lookup_elem(fd, &i, &ctx) == 0 && ctx.used)
			used++;
	return used;
}

static uint16_t flow6_nh_ctx(const struct fp_flow_key6 *key)
{
	int64_t index = fp_slots_find(&fx.slots6, key);

	return index >= 0 ? fx.slots6.slot6[index].flow.nh_ctx : 0;
}

/*
 * IPv6 flows share their next hop (MACs, tags, MTU, port) in fp_nh_ctx: two flows to one
 * neighbour take one entry, in the half of the generation they resolved in; a bump into
 * the next turn resolves them in the other half, and the daemon's sweep then empties the
 * half left, which no flow names any more. A half with no room near a next hop's hash
 * leaves the flow with the kernel.
 */
static void test_nh_ctx_ipv6(void)
{
	const struct dp_case *c = case_named("ipv6 tcp forward");
	struct dp_case other = *c;
	static uint8_t in[PKT_MAX], in2[PKT_MAX], out[PKT_MAX];
	struct fp_flow_key4 k4;
	struct fp_flow_key6 k6, k6_other;
	struct fp_flow6_full f6;
	struct fp_config cfg = {.nh_gen = 1};
	struct fp_instance inst = {.flows6_fd = bpf_map__fd(fx.skel->maps.fp_flows6),
				   .slots6 = &fx.slots6,
				   .nat6_fd = bpf_map__fd(fx.skel->maps.fp_nat6),
				   .nh_ctx_fd = bpf_map__fd(fx.skel->maps.fp_nh_ctx),
				   .nh_claim_fd = bpf_map__fd(fx.skel->maps.fp_nh_ctx_claim),
				   .slots4 = &fx.slots4};
	uint32_t out_len;
	size_t in_len, in2_len;

	tl_case_begin("IPv6 flows to one neighbour share its next hop, in their generation's half");
	fx_reset();
	other.in.sport = c->in.sport + 1;
	install_flow(c);
	install_flow(&other);
	case_key(c, &k4, &k6);
	case_key(&other, &k4, &k6_other);
	in_len = pkt_build(&c->in, in);
	in2_len = pkt_build(&other.in, in2);
	CHECK(fx_run(in, in_len, fx.lan_ifindex, out, &out_len) == XDP_REDIRECT, "not redirected");
	CHECK(fx_run(in2, in2_len, fx.lan_ifindex, out, &out_len) == XDP_REDIRECT,
	      "other not redirected");
	CHECK(!memcmp(out, fx_wan_host_mac, 6) && !memcmp(out + 6, fx_wan_mac, 6),
	      "wrong MACs out");
	CHECK(fx_get_flow6(&k6, &f6) && f6.meta.nh_gen == 1 && f6.meta.mtu == FX_WAN_MTU &&
		      !memcmp(f6.meta.smac, fx_wan_mac, 6),
	      "flow's next hop: gen %u mtu %u", f6.meta.nh_gen, f6.meta.mtu);
	CHECK(nh_ctx_used(0) == 1 && nh_ctx_used(1) == 0, "%d and %d next hops, want 1 and 0",
	      nh_ctx_used(0), nh_ctx_used(1));
	CHECK(flow6_nh_ctx(&k6) == flow6_nh_ctx(&k6_other) && flow6_nh_ctx(&k6) < FP_NH_CTX_HALF,
	      "contexts %u and %u", flow6_nh_ctx(&k6), flow6_nh_ctx(&k6_other));
	tl_case_end();

	tl_case_begin("... a bump into the other half resolves there; the half left is emptied");
	cfg.nh_gen = FP_NH_GEN_TURN;
	fx_set_config(&cfg);
	CHECK(fx_run(in, in_len, fx.lan_ifindex, out, &out_len) == XDP_REDIRECT, "not redirected");
	CHECK(flow6_nh_ctx(&k6) >= FP_NH_CTX_HALF, "context %u, in the old half",
	      flow6_nh_ctx(&k6));
	CHECK(fp_flows_forget_next_hops(&inst, cfg.nh_gen) == 0, "the sweep failed");
	CHECK(nh_ctx_used(0) == 0 && nh_ctx_used(1) == 1, "%d and %d next hops, want 0 and 1",
	      nh_ctx_used(0), nh_ctx_used(1));
	CHECK(fx_get_flow6(&k6_other, &f6) && f6.meta.nh_gen == 0,
	      "the other flow's old next hop kept (gen %u)", f6.meta.nh_gen);
	CHECK(fx_run(in2, in2_len, fx.lan_ifindex, out, &out_len) == XDP_REDIRECT,
	      "other not redirected");
	CHECK(!memcmp(out, fx_wan_host_mac, 6) && !memcmp(out + 6, fx_wan_mac, 6),
	      "wrong MACs out");
	CHECK(flow6_nh_ctx(&k6) == flow6_nh_ctx(&k6_other) && nh_ctx_used(1) == 1,
	      "contexts %u and %u, %d used", flow6_nh_ctx(&k6), flow6_nh_ctx(&k6_other),
	      nh_ctx_used(1));
	tl_case_end();

	tl_case_begin("... a half with no room leaves the flow with the kernel (pass_nh_context)");
	for (uint32_t i = FP_NH_CTX_HALF; i < 2 * FP_NH_CTX_HALF; i++) {
		struct fp_nh_ctx taken = {.meta.smac = {2, 0, 0, 0xee, i >> 8, i & 0xff},
					  .used = 1};

		bpf_map_update_elem(bpf_map__fd(fx.skel->maps.fp_nh_ctx), &i, &taken, 0);
		bpf_map_update_elem(bpf_map__fd(fx.skel->maps.fp_nh_ctx_claim), &i, &taken, 0);
	}
	cfg.nh_gen = FP_NH_GEN_TURN + 1;
	fx_set_config(&cfg);
	expect_untouched(in, in_len, fx.lan_ifindex, XDP_PASS, FP_STAT_PASS_NH_CTX);
	tl_case_end();
}

/*
 * A kernel whose next-hop lookup takes no mark (before 6.10): a marked flow stays in the
 * kernel, untouched, counted as pass_no_fib_mark and nothing else; an unmarked one is
 * forwarded as ever.
 */
static void test_nexthop_mark_fallback(void)
{
	const struct dp_case *c = &cases[0]; /* ipv4 tcp snat lan->wan */
	static uint8_t in[PKT_MAX], out[PKT_MAX];
	struct fp_flow_key4 key;
	struct fp_flow_key6 unused;
	struct fp_flow4 flow = {.meta = {.flags = FP_FLOW_SNAT}, .nat_sport = htons(61000)};
	uint32_t out_len;
	size_t in_len;

	tl_case_begin("no BPF_FIB_LOOKUP_MARK: a marked flow stays in the kernel");
	fx_reset();
	case_key(c, &key, &unused);
	addr(4, "198.19.2.1", &flow.nat_saddr);
	flow.meta.flags |= FP_FLOW_MARK;
	fx_set_mark4(&key, 0x10);
	fx_add_flow4(&key, &flow);
	in_len = pkt_build(&c->in, in);
	expect_untouched(in, in_len, fx.lan_ifindex, XDP_PASS, FP_STAT_PASS_NO_FIB_MARK);
	CHECK(fx_get_flow4(&key, &flow) && flow.meta.nh_gen == 0 && flow.packets == 0,
	      "the marked flow got a next hop or counted a packet");

	fx_reset();
	flow.meta.flags &= ~FP_FLOW_MARK;
	fx_add_flow4(&key, &flow);
	CHECK(fx_run(in, in_len, fx.lan_ifindex, out, &out_len) == XDP_REDIRECT &&
		      !memcmp(out, fx_wan_host_mac, 6),
	      "the unmarked flow was not forwarded to the WAN host");
	tl_case_end();
}

/*
 * Policy routing: a flow with a conntrack mark is looked up with it as the fwmark. Here an
 * ip rule sends mark 0x10 to a table that reaches the server through the LAN port (with
 * its own neighbour entry there): the marked flow must leave through it, the unmarked
 * one through the WAN as before.
 */
static void test_nexthop_mark(void)
{
	const struct dp_case *c = &cases[0]; /* ipv4 tcp snat lan->wan */
	static const uint8_t marked_host_mac[6] = {2, 0, 0, 0, 1, 0x99};
	static uint8_t in[PKT_MAX], out[PKT_MAX];
	struct fp_flow_key4 key = {.ifindex = fx.lan_ifindex,
				   .proto = IPPROTO_TCP,
				   .sport = htons(40000),
				   .dport = htons(443)};
	struct fp_flow4 flow = {.meta = {.flags = FP_FLOW_SNAT}, .nat_sport = htons(61000)};
	uint32_t out_len;
	size_t in_len;

	if (!(fx.kernel & FP_KERNEL_FIB_MARK)) {
		test_nexthop_mark_fallback();
		return;
	}
	tl_case_begin("a flow's mark selects its route (BPF_FIB_LOOKUP_MARK)");
	fx_sh("ip rule add fwmark 0x10 lookup 100 && "
	      "ip route add 198.19.2.2/32 dev fp_lan table 100 && "
	      "ip neigh add 198.19.2.2 lladdr 02:00:00:00:01:99 dev fp_lan nud permanent");
	fx_reset();
	addr(4, "198.18.1.2", &key.saddr);
	addr(4, "198.19.2.2", &key.daddr);
	addr(4, "198.19.2.1", &flow.nat_saddr);
	in_len = pkt_build(&c->in, in);

	fx_add_flow4(&key, &flow);
	CHECK(fx_run(in, in_len, fx.lan_ifindex, out, &out_len) == XDP_REDIRECT, "not redirected");
	CHECK(!memcmp(out, fx_wan_host_mac, 6), "the unmarked flow did not go to the WAN host");

	fx_reset();
	flow.meta.flags |= FP_FLOW_MARK;
	fx_set_mark4(&key, 0x10);
	fx_add_flow4(&key, &flow);
	CHECK(fx_run(in, in_len, fx.lan_ifindex, out, &out_len) == XDP_REDIRECT, "not redirected");
	CHECK(!memcmp(out, marked_host_mac, 6), "the marked flow ignored its mark's route");
	CHECK(fx_get_flow4(&key, &flow), "flow vanished");
	CHECK(flow.meta.oif == (uint32_t)fx.lan_ifindex, "marked flow cached egress %u, want %d",
	      flow.meta.oif, fx.lan_ifindex);
	fx_sh("ip rule del fwmark 0x10 lookup 100 && ip route flush table 100 && "
	      "ip neigh del 198.19.2.2 dev fp_lan");
	tl_case_end();
}

/* A marked flow whose mark is not in fp_marks4 (the daemon writes the mark first and
 * removes it last: a moment of either) passes as having no flow, and gets no next hop. */
static void test_mark_missing(void)
{
	const struct dp_case *c = &cases[0]; /* ipv4 tcp snat lan->wan */
	static uint8_t in[PKT_MAX];
	struct fp_flow_key4 key;
	struct fp_flow_key6 unused;
	struct fp_flow4 flow = {.meta = {.flags = FP_FLOW_SNAT | FP_FLOW_MARK},
				.nat_sport = htons(61000)};
	size_t in_len;

	tl_case_begin("a marked flow without its mark passes, unresolved");
	fx_reset();
	case_key(c, &key, &unused);
	addr(4, "198.19.2.1", &flow.nat_saddr);
	fx_add_flow4(&key, &flow);
	in_len = pkt_build(&c->in, in);
	expect_untouched(in, in_len, fx.lan_ifindex, XDP_PASS, FP_STAT_PASS_NO_FLOW);
	CHECK(fx_get_flow4(&key, &flow) && flow.meta.nh_gen == 0 && flow.packets == 0,
	      "the flow got a next hop or counted a packet");
	tl_case_end();
}

/*
 * A flow key holds 16 bits of ingress ifindex. A packet arriving on an interface whose
 * ifindex is larger must pass as having no flow, and never match the flow of the interface
 * whose ifindex is its low 16 bits.
 */
static void test_ifindex_beyond_keys(void)
{
	const struct dp_case *c = &cases[0]; /* ipv4 tcp snat lan->wan */
	static uint8_t in[PKT_MAX];
	const int big = 70001;
	struct fp_flow_key4 key;
	struct fp_flow_key6 unused;
	struct fp_flow4 flow = {.meta = {.flags = FP_FLOW_SNAT}, .nat_sport = htons(61000)};
	size_t in_len;

	/* Before 5.15 frames enter over the fixture's three veths (wire.c): no others. */
	if (fx_wire) {
		printf("# skipped: an ifindex no flow key holds (frames enter only by the "
		       "fixture's ports on this kernel)\n");
		return;
	}
	tl_case_begin("an ifindex no flow key holds: its packets pass, matching no truncated key");
	fx_sh("ip link add fp_big index 70001 type veth peer name fp_big1 && "
	      "ip link set fp_big up");
	fx_reset();
	case_key(c, &key, &unused);
	key.ifindex = (uint16_t)big;
	addr(4, "198.19.2.1", &flow.nat_saddr);
	fx_add_flow4(&key, &flow);
	in_len = pkt_build(&c->in, in);
	expect_untouched(in, in_len, big, XDP_PASS, FP_STAT_PASS_NO_FLOW);
	fx_sh("ip link del fp_big");
	tl_case_end();
}

/* Packets and bytes add up, and last-seen moves to the time of the last packet. */
static void test_flow_counters(void)
{
	const struct dp_case *c = &cases[1]; /* ipv4 udp snat lan->wan */
	static uint8_t in[PKT_MAX], out[PKT_MAX];
	struct flow_after fa;
	uint64_t t0, t1;
	uint32_t out_len;
	uint8_t first, last;
	size_t in_len;

	tl_case_begin("flow counters and last-seen time");
	fx_reset();
	install_flow(c);
	in_len = pkt_build(&c->in, in);
	/* The datapath's clock lags CLOCK_MONOTONIC by up to a tick, give or take the tick
	 * interrupt's delays: what fp_clock_lag_ok() allows, 3 ticks behind to 2 ahead. */
	t0 = fx_now_ns() - 3 * fx.clock.tick_ns;
	for (int i = 0; i < 3; i++)
		fx_run(in, in_len, fx.lan_ifindex, out, &out_len);
	t1 = fx_now_ns() + 2 * fx.clock.tick_ns;
	CHECK(read_flow(c, &fa), "flow vanished");
	CHECK(fa.packets == 3 && fa.bytes == 3 * (in_len - 14), "counted %llu/%llu",
	      (unsigned long long)fa.packets, (unsigned long long)fa.bytes);
	/* The stamp is the clock's 2^30 ns unit, 8 bits of it. */
	first = t0 >> FP_STAMP_SHIFT;
	last = t1 >> FP_STAMP_SHIFT;
	CHECK((uint8_t)(fa.meta.last_seen - first) <= (uint8_t)(last - first),
	      "last seen %u outside the runs' %u..%u", fa.meta.last_seen, first, last);
	CHECK(fp_stamp_age_ns(t1, fa.meta.last_seen) <= t1 - t0 + (1ull << FP_STAMP_SHIFT),
	      "last seen %llu ns ago", (unsigned long long)fp_stamp_age_ns(t1, fa.meta.last_seen));
	tl_case_end();
}

/* @in through the datapath under @cfg as it is (a clock with no tick included, which
 * fx_set_config() would fill): its verdict must be @verdict, @stat the counter it moves. */
static void run_under_config(const struct fp_config *cfg, const uint8_t *in, size_t in_len,
			     int verdict, enum fp_stat stat, const char *what)
{
	uint64_t before[FP_STAT_MAX], after[FP_STAT_MAX];
	uint8_t out[PKT_MAX];
	uint32_t out_len, zero = 0;

	CHECK(!bpf_map_update_elem(bpf_map__fd(fx.skel->maps.fp_config), &zero, cfg, 0),
	      "config update: %s", strerror(errno));
	fx_read_stats(before);
	CHECK_EQ(fx_run(in, in_len, fx.lan_ifindex, out, &out_len), verdict, what);
	fx_read_stats(after);
	check_stats(before, after, stat, in_len - ETH_HLEN, 1);
}

/*
 * The datapath's time is the config's clock (jiffies from a calibrated start), not one of
 * its own: a clock 10 s fast makes a fresh heartbeat stale, one 10 s slow makes a stale
 * heartbeat fresh. A config whose clock has no tick (its calibration failed) is read as
 * the kernel's clock.
 */
static void test_clock_source(void)
{
	const struct dp_case *c = &cases[0]; /* ipv4 tcp snat lan->wan */
	struct fp_config cfg = {.nh_gen = 1, .lease_ns = 3000000000ull};
	uint8_t in[PKT_MAX];
	size_t in_len;

	if (!(fx.kernel & FP_KERNEL_JIFFIES))
		return; /* bpf_ktime_get_ns(), which the lease cases try */
	tl_case_begin("a config whose jiffies clock has no tick: the kernel's clock");
	fx_reset();
	install_flow(c);
	in_len = pkt_build(&c->in, in);
	cfg.kernel = fx.kernel;
	cfg.heartbeat_ns = fx_now_ns();
	run_under_config(&cfg, in, in_len, XDP_REDIRECT, FP_STAT_FORWARDED,
			 "the verdict with a fresh heartbeat");
	cfg.heartbeat_ns = fx_now_ns() - 5000000000ull;
	run_under_config(&cfg, in, in_len, XDP_PASS, FP_STAT_PASS_HEARTBEAT,
			 "the verdict with a heartbeat older than the lease");
	tl_case_end();

	if (!fx.clock.tick_ns) {
		printf("  (the jiffies clock did not calibrate at the start of the run)\n");
		return;
	}
	tl_case_begin("the datapath's time is the jiffies clock of its config");
	fx_reset();
	install_flow(c);
	cfg.clock = fx.clock;
	cfg.clock.ns += 10000000000ull;
	cfg.heartbeat_ns = fx_now_ns();
	run_under_config(&cfg, in, in_len, XDP_PASS, FP_STAT_PASS_HEARTBEAT,
			 "the verdict with a fresh heartbeat and a clock 10 s fast");
	cfg.clock.ns -= 20000000000ull;
	cfg.heartbeat_ns = fx_now_ns() - 5000000000ull;
	run_under_config(&cfg, in, in_len, XDP_REDIRECT, FP_STAT_FORWARDED,
			 "the verdict with a stale heartbeat and a clock 10 s slow");
	tl_case_end();
}

/*
 * --steer: with a cpumap entry for every CPU the frame is handed over untouched (the entry's
 * program does the work, on that CPU); with none it is forwarded where it arrived.
 */
static void test_steering(void)
{
	const struct dp_case *c = &cases[0]; /* ipv4 tcp snat lan->wan */
	static uint8_t in[PKT_MAX], out[PKT_MAX], want[PKT_MAX];
	uint64_t before[FP_STAT_MAX], after[FP_STAT_MAX];
	int cpus_fd = bpf_map__fd(fx.skel->maps.fp_cpus);
	struct fp_config cfg = {.nh_gen = 1, .steer_cpus = fx.nr_cpus};
	struct flow_after fa;
	uint32_t out_len;
	size_t in_len, want_len;
	int verdict;

	if (fx_wire) { /* the cpumap takes the frame on: no verdict of its own to see */
		printf("skip - steering (needs BPF_PROG_TEST_RUN with an XDP context, 5.15)\n");
		return;
	}
	tl_case_begin("steering hands the frame to its flow's cpu, untouched");
	fx_reset();
	fx_set_config(&cfg);
	install_flow(c);
	for (int cpu = 0; cpu < fx.nr_cpus; cpu++) {
		struct bpf_cpumap_val val = {
			.qsize = 64,
			.bpf_prog.fd = bpf_program__fd(fx.skel->progs.xdp_fastpath_cpu)};
		uint32_t key = cpu;

		if (bpf_map_update_elem(cpus_fd, &key, &val, 0) ||
		    bpf_map_update_elem(bpf_map__fd(fx.skel->maps.fp_steer), &key, &key, 0))
			DIE("cpumap entry %d: %s", cpu, strerror(errno));
	}
	in_len = pkt_build(&c->in, in);
	/* A redirect to the cpumap, counted as steered and nothing else. */
	expect_untouched(in, in_len, fx.lan_ifindex, XDP_REDIRECT, FP_STAT_STEERED);
	CHECK(read_flow(c, &fa) && fa.packets == 0, "the flow counted it already");
	tl_case_end();

	tl_case_begin("steering to a cpu without a cpumap entry forwards where it arrived");
	for (int cpu = 0; cpu < fx.nr_cpus; cpu++) {
		uint32_t key = cpu;

		bpf_map_delete_elem(cpus_fd, &key);
	}
	fx_read_stats(before);
	verdict = fx_run(in, in_len, fx.lan_ifindex, out, &out_len);
	fx_read_stats(after);
	want_len = build_expected(c, want);
	CHECK(verdict == XDP_REDIRECT && out_len == want_len && !memcmp(out, want, want_len),
	      "not forwarded as without steering");
	CHECK(after[FP_STAT_FORWARDED] - before[FP_STAT_FORWARDED] == 1 &&
		      after[FP_STAT_STEERED] == before[FP_STAT_STEERED],
	      "counted as steered, or not as forwarded");
	fx_reset();
	tl_case_end();
}

/* Every table case through XDP, and through tc those it shares and its own. */
static void run_tables(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_case(&cases[i], HOOK_XDP);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (shared_with_tc(&cases[i]))
			run_case(&cases[i], HOOK_TC);
	for (size_t i = 0; i < sizeof(tc_cases) / sizeof(tc_cases[0]); i++)
		run_case(&tc_cases[i], HOOK_TC);
}

/*
 * A port whose TCP is the tc hook's (--mode auto with GRO): the XDP entry point passes its
 * TCP, flow or not, and forwards the rest; only while the config says some port is so.
 */
static void test_tcp_to_tc(void)
{
	const struct dp_case *tcp = &cases[0], *udp = &cases[1]; /* snat lan->wan */
	uint32_t port = fx.lan_ifindex, flags = FP_PORT_TCP_TO_TC;
	uint64_t before[FP_STAT_MAX], after[FP_STAT_MAX];
	uint8_t in[PKT_MAX], out[PKT_MAX];
	struct fp_config cfg;
	uint32_t out_len;
	size_t in_len;
	int verdict;

	tl_case_begin("tcp of a port that leaves it to the tc hook passes, udp is forwarded");
	fx_reset();
	install_flow(tcp);
	install_flow(udp);
	if (bpf_map_update_elem(bpf_map__fd(fx.skel->maps.fp_ports), &port, &flags, 0))
		DIE("fp_ports: %s", strerror(errno));
	fx_get_config(&cfg);
	cfg.flags |= FP_CONFIG_TCP_TO_TC;
	fx_set_config(&cfg);
	in_len = pkt_build(&tcp->in, in);
	fx_read_stats(before);
	verdict = fx_run(in, in_len, fx.lan_ifindex, out, &out_len);
	fx_read_stats(after);
	CHECK_EQ(verdict, XDP_PASS, "tcp's verdict");
	check_stats(before, after, FP_STAT_PASS_TCP_TO_TC, 0, 1);
	CHECK(out_len == in_len && !memcmp(out, in, in_len), "passed frame was modified");
	in_len = pkt_build(&udp->in, in);
	verdict = fx_run(in, in_len, fx.lan_ifindex, out, &out_len);
	CHECK_EQ(verdict, XDP_REDIRECT, "udp's verdict");
	tl_case_end();

	tl_case_begin("tcp of such a port leaving by pppoe stays xdp's");
	apply_topo(TOPO_WAN_PPPOE); /* the tc hook leaves pppoe to the kernel */
	fx_get_config(&cfg);
	cfg.nh_gen++; /* the next hop is looked up again, now through the session */
	fx_set_config(&cfg);
	in_len = pkt_build(&tcp->in, in);
	fx_read_stats(before);
	verdict = fx_run(in, in_len, fx.lan_ifindex, out, &out_len);
	fx_read_stats(after);
	CHECK_EQ(verdict, XDP_REDIRECT, "tcp's verdict");
	CHECK_EQ(after[FP_STAT_PASS_TCP_TO_TC] - before[FP_STAT_PASS_TCP_TO_TC], 0,
		 "left to the tc hook");
	tl_case_end();

	tl_case_begin("without the config's flag the port's tcp is forwarded");
	fx_reset();
	install_flow(tcp);
	if (bpf_map_update_elem(bpf_map__fd(fx.skel->maps.fp_ports), &port, &flags, 0))
		DIE("fp_ports: %s", strerror(errno));
	fx_get_config(&cfg);
	cfg.flags &= ~FP_CONFIG_TCP_TO_TC;
	fx_set_config(&cfg);
	in_len = pkt_build(&tcp->in, in);
	verdict = fx_run(in, in_len, fx.lan_ifindex, out, &out_len);
	CHECK_EQ(verdict, XDP_REDIRECT, "tcp's verdict");
	tl_case_end();
	fx_reset();
}

/*
 * A next hop the tc entry point resolved through a port that cannot take XDP frames is
 * cached for skbs only: a frame of the same flow at the XDP entry point (a bridge whose
 * ports are on both hooks) passes rather than be dropped by the redirect.
 */
static void test_tc_skb_only(void)
{
	const struct dp_case *c = NULL;
	uint8_t in[PKT_MAX], out[PKT_MAX];
	uint64_t before[FP_STAT_MAX], after[FP_STAT_MAX];
	uint32_t out_len;
	size_t in_len;
	int verdict;

	for (size_t i = 0; i < sizeof(tc_cases) / sizeof(tc_cases[0]); i++)
		if (tc_cases[i].topo == TOPO_WAN_NO_XMIT)
			c = &tc_cases[i];
	tl_case_begin("tc: a next hop for skbs only is not the xdp entry point's");
	fx_reset();
	apply_cfg(c->cfg);
	apply_topo(c->topo);
	install_flow(c);
	in_len = pkt_build(&c->in, in);
	verdict = fx_run_tc(in, in_len, iface_index(c->ingress), 0, out, &out_len);
	CHECK_EQ(verdict, TC_ACT_REDIRECT, "the tc verdict");
	fx_read_stats(before);
	verdict = fx_run(in, in_len, iface_index(c->ingress), out, &out_len);
	fx_read_stats(after);
	CHECK_EQ(verdict, XDP_PASS, "the xdp verdict");
	check_stats(before, after, FP_STAT_PASS_EGRESS, 0, 1);
	tl_case_end();
}

/* Atomic instructions in the program as the verifier left it (dead code removed). */
static int atomic_insns(int prog_fd)
{
	struct bpf_prog_info info = {};
	uint32_t info_len = sizeof(info), n;
	struct bpf_insn *insns;
	int atomics = 0;

	if (bpf_obj_get_info_by_fd(prog_fd, &info, &info_len))
		DIE("program info: %s", strerror(errno));
	n = info.xlated_prog_len / sizeof(*insns);
	insns = calloc(n, sizeof(*insns));
	if (!insns)
		DIE("out of memory");
	info = (struct bpf_prog_info){.xlated_prog_len = n * sizeof(*insns),
				      .xlated_prog_insns = (uintptr_t)insns};
	info_len = sizeof(info);
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &info_len))
		DIE("program info: %s", strerror(errno));
	for (uint32_t i = 0; i < n; i++)
		if (insns[i].code == (BPF_STX | BPF_ATOMIC | BPF_DW) ||
		    insns[i].code == (BPF_STX | BPF_ATOMIC | BPF_W))
			atomics++;
	free(insns);
	return atomics;
}

/*
 * The interpreter runs what the JIT cannot compile, several times slower: both entry points
 * must come out of the JIT, on every architecture of the matrix. On a 64-bit one the probe
 * finds the JIT's 64-bit atomics (32-bit ARM's has none: there, and with the JIT off, the
 * per-flow counters are plain adds, which the fallback run below tries).
 */
static void test_jited(void)
{
	const struct bpf_insn pass[] = {
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = XDP_PASS},
		{.code = BPF_JMP | BPF_EXIT},
	};
	int fd, jit;

	/* Whether the JIT compiles anything here: not when it is off, nor in the s390x guest
	 * (qemu's emulated CPU), where everything runs in the interpreter. */
	fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "fp_test_pass", "GPL", pass, 2, NULL);
	if (fd < 0)
		DIE("loading a two-instruction program: %s", strerror(errno));
	jit = fp_prog_jited(fd);
	close(fd);
	if (!jit)
		printf("  (the JIT compiles nothing here: the JIT checks are skipped)\n");
	tl_case_begin("atomic adds in the program only with FP_KERNEL_JIT_ATOMICS");
	if (fx.kernel & FP_KERNEL_JIT_ATOMICS) {
		CHECK(atomic_insns(fx.prog_fd) > 0, "the XDP entry point has none");
		CHECK(atomic_insns(fx.prog_tc_fd) > 0, "the tc entry point has none");
	} else {
		CHECK_EQ(atomic_insns(fx.prog_fd), 0, "the XDP entry point's atomic adds");
		CHECK_EQ(atomic_insns(fx.prog_tc_fd), 0, "the tc entry point's atomic adds");
	}
	tl_case_end();
	if (!jit)
		return;
	tl_case_begin("the datapath is JIT-compiled, both entry points");
	CHECK(fp_prog_jited(fx.prog_fd), "the XDP entry point runs in the interpreter");
	CHECK(fp_prog_jited(fx.prog_tc_fd), "the tc entry point runs in the interpreter");
	if (sizeof(void *) == 8)
		CHECK(fp_kernel_probe() & FP_KERNEL_JIT_ATOMICS,
		      "no JIT atomics found on a 64-bit machine");
	tl_case_end();
}

/*
 * MIPS (ath79, ramips), most routers, has no efficient unaligned access: its verifier
 * checks every packet access for alignment, assuming the frame starts 2 bytes past a
 * 4-byte boundary (NET_IP_ALIGN), and refuses the program if one is misaligned.
 * BPF_F_STRICT_ALIGNMENT asks this kernel's verifier for the same, with the features this
 * kernel offers and with none (the code each leaves in differs).
 */
static void test_strict_alignment(void)
{
	const uint32_t kernels[] = {fx.kernel, 0};

	tl_case_begin("every entry point loads with strict alignment, as on MIPS");
	for (size_t i = 0; i < sizeof(kernels) / sizeof(kernels[0]); i++) {
		struct xdp_fastpath *skel = fp_datapath_open(kernels[i]);
		struct bpf_program *prog;
		int err;

		if (!skel)
			DIE("opening the XDP program failed: %s", strerror(errno));
		bpf_object__for_each_program(prog, skel->obj)
			bpf_program__set_flags(prog,
					       bpf_program__flags(prog) | BPF_F_STRICT_ALIGNMENT);
		err = xdp_fastpath__load(skel);
		CHECK(!err, "kernel features 0x%x: the verifier refused it: %s", kernels[i],
		      strerror(-err));
		xdp_fastpath__destroy(skel);
	}
	tl_case_end();
}

/*
 * The program as a kernel without any of the newer features gets it (before 5.5: no jiffies
 * clock; 5.10: no fib mark), tried on this kernel too: every table case must come out the same, and
 * the fallbacks do what they say.
 */
static void test_kernel_fallbacks(void)
{
	uint32_t kernel = fx.kernel;
	int failed = tl_failed;

	if (!kernel)
		return; /* the suite ran like this already */
	fx_load(0);
	test_jited();
	run_tables();
	test_nexthop_mark();
	test_mark_missing();
	test_flow_counters();
	if (tl_failed != failed)
		printf("  (the failures above are of the program loaded without FP_KERNEL_*)\n");
	fx_load(kernel);
}

void test_datapath(void)
{
	test_jited();
	run_tables();
	test_tc_skb_only();
	test_tcp_to_tc();
	test_nexthop_generation();
	test_nh_ctx_ipv6();
	test_nexthop_mark();
	test_mark_missing();
	test_ifindex_beyond_keys();
	test_flow_counters();
	test_clock_source();
	test_steering();
	test_strict_alignment();
	test_kernel_fallbacks();
}
