// SPDX-License-Identifier: GPL-2.0-only
/*
 * One interface attached to an instance, or detached from it: the checks that refuse it,
 * the hook it gets, its egress map entry. attach uses them, and the daemon, which attaches
 * the ports it awaits when they come (reattach.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <net/if.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "flowmap.h"
#include "hooks.h"
#include "port_attach.h"
#include "qdisc.h"
#include "topology.h"
#include "veth_peer.h"
#include "xdp_features.h"

/* A shaper on the interface would be bypassed: refuse unless --allow-shaping. */
static int check_unshaped(const struct fp_iface *ifc)
{
	char kind[FP_QDISC_KIND_LEN];
	int err = fp_shaping_qdisc(ifc->ifindex, kind, sizeof(kind));

	if (err < 0) {
		fp_err("%s: cannot read its qdiscs: %s", ifc->name, strerror(-err));
		return err;
	}
	if (err) {
		fp_err("%s has a shaping qdisc (%s), which offloaded flows would bypass; "
		       "--allow-shaping attaches anyway",
		       ifc->name, kind);
		return -EBUSY;
	}
	return 0;
}

/* The fastpath runs on Ethernet ports; the daemon follows the devices above them. */
static int check_port(const struct fp_iface *ifc)
{
	const char *why;
	int err = topology_not_a_port(ifc->ifindex, &why);

	if (err) {
		fp_err("%s: cannot read its link: %s", ifc->name, strerror(-err));
		return err;
	}
	if (why) {
		fp_err("%s is %s", ifc->name, why);
		return -EINVAL;
	}
	return 0;
}

/*
 * Every attached interface is a redirect target too. A native-mode redirect to a device
 * whose driver cannot take XDP frames drops them, counted nowhere of ours; a generic-mode
 * instance redirects skbs, which any device takes.
 */
static int check_redirect_target(const struct fp_iface *ifc)
{
	char why[160];
	int takes;

	if (ifc->hook != FP_HOOK_NATIVE && ifc->hook != FP_HOOK_SPLIT)
		return 0;
	takes = fp_takes_redirects(ifc->ifindex, why, sizeof(why));
	if (takes == -EOPNOTSUPP || takes == 1)
		return 0; /* -EOPNOTSUPP: the kernel cannot say, as before it could */
	if (takes < 0) {
		fp_err("%s: cannot read its XDP features: %s", ifc->name, strerror(-takes));
		return takes;
	}
	fp_err("%s cannot take redirected XDP frames (%s): use --mode tc or --mode generic",
	       ifc->name, why[0] ? why : "no ndo_xdp_xmit");
	return -EOPNOTSUPP;
}

/*
 * A bond's native XDP runs on its ports, which see the bond's frames as theirs: the datapath
 * would find none of its connections there, and pass every packet arriving by it.
 */
static int check_bond(const struct fp_iface *ifc)
{
	char driver[FP_DRIVER_LEN];

	if (ifc->hook != FP_HOOK_NATIVE && ifc->hook != FP_HOOK_SPLIT)
		return 0;
	fp_port_driver(ifc->ifindex, driver);
	if (strcmp(driver, "bonding"))
		return 0;
	fp_err("%s is a bond, whose native XDP runs on its ports, where no connection of the "
	       "bond's is found: use --mode tc or --mode generic",
	       ifc->name);
	return -EOPNOTSUPP;
}

/*
 * A veth whose peer transmits with checksum offload hands over packets with partial
 * checksums, which an XDP redirect forwards broken (veth_peer.h): refused, naming the fix
 * and the tc hook, which keeps them right. The daemon keeps the connections of a peer that
 * turns it on later in the kernel.
 */
static int check_peer_checksum(const struct fp_iface *ifc)
{
	struct fp_veth_peer peer;
	char fix[128];
	int err;

	if (ifc->hook == FP_HOOK_TC)
		return 0;
	err = fp_veth_peer(ifc->ifindex, &peer);

	if (err == -ENOENT) {
		fp_log(LOG_WARNING,
		       "%s: cannot find the namespace of its veth peer to check it: if the peer "
		       "transmits with checksum offload, turn that off or its connections stall",
		       ifc->name);
		return 0;
	}
	if (err < 0) {
		fp_err("%s: cannot read its veth peer: %s", ifc->name, strerror(-err));
		return err;
	}
	if (!err || !peer.tx_checksum)
		return 0;
	fp_veth_peer_ethtool(&peer, "tx off", fix, sizeof(fix));
	fp_err("%s: its veth peer %s transmits with checksum offload, whose partial checksums "
	       "XDP would forward broken; use --mode tc, or turn it off first: %s",
	       ifc->name, peer.name, fix);
	return -EOPNOTSUPP;
}

/* Refuses an interface the instance is attached to already, and one that has an XDP
 * program of another for the XDP hooks. The tc hook leaves other programs be. */
