/* SPDX-License-Identifier: GPL-2.0-only */
/* A veth's peer, read in its own network namespace (veth_peer.c). */
#ifndef FP_VETH_PEER_H
#define FP_VETH_PEER_H

#include <stdbool.h>
#include <limits.h>
#include <stddef.h>
#include <net/if.h>

struct fp_veth_peer {
	int ifindex;		   /* in its namespace */
	char name[IF_NAMESIZE];	   /* in its namespace */
	char netns[NAME_MAX + 16]; /* "" (ours), a name under /run/netns, or "of pid N" */
	bool tx_checksum;	   /* it transmits with checksum offload */
	bool gro;		   /* GRO is on: NAPI, and redirected frames, from Linux 5.13 */
	bool xdp;		   /* it runs an XDP program: NAPI on every kernel */
	bool tx_vlan;		   /* it transmits with VLAN offload: tags beside the frames */
};

/*
 * Whether ifindex is a veth, and if so its peer: 1 with *peer filled in, 0 for another
 * kind of device, -ENOENT for a veth whose peer's namespace this process cannot find (no
 * name under /run/netns and no process in it), or another -errno.
 *
 * A peer that transmits with checksum offload hands the veth CHECKSUM_PARTIAL packets:
 * their TCP or UDP checksum field holds only the pseudo-header's sum, to be completed by
 * whoever sends them on. An XDP redirect (native or generic) loses that state or rewrites
 * the field as if it were complete, so the receiver drops every such packet.
 */
int fp_veth_peer(int ifindex, struct fp_veth_peer *peer);

/* The command, run from our namespace, that sets the peer's ethtool feature (e.g. "tx off"). */
void fp_veth_peer_ethtool(const struct fp_veth_peer *peer, const char *setting, char *buf,
			  size_t len);

#endif
