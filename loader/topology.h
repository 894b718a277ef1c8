/* SPDX-License-Identifier: GPL-2.0-only */
/* Layer 2 below routed interfaces: bridges, VLANs, PPPoE (topology.c, bpf/l2.h). */
#ifndef FP_TOPOLOGY_H
#define FP_TOPOLOGY_H

#include <stdbool.h>
#include <stdint.h>

#include "common.h"

struct mnl_socket;
struct topo_maps;

#define FP_PPPOE_PROC "/proc/net/pppoe"
#define FP_SYSFS_NET  "/sys/class/net"

struct fp_topology {
	struct mnl_socket *nl;
	uint32_t seq;
	char *buf;
	const char *pppoe_path; /* FP_PPPOE_PROC; tests point it elsewhere */
	/* Tests: RTM_NEWLINK (and bridge RTM_NEWNEIGH) messages to read instead of the
	 * kernel's link and FDB dumps (this kernel can make neither VLAN nor ppp devices). */
	const void *link_dump;
	size_t link_dump_len;
	/* Upper devices whose traffic arrives on attached ports: flows may be keyed by them. */
	uint32_t served[FP_MAX_L2_IFACES];
	int nr_served;
	bool bridge_ports; /* some attached interface is a bridge port (FP_CONFIG_BRIDGE_PORTS) */
	struct topo_maps *maps; /* the maps' contents as last written */
	bool rewrite;		/* a map write failed: write them all at the next sync */
	bool ask_ports;		/* ask the attached ports about their hooks and features */
	/* The VLANs (port << 16 | VLAN id) on ports at XDP whose tags XDP does not see, as
	 * last warned about */
	uint64_t hidden_tags[FP_MAX_L2_IFACES];
	int nr_hidden_tags;
	bool pppoe_ambiguous_logged;
};

int topology_open(struct fp_topology *t);
void topology_close(struct fp_topology *t);
/*
 * Reads links, the FDBs of bridges with attached ports and the PPPoE sessions, and writes
 * fp_ingress, fp_egress and fp_fdb to match for the attached ports. Returns 1 if a map
 * changed (cached next hops may be stale: bump the generation), 0 if not, or -errno.
 */
int topology_sync(struct fp_topology *t, const struct fp_instance *inst, const uint32_t *ports,
		  int nr_ports);

/* Whether port carries a VLAN's tagged frames: an 802.1Q device on it, or a VLAN it is a
 * tagged member of in its VLAN-filtering bridge. 1 with the first VLAN's device's name, 0,
 * or -errno. */
int topology_vlan_on(int port, char *name); /* name: IF_NAMESIZE bytes */
/* Whether upper is a device above port that the last sync served (fp_ingress). */
bool topology_upper_on_port(const struct fp_topology *t, uint32_t upper, uint32_t port);

/*
 * Whether ifindex is not an Ethernet port the datapath can be attached to: a device above
 * ports (a bridge, a VLAN, a ppp device), a port of a bond or a team, a link without
 * Ethernet headers (a tun, WireGuard, an IP tunnel, loopback) or a DSA switch's conduit.
 * *why says so and what to attach to instead, or is NULL. 0 or -errno.
 */
int topology_not_a_port(int ifindex, const char **why);

/* Whether ifindex is a DSA switch's conduit (its CPU port): @sysfs_net (FP_SYSFS_NET) has
 * dsa/tagging under it, and names the device by this ifindex. */
bool topology_dsa_conduit(const char *sysfs_net, int ifindex);

/* Whether a PPPoE session runs over @port, or with @vlans over an 802.1Q device on it
 * (FP_PPPOE_PROC). */
bool topology_pppoe_above(int port, bool vlans);

#endif
