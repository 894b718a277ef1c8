// SPDX-License-Identifier: GPL-2.0-only
/*
 * attach and detach. Each interface gets the datapath at one hook (hooks.c: native or
 * generic XDP, or tc), pinned beside the maps so that it stays attached after the command
 * exits. A command that fails undoes what it did.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>
#include <net/if.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "commands.h"
#include "common.h"
#include "daemon.h"
#include "flowmap.h"
#include "hooks.h"
#include "instance.h"
#include "qdisc.h"
#include "slottable.h"
#include "steer.h"
#include "topology.h"
#include "veth_peer.h"
#include "xdp_features.h"

#define MAX_IFACES FP_MAX_TX_PORTS

struct iface {
	const char *name;
	int ifindex;
	enum fp_hook hook;	       /* what it is attached at */
	const char *how;	       /* tc: "tcx" or "clsact" */
	char why[FP_HOOK_WHY_LEN];     /* --mode auto: why this hook */
	char caveats[FP_HOOK_WHY_LEN]; /* --mode at XDP: what it leaves to the kernel there */
};

static int resolve_ifaces(int argc, char **argv, struct iface *ifs)
{
	if (argc > MAX_IFACES) {
		fp_err("at most %d interfaces", MAX_IFACES);
		return -E2BIG;
	}
	for (int i = 0; i < argc; i++) {
		ifs[i] = (struct iface){.name = argv[i]};
		ifs[i].ifindex = if_nametoindex(argv[i]);
		if (!ifs[i].ifindex) {
			fp_err("%s: no such interface (see 'ip link show')", argv[i]);
			return -ENODEV;
		}
		if (ifs[i].ifindex > FP_MAX_FLOW_IFINDEX) {
			fp_err("%s: its ifindex %u is larger than the flow keys hold (%u)", argv[i],
			       ifs[i].ifindex, FP_MAX_FLOW_IFINDEX);
			return -ERANGE;
		}
		for (int j = 0; j < i; j++) {
			if (ifs[j].ifindex == ifs[i].ifindex) {
				fp_err("%s: named twice", argv[i]);
				return -EINVAL;
			}
		}
	}
	return 0;
}

/* A shaper on the interface would be bypassed: refuse unless --allow-shaping. */
static int check_unshaped(const struct iface *ifc)
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
static int check_port(const struct iface *ifc)
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
static int check_redirect_target(const struct iface *ifc)
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
static int check_bond(const struct iface *ifc)
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
static int check_peer_checksum(const struct iface *ifc)
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
static int check_free(const struct fp_instance *inst, const struct iface *ifc)
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

static bool all_attached_here(const struct fp_instance *inst, const struct iface *ifs, int n)
{
	for (int i = 0; i < n; i++)
		if (!fp_hook_pinned(inst, ifs[i].ifindex))
			return false;
	return true;
}

/* What XDP, where --mode puts it, leaves to the kernel on ifc: "" if nothing. */
static void xdp_caveats(struct iface *ifc)
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

/* The hook each interface gets: --mode's, or what auto chooses for it. */
static void choose_hook(struct iface *ifc, int mode)
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

static int attach_one(struct fp_instance *inst, struct iface *ifc, int mode)
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

/* Detaches one interface: its hook and pin, egress entry and its flows. */
static void detach_ifindex(const struct fp_instance *inst, int ifindex)
{
	uint32_t key = ifindex;

	fp_hook_detach(inst, ifindex);
	bpf_map_delete_elem(inst->tx_ports_fd, &key);
	fp_flows_delete_ifindex(inst, ifindex);
}

/* Detaches every interface and removes the instance (its daemon stopped already). */
static void remove_instance(struct fp_instance *inst, const char *pin_dir)
{
	int linked[MAX_IFACES], nr_linked = fp_hook_pinned_all(inst, linked, MAX_IFACES);

	for (int i = 0; i < nr_linked; i++) {
		char name[IF_NAMESIZE];

		fp_ifname(linked[i], name);
		detach_ifindex(inst, linked[i]);
		printf("%s: detached\n", name);
	}
	fp_instance_close(inst);
	fp_instance_unpin(pin_dir);
	inst->pin_dir[0] = '\0';
}

/* --flows given for an instance whose tables, sized when it was made, have another size. */
static bool flows_differ(const struct fp_instance *inst, const struct fp_options *opt)
{
	return inst->pin_dir[0] && opt->flows && opt->flows != inst->slots4->capacity;
}

