/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The datapath test fixture: a private network namespace (the test process unshares it, so
 * nothing leaks and nothing needs cleaning) with two veth pairs playing a router's LAN and
 * WAN ports, static neighbours, and the XDP program loaded from the skeleton.
 *
 *   LAN  fp_lan  198.18.1.1/24  2001:2:0:1::1/64  mac 02:00:00:00:01:01
 *        host    198.18.1.2     2001:2:0:1::2     mac 02:00:00:00:01:02 (static neighbour)
 *   WAN  fp_wan  198.19.2.1/24  2001:2:0:2::1/64  mac 02:00:00:00:02:01, MTU 1400
 *        host    198.19.2.2     2001:2:0:2::2     mac 02:00:00:00:02:02 (static neighbour)
 *        198.19.2.3 has a route but no neighbour; 198.19.99.0/24 has no route.
 *   PORT fp_port  no address, mac 02:00:00:00:03:01, MTU 1400: the Ethernet port below LAN
 *        or WAN when a test makes LAN a bridge or WAN a VLAN or PPPoE device (fp_ingress,
 *        fp_egress, fp_fdb); the PPPoE peer is 02:00:00:00:03:02.
 */
#ifndef FP_TEST_FIXTURE_H
#define FP_TEST_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>

#include "xdp_fastpath.h"
#include "xdp_fastpath.skel.h"
#include "flowmap.h"
#include "slottable.h"

#define FX_WAN_MTU 1400

/* Packet specs (struct pkt_spec) in the fixture's topology. Tables read better aligned: */
/* clang-format off */
#define MAC_LAN      { 2, 0, 0, 0, 1, 1 }
#define MAC_LAN_HOST { 2, 0, 0, 0, 1, 2 }
#define MAC_WAN      { 2, 0, 0, 0, 2, 1 }
#define MAC_WAN_HOST { 2, 0, 0, 0, 2, 2 }
#define MAC_PORT     { 2, 0, 0, 0, 3, 1 }
#define MAC_PEER     { 2, 0, 0, 0, 3, 2 }
#define MAC_OTHER    { 2, 0, 0, 0, 1, 9 }
#define MAC_BCAST    { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff }
/* Frames as they arrive from the LAN host or the WAN host, and leave towards them. */
#define FROM_LAN .dmac = MAC_LAN, .smac = MAC_LAN_HOST
#define FROM_WAN .dmac = MAC_WAN, .smac = MAC_WAN_HOST
#define TO_WAN   .dmac = MAC_WAN_HOST, .smac = MAC_WAN
#define TO_LAN   .dmac = MAC_LAN_HOST, .smac = MAC_LAN
/* The connection most tests use: LAN client -> WAN server, and as masquerade sends it. */
#define CLI4          .family = 4, .saddr = "198.18.1.2", .daddr = "198.19.2.2", .sport = 40000, .dport = 443
#define CLI4_SNAT_OUT .family = 4, .saddr = "198.19.2.1", .daddr = "198.19.2.2", .sport = 61000, .dport = 443
#define CLI6          .family = 6, .saddr = "2001:2:0:1::2", .daddr = "2001:2:0:2::2", .sport = 40000, .dport = 443
/* clang-format on */

extern const uint8_t fx_lan_mac[6], fx_lan_host_mac[6], fx_wan_mac[6], fx_wan_host_mac[6];
extern const uint8_t fx_port_mac[6], fx_peer_mac[6];

#define FX_SLOTS 4096 /* each table's slots */

struct fixture {
	struct xdp_fastpath *skel;
	struct fp_slots slots4; /* fp_flows4, mapped */
	struct fp_slots slots6; /* fp_flows6, mapped */
	int prog_fd;		/* the XDP entry point */
	int prog_tc_fd;		/* the tc entry point */
	int lan_ifindex, wan_ifindex, port_ifindex;
	int nr_cpus;
	uint32_t kernel; /* FP_KERNEL_* the program was loaded with */
	/* The datapath's clock (all 0 without FP_KERNEL_JIFFIES, or if it did not calibrate):
	 * fx_set_config() writes it into a config that has none. */
	struct fp_clock clock;
};

extern struct fixture fx;

/* Enters a new network namespace, builds the topology, loads the program. */
void fx_setup(void);
void fx_teardown(void);
/* Loads the program again, for a kernel with these FP_KERNEL_* features (a fallback). */
void fx_load(uint32_t kernel);
/* Runs a shell command in the fixture's namespace; dies if it fails. */
void fx_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Empties the flow and L2 maps, restores the config (gen 1, no lease) and the tx ports. */
void fx_reset(void);
void fx_set_config(const struct fp_config *cfg);
void fx_get_config(struct fp_config *cfg);
void fx_add_flow4(const struct fp_flow_key4 *key, const struct fp_flow4 *flow);
/* An IPv6 flow: its entry, its translation (fp_nat6), and with meta.nh_gen its resolved
 * next hop's context (fp_nh_ctx). */
void fx_add_flow6(const struct fp_flow_key6 *key, const struct fp_flow6_full *full);
/* The conntrack mark of a flow with FP_FLOW_MARK (fp_marks4). */
void fx_set_mark4(const struct fp_flow_key4 *key, uint32_t mark);
bool fx_get_flow4(const struct fp_flow_key4 *key, struct fp_flow4 *flow);
/* An IPv4 flow's slot state (FP_SLOT_*), -1 if it has none; and setting it. */
int fx_get_flow4_state(const struct fp_flow_key4 *key);
void fx_set_flow4_state(const struct fp_flow_key4 *key, uint8_t state);
bool fx_get_flow6(const struct fp_flow_key6 *key, struct fp_flow6_full *full);
void fx_del_tx_port(int ifindex);
void fx_add_ingress(const struct fp_ingress_key *key, const struct fp_ingress *upper);
void fx_add_egress(uint32_t upper, const struct fp_egress *egress);
void fx_add_fdb(uint32_t bridge, const uint8_t mac[6], uint32_t port);

/* Runs one frame through the program; returns the XDP verdict, output in out/out_len.
 * Over the wire (wire.c), FX_UNDELIVERABLE if the frame does not get through the wire to the
 * program (over the port's MTU) or from it (a tagged runt the stack drops). */
#define FX_UNDELIVERABLE (-1)
int fx_run(const uint8_t *in, uint32_t in_len, int ingress, uint8_t *out, uint32_t *out_len);
/* Runs one frame through the tc entry point as an skb arriving on @ingress; a GRO
 * aggregate if @gso_size. Returns the tc verdict (TC_ACT_*). */
int fx_run_tc(const uint8_t *in, uint32_t in_len, int ingress, uint16_t gso_size, uint8_t *out,
	      uint32_t *out_len);
/* Sums the per-CPU stats. */
void fx_read_stats(uint64_t stats[FP_STAT_MAX]);

uint64_t fx_now_ns(void);

#endif