static int check_free(const struct fp_instance *inst, const struct fp_iface *ifc)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	int err;

	if (inst && fp_hook_pinned(inst, ifc->ifindex)) {
		fp_err("%s: already attached", ifc->name);
		return -EEXIST;
	}
	if (ifc->hook == FP_HOOK_TC)
		return 0;
	err = bpf_xdp_query(ifc->ifindex, 0, &q);
	if (err) {
		fp_err("%s: cannot query its XDP state: %s", ifc->name, strerror(-err));
		return err;
	}
	if (q.attach_mode == XDP_ATTACHED_NONE)
		return 0;
	if (inst && (q.prog_id == inst->prog_id || q.drv_prog_id == inst->prog_id ||
		     q.skb_prog_id == inst->prog_id)) {
		fp_err("%s: already attached", ifc->name);
		return -EEXIST;
	}
	fp_err("%s: already has an XDP program (id %u); remove it first, e.g. "
	       "'ip link set dev %s xdp off'",
	       ifc->name, q.prog_id ? q.prog_id : (q.drv_prog_id ? q.drv_prog_id : q.skb_prog_id),
	       ifc->name);
	return -EBUSY;
}

int fp_iface_check(const struct fp_instance *inst, const struct fp_iface *ifc, bool allow_shaping)
{
	int err;

	if (ifc->ifindex > FP_MAX_FLOW_IFINDEX) {
		fp_err("%s: its ifindex %u is larger than the flow keys hold (%u)", ifc->name,
		       ifc->ifindex, FP_MAX_FLOW_IFINDEX);
		return -ERANGE;
	}
	err = check_port(ifc);
	if (!err)
		err = check_bond(ifc);
	if (!err)
		err = check_redirect_target(ifc);
	if (!err)
		err = check_peer_checksum(ifc);
	if (!err)
		err = check_free(inst, ifc);
	if (!err && !allow_shaping)
		err = check_unshaped(ifc);
	return err;
}

/* What XDP, where --mode puts it, leaves to the kernel on ifc: "" if nothing. */
static void xdp_caveats(struct fp_iface *ifc)
{
	char *note = ifc->caveats, vlan[FP_HOOK_WHY_LEN];
	size_t len = sizeof(ifc->caveats), used;

	note[0] = '\0';
	/* A tap, or virtio in generic mode */
	if (fp_hook_partial_csum(ifc->ifindex, ifc->hook))
		snprintf(note, len, "its packets with partial checksums pass to the kernel");
	used = strlen(note);
	if (fp_hook_vlan_caveat(ifc->ifindex, vlan, sizeof(vlan)))
		snprintf(note + used, len - used, "%s%s", used ? "; " : "", vlan);
}

void fp_iface_choose_hook(struct fp_iface *ifc, int mode)
{
	if (mode == FP_HOOK_AUTO) {
		ifc->hook = fp_hook_choose(ifc->ifindex, ifc->why, sizeof(ifc->why));
		return;
	}
	ifc->hook = mode;
	if (mode != FP_HOOK_TC)
		xdp_caveats(ifc);
	snprintf(ifc->why, sizeof(ifc->why), "--mode %s%s%s", fp_hook_name(mode),
		 ifc->caveats[0] ? "; " : "", ifc->caveats);
}

int fp_iface_attach(struct fp_instance *inst, struct fp_iface *ifc, int mode)
{
	uint32_t ifindex = ifc->ifindex;
	int err;

	/* auto's XDP may fail: native on a kernel that cannot say whether the driver has it
	 * (before 6.3), generic beside --steer before 5.15. Tried quietly; tc if it fails. */
	if (mode == FP_HOOK_AUTO && ifc->hook != FP_HOOK_TC) {
		err = fp_hook_attach(inst, ifc->ifindex, NULL, ifc->hook, &ifc->how);
		if (err) {
			snprintf(ifc->why, sizeof(ifc->why), "%s XDP failed: %s",
				 fp_hook_name(ifc->hook), strerror(-err));
			ifc->hook = FP_HOOK_TC;
		}
	}
	if (mode != FP_HOOK_AUTO || ifc->hook == FP_HOOK_TC) {
		err = fp_hook_attach(inst, ifc->ifindex, ifc->name, ifc->hook, &ifc->how);
		if (err)
			return err;
	}
	fp_hook_note(inst, ifc->ifindex, ifc->why);
	if (bpf_map_update_elem(inst->tx_ports_fd, &ifindex, &ifindex, 0)) {
		err = -errno;
		fp_err("%s: cannot add it to the egress map: %s", ifc->name, strerror(errno));
		return err;
	}
	return 0;
}

void fp_iface_detach(const struct fp_instance *inst, int ifindex)
{
	uint32_t key = ifindex;

	fp_hook_detach(inst, ifindex);
	bpf_map_delete_elem(inst->tx_ports_fd, &key);
	fp_flows_delete_ifindex(inst, ifindex);
}