static bool named(const struct iface *ifs, int n, int ifindex)
{
	for (int i = 0; i < n; i++)
		if (ifs[i].ifindex == ifindex)
			return true;
	return false;
}

/*
 * A supervisor's attach (--foreground: procd, systemd) names every interface the instance
 * is to have. procd starts the daemon anew with the new command line when the service's
 * configuration changes, and the interfaces stay attached meanwhile: with no daemon
 * running, the instance is made what the command line says. An interface it no longer
 * names is detached; what is fixed when the program is loaded (another --flows, --steer
 * for an instance loaded without) takes a new instance (the old one is removed:
 * inst->pin_dir emptied); steering goes off without --steer; a named interface attached
 * already stays as it is, moved to the end of @ifs. Returns how many, at the start of
 * @ifs, are left to attach.
 */
static int supervise_instance(struct fp_instance *inst, struct iface *ifs, int n,
			      const struct fp_options *opt)
{
	int linked[MAX_IFACES], nr_linked, todo = 0, nr_kept = 0;
	struct iface kept[MAX_IFACES];

	if (flows_differ(inst, opt)) {
		printf("the flow tables change from %u to %u entries: attaching anew\n",
		       inst->slots4->capacity, opt->flows);
		remove_instance(inst, opt->pin_dir);
		return n;
	}
	if (opt->steer && !fp_steer_capable(inst)) {
		printf("--steer, which the program was loaded without: attaching anew\n");
		remove_instance(inst, opt->pin_dir);
		return n;
	}
	if (!opt->steer)
		fp_steer_disable(inst);
	nr_linked = fp_hook_pinned_all(inst, linked, MAX_IFACES);
	for (int i = 0; i < nr_linked; i++) {
		char name[IF_NAMESIZE];

		if (named(ifs, n, linked[i]))
			continue;
		fp_ifname(linked[i], name);
		detach_ifindex(inst, linked[i]);
		printf("%s: detached (no longer named)\n", name);
	}
	for (int i = 0; i < n; i++) {
		if (fp_hook_pinned(inst, ifs[i].ifindex))
			kept[nr_kept++] = ifs[i];
		else
			ifs[todo++] = ifs[i];
	}
	memcpy(&ifs[todo], kept, nr_kept * sizeof(*kept));
	return todo;
}

