/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Crafted test packets. Checksums here are always computed in full from the bytes (RFC 1071),
 * never incrementally: they are the independent reference the datapath is checked against.
 */
#ifndef FP_TEST_PACKET_H
#define FP_TEST_PACKET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PKT_MAX 4096

struct pkt_spec {
	uint8_t dmac[6], smac[6];
	uint16_t ethertype;	   /* 0: from the family */
	uint16_t vlan_id;	   /* insert an 802.1Q tag with this VLAN id (priority 0) */
	uint16_t pppoe_sid;	   /* insert a PPPoE session header with this id */
	int family;		   /* 4 or 6 */
	const char *saddr, *daddr; /* textual addresses */
	uint8_t proto;		   /* IPPROTO_TCP, IPPROTO_UDP, or another */
	uint8_t ttl;		   /* 0: 64 */
	uint8_t tos;
	uint16_t frag;	      /* IPv4 frag_off field (host order); IPv6: add a fragment header */
	uint8_t ip_opt_words; /* IPv4 options, in 32-bit words (NOPs); IPv6: a dest-opts header */
	uint16_t sport, dport;
	uint8_t tcp_flags; /* 0: ACK */
	uint16_t payload_len;
	uint16_t payload_word; /* written at payload offset 0 (network order), if payload >= 2 */
	bool udp_no_csum;      /* IPv4 UDP with checksum 0 */
	uint16_t pad_to;       /* Ethernet padding up to this frame length */
};

/* Builds the frame; returns its length. */
size_t pkt_build(const struct pkt_spec *spec, uint8_t *buf);

/* Parsed view of a built or received frame (a VLAN tag and PPPoE skipped; no options). */
struct pkt_view {
	int family;
	size_t l2_len; /* = offset of L3 */
	size_t l3_off, l4_off, l3_len;
	uint8_t proto;
};
bool pkt_view(const uint8_t *buf, size_t len, struct pkt_view *v);

/* Full recomputation checks. */
bool pkt_ipv4_csum_ok(const uint8_t *buf, size_t len);
/* L4 checksum valid (an IPv4 UDP zero checksum counts as valid). */
bool pkt_l4_csum_ok(const uint8_t *buf, size_t len);
/* Replaces the L4 checksum by the pseudo-header's sum alone, as a CHECKSUM_PARTIAL skb
 * carries it for the egress to finish; false if the frame has no TCP or UDP. */
bool pkt_l4_csum_seed(uint8_t *buf, size_t len);
/* Offset of the L4 checksum field, or 0. */
size_t pkt_l4_csum_off(const struct pkt_view *v);

uint16_t csum_fold32(uint32_t sum);
uint32_t csum_partial(const void *data, size_t len, uint32_t sum);

#endif