int cmd_attach(int argc, char **argv, struct fp_options *opt)
{
	struct iface ifs[MAX_IFACES];
	struct fp_instance inst;
	bool created = false;
	int err, lock_fd = -1, done = 0, todo;

	if (argc < 1) {
		fp_err("attach needs an interface, e.g. 'xdp-fastpath attach eth0'");
		return 2;
	}
	if (fp_check_environment(opt->pin_dir, true))
		return 1;
	if (resolve_ifaces(argc, argv, ifs))
		return 1;

	err = fp_instance_open(&inst, opt->pin_dir);
	if (err == -ENOENT) {
		inst.pin_dir[0] = '\0';
	} else if (err) {
		if (err != -EBADF)
			fp_err("cannot open %s: %s", opt->pin_dir, strerror(-err));
		return 1;
	}
	todo = argc;
	if (inst.pin_dir[0] && opt->foreground && fp_daemon_pid(&inst) <= 0) {
		lock_fd = fp_instance_lock(&inst);
		if (lock_fd < 0)
			goto out_close;
		todo = supervise_instance(&inst, ifs, argc, opt);
	}
	/*
	 * All of them attached already, but no daemon (it died, or procd or systemd restarts
	 * a foreground attach): restart the daemon, which adopts the pinned maps.
	 */
	if (inst.pin_dir[0] && all_attached_here(&inst, ifs, todo) && fp_daemon_pid(&inst) <= 0) {
		/* Not refused: the interfaces would stay attached with no daemon. */
		if (flows_differ(&inst, opt))
			fp_log(LOG_WARNING,
			       "--flows %u not applied: the flow tables keep their %u entries "
			       "until every interface is detached",
			       opt->flows, inst.slots4->capacity);
		if (opt->steer && !fp_steer_capable(&inst))
			fp_log(LOG_WARNING, "--steer not applied: the program was loaded without "
					    "it; detach every interface first");
		else if (opt->steer)
			fp_steer_enable(&inst, opt->steer_cpus); /* says why if it fails */
		for (int i = 0; i < argc; i++)
			printf("%s: already attached; restarting the sync daemon\n", ifs[i].name);
		fflush(stdout);
		err = fp_daemon_start(&inst, opt);
		fp_instance_close(&inst);
		return err ? 1 : 0;
	}
	if (flows_differ(&inst, opt)) {
		fp_err("the flow tables have %u entries, fixed when the first interface was "
		       "attached: detach every interface to change --flows",
		       inst.slots4->capacity);
		goto out_close;
	}
	/* Check every interface before changing anything. */
	for (int i = 0; i < todo; i++)
		choose_hook(&ifs[i], opt->mode);
	for (int i = 0; i < todo; i++)
		if (check_port(&ifs[i]) || check_bond(&ifs[i]) || check_redirect_target(&ifs[i]) ||
		    check_peer_checksum(&ifs[i]) ||
		    check_free(inst.pin_dir[0] ? &inst : NULL, &ifs[i]) ||
		    (!opt->allow_shaping && check_unshaped(&ifs[i])))
			goto out_close;

	if (!inst.pin_dir[0]) {
		if (fp_instance_create(&inst, opt))
			return 1;
		created = true;
	}
	if (lock_fd < 0)
		lock_fd = fp_instance_lock(&inst);
	if (lock_fd < 0)
		goto out_undo;
	if (opt->steer && fp_steer_enable(&inst, opt->steer_cpus))
		goto out_undo;
	for (; done < todo; done++) {
		if (attach_one(&inst, &ifs[done], opt->mode)) {
			done++; /* undo its partial state too */
			goto out_undo;
		}
	}
	for (int i = todo; i < argc; i++)
		printf("%s: already attached\n", ifs[i].name);
	for (int i = 0; i < todo; i++) {
		if (ifs[i].hook == FP_HOOK_TC)
			printf("%s: attached (tc hook, %s)", ifs[i].name, ifs[i].how);
		else if (ifs[i].hook == FP_HOOK_SPLIT)
			printf("%s: attached (native mode; TCP at the tc hook, %s)", ifs[i].name,
			       ifs[i].how);
		else
			printf("%s: attached (%s mode)", ifs[i].name, fp_hook_name(ifs[i].hook));
		if (opt->mode == FP_HOOK_AUTO)
			printf(": %s\n", ifs[i].why);
		else if (ifs[i].caveats[0])
			printf(": %s\n", ifs[i].caveats);
		else
			printf("\n");
	}
	fflush(stdout);

	err = fp_daemon_start(&inst, opt);
	fp_instance_close(&inst);
	return err ? 1 : 0;

out_undo:
	for (int i = 0; i < done; i++)
		detach_ifindex(&inst, ifs[i].ifindex);
	if (created)
		fp_instance_unpin(inst.pin_dir);
out_close:
	fp_instance_close(&inst);
	return 1;
}

int cmd_detach(int argc, char **argv, struct fp_options *opt)
{
	struct iface ifs[MAX_IFACES];
	int linked[MAX_IFACES];
	struct fp_instance inst;
	int err;

	if (fp_check_environment(opt->pin_dir, false))
		return 1;
	if (resolve_ifaces(argc, argv, ifs))
		return 1;
	err = fp_instance_open(&inst, opt->pin_dir);
	if (err == -ENOENT) {
		fp_err("nothing is attached (no instance at %s)", opt->pin_dir);
		return 1;
	}
	/* -EBADF, an incomplete instance: go on and remove what is left of it. */
	if (err && err != -EBADF) {
		fp_err("cannot open %s: %s", opt->pin_dir, strerror(-err));
		return 1;
	}
	if (fp_instance_lock(&inst) < 0)
		goto out;

	for (int i = 0; i < argc; i++) {
		if (!fp_hook_pinned(&inst, ifs[i].ifindex)) {
			fp_err("%s: not attached", ifs[i].name);
			goto out;
		}
	}
	for (int i = 0; i < argc; i++) {
		detach_ifindex(&inst, ifs[i].ifindex);
		printf("%s: detached\n", ifs[i].name);
	}
	if (argc > 0 && fp_hook_pinned_all(&inst, linked, MAX_IFACES) > 0)
		goto out_ok;

	/* Nothing left attached: stop the daemon and remove the instance. */
	fp_daemon_stop(&inst);
	remove_instance(&inst, opt->pin_dir);
	return 0;
out_ok:
	fp_instance_close(&inst);
	return 0;
out:
	fp_instance_close(&inst);
	return 1;
}
