// SPDX-License-Identifier: GPL-2.0-only
/*
 * Where the datapath runs on an interface. XDP in the driver (native) sees frames before
 * the kernel allocates anything; generic XDP runs on skbs and turns the device's GRO off;
 * the tc ingress hook sees skbs after GRO, and forwards a TCP connection's aggregates whole.
 * Split (--mode split): native XDP for everything but TCP, which it passes to the kernel's
 * GRO for the tc hook (fp_ports, FP_PORT_TCP_TO_TC).
 *
 * What keeps a program attached after the command exits is pinned beside the maps:
 *   link_IFINDEX  the XDP bpf_link (native or generic)
 *   tcx_IFINDEX   the tc program's tcx bpf_link (Linux 6.6)
 *   tc_IFINDEX    the tc program itself, attached as a clsact filter (before 6.6), which
 *                 has no link: the filter is ours at FP_TC_HANDLE and FP_TC_PRIORITY
 * Removing a link's pin and detaching it, or deleting the filter, detaches the program.
 */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/socket.h>
#include <linux/ethtool.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "hooks.h"
#include "instance.h"
#include "steer.h"
#include "topology.h"
#include "veth_peer.h"
#include "xdp_features.h"

/* Linux 6.6's tcx, beyond the uapi headers of Debian 12 (6.1). */
#define FP_BPF_TCX_INGRESS	46 /* enum bpf_attach_type */
#define FP_BPF_LINK_TYPE_TCX	11 /* enum bpf_link_type */
#define FP_NETDEV_XDP_ACT_BASIC (1u << 0)

/* Our clsact filter: first in line, so that the fastpath sees packets before others. */
#define FP_TC_HANDLE   0xfa57
#define FP_TC_PRIORITY 1

const char *fp_hook_name(enum fp_hook hook)
{
	switch (hook) {
	case FP_HOOK_NATIVE:
		return "native";
	case FP_HOOK_GENERIC:
		return "generic";
	case FP_HOOK_TC:
		return "tc";
	case FP_HOOK_SPLIT:
		return "split";
	case FP_HOOK_AUTO:
		break;
	}
	return "auto";
}

/* The pin for @ifindex; an empty path (no such file) if it does not fit. */
static void pin_path(const struct fp_instance *inst, const char *kind, int ifindex, char *buf,
		     size_t len)
{
	if (snprintf(buf, len, "%s/%s_%d", inst->pin_dir, kind, ifindex) >= (int)len)
		buf[0] = '\0';
}

static bool pinned(const struct fp_instance *inst, const char *kind, int ifindex)
{
	char path[PATH_MAX];

	pin_path(inst, kind, ifindex, path, sizeof(path));
	return path[0] && !access(path, F_OK);
}

/* For a port that gets skbs (@why says why): tc, or generic XDP for a PPPoE WAN. Generic
 * XDP turns the device's GRO off, which PPPoE traffic does not get anyway. */
static enum fp_hook skb_hook(int ifindex, char *why, size_t len)
{
	size_t used = strlen(why);

	if (topology_pppoe_above(ifindex, true)) {
		snprintf(why + used, len - used,
			 "; generic XDP for its PPPoE session, which tc leaves to the kernel");
		return FP_HOOK_GENERIC;
	}
	return FP_HOOK_TC;
}

/*
 * Which ports' frames may carry partial checksums: a tap's come from a guest, whose virtio
 * NIC offloads checksums unless told not to; a virtio port's from the host, and in native
 * mode its driver takes that offload back (or refuses XDP), in generic mode not. A veth's
 * peer is attach's and the daemon's business (veth_peer.h); a NIC's are complete.
 */
bool fp_hook_partial_csum(int ifindex, enum fp_hook hook)
{
	char driver[FP_DRIVER_LEN];

	fp_port_driver(ifindex, driver);
	return !strcmp(driver, "tun") || (hook == FP_HOOK_GENERIC && !strcmp(driver, "virtio_net"));
}

/* Whether the device does GRO (ethtool's generic-receive-offload). */
static bool port_gro(int ifindex)
{
	int sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	char name[IF_NAMESIZE];
	bool on = false;

	if (sock < 0)
		return false;
	if (if_indextoname(ifindex, name))
		fp_ethtool_get(sock, name, ETHTOOL_GGRO, &on);
	close(sock);
	return on;
}

/*
 * Whether XDP on @ifindex would see a VLAN's frames without their tag: it carries a VLAN
 * tagged (topology_vlan_on; @vlan: the VLAN's device) and VLAN offload takes the tags out of
 * the frames before XDP runs (fp_strips_vlan_tags; @fix: the command that keeps them in).
 */
static bool vlan_tags_hidden(int ifindex, char vlan[IF_NAMESIZE], char *fix, size_t len)
{
	return topology_vlan_on(ifindex, vlan) == 1 && fp_strips_vlan_tags(ifindex, fix, len);
}

/* What vlan_tags_hidden found, for why: after sep, what stays in the kernel and the fix. */
static void vlan_caveat(char *buf, size_t len, const char *sep, const char *vlan, const char *fix)
{
	snprintf(buf, len, "%s%s's incoming packets pass to the kernel: %s (%s)", sep, vlan,
		 "VLAN offload takes their tags out before XDP", fix);
}

bool fp_hook_vlan_caveat(int ifindex, char *buf, size_t len)
{
	char vlan[IF_NAMESIZE], fix[160];

	if (!vlan_tags_hidden(ifindex, vlan, fix, sizeof(fix)))
		return false;
	vlan_caveat(buf, len, "", vlan, fix);
	return true;
}

/* auto's choice, but for VLAN tags that XDP would not see (fp_hook_choose). */
static enum fp_hook choose(int ifindex, char *why, size_t len)
{
	struct fp_veth_peer peer;
	char cannot[160], driver[FP_DRIVER_LEN];
	uint64_t features;
	bool veth;
	int err;

	/* A guest's TCP comes as GSO packets larger than the MTU, whole at the tc hook, and
	 * its checksums partial, which the tc hook's helpers keep right and XDP passes. */
	fp_port_driver(ifindex, driver);
	if (!strcmp(driver, "tun")) {
		snprintf(why, len, "a tap, whose guest sends partial checksums and GSO packets");
		return FP_HOOK_TC;
	}
	/* A bond's native XDP runs on its ports, where the datapath would find none of its
	 * connections (attach refuses it). Its tc hook and generic XDP see the bond's frames
	 * as the bond's. */
	if (!strcmp(driver, "bonding")) {
		snprintf(why, len, "a bond, whose native XDP would run on its ports");
		return skb_hook(ifindex, why, len);
	}
	veth = fp_veth_peer(ifindex, &peer) == 1;
	if (veth && peer.tx_checksum) {
		snprintf(why, len, "its veth peer %s transmits with checksum offload", peer.name);
		return FP_HOOK_TC;
	}
	/*
	 * A veth that does GRO (5.13+ without XDP), whose peer runs no XDP program: the tc
	 * hook forwards its TCP as GRO's aggregates and takes the peer's skbs as they are,
	 * where XDP would forward frame by frame after copying each skb into a page of its
	 * own. Measured faster for TCP and UDP alike (docs/bench/2026-12-02-veth/). Without
	 * GRO, native XDP forwards TCP faster; with an XDP program on the peer, frames go both
	 * ways (its XDP_TX, and ours to it reach its program without an skb): native.
	 */
	if (veth && !peer.xdp && fp_veth_napi_with_gro() && port_gro(ifindex)) {
		snprintf(why, len, "it does GRO, and its veth peer %s runs no XDP program",
			 peer.name);
		return skb_hook(ifindex, why, len);
	}
	/* Redirected XDP frames would be dropped there; skbs are not. */
	if (fp_takes_redirects(ifindex, cannot, sizeof(cannot)) == 0) {
		snprintf(why, len, "it cannot take redirected XDP frames (%s)",
			 cannot[0] ? cannot : "no ndo_xdp_xmit");
		return skb_hook(ifindex, why, len);
	}
	err = fp_xdp_features(ifindex, &features);
	if (!err && !(features & FP_NETDEV_XDP_ACT_BASIC)) {
		snprintf(why, len, "the driver has no native XDP");
		return skb_hook(ifindex, why, len);
	}
	/* Before 6.3 the kernel cannot say: native is tried first, tc taken if it fails. */
	snprintf(why, len, "the driver has native XDP");
	return FP_HOOK_NATIVE;
}

enum fp_hook fp_hook_choose(int ifindex, char *why, size_t len)
{
	char vlan[IF_NAMESIZE], fix[160];
	enum fp_hook hook;
	size_t used;

	/*
	 * XDP would see a VLAN's frames untagged, and pass them: the tc hook reads the tags
	 * from the skb. But it leaves PPPoE to the kernel: a session on the port itself (a
	 * WAN) keeps XDP, with a caveat. One on a VLAN stays in the kernel at either hook.
	 */
	if (!vlan_tags_hidden(ifindex, vlan, fix, sizeof(fix)))
		return choose(ifindex, why, len);
	if (topology_pppoe_above(ifindex, false)) {
		hook = choose(ifindex, why, len);
		used = strlen(why);
		if (hook != FP_HOOK_TC)
			vlan_caveat(why + used, len - used, "; ", vlan, fix);
		return hook;
	}
	snprintf(why, len, "VLAN offload takes %s's tags out of the frames before XDP, %s", vlan,
		 "and the tc hook reads them");
	used = strlen(why);
	if (topology_pppoe_above(ifindex, true))
		snprintf(why + used, len - used,
			 "; its PPPoE session stays in the kernel at either hook (%s)", fix);
	return FP_HOOK_TC;
}

/* fp_err, unless @name is NULL: a quiet try. */
#define say(name, fmt, ...)                                                                        \
	do {                                                                                       \
		if (name)                                                                          \
			fp_err(fmt, name, ##__VA_ARGS__);                                          \
	} while (0)

static int pin_fd(const struct fp_instance *inst, const char *kind, int ifindex, int fd,
		  const char *name)
{
	char path[PATH_MAX];

	pin_path(inst, kind, ifindex, path, sizeof(path));
	if (!bpf_obj_pin(fd, path))
		return 0;
	say(name, "%s: cannot pin %s: %s", path, strerror(errno));
	return -errno;
}

static int attach_xdp(const struct fp_instance *inst, int ifindex, const char *name,
		      enum fp_hook hook)
{
	bool native = hook != FP_HOOK_GENERIC;
	LIBBPF_OPTS(bpf_link_create_opts, lopts,
		    .flags = native ? XDP_FLAGS_DRV_MODE : XDP_FLAGS_SKB_MODE);
	int fd = bpf_link_create(inst->prog_fd, ifindex, BPF_XDP, &lopts), err;

	if (fd < 0) {
		err = -errno;
		if (!native && err == -EINVAL && fp_steer_capable(inst)) /* before 5.15 */
			say(name, "%s: this kernel's generic XDP does not take --steer's cpumap "
				  "(Linux 5.15+ does): use --mode tc, or detach all and attach "
				  "without it");
		else
			say(name, "%s: attaching in %s mode failed: %s%s",
			    native ? "native" : "generic", strerror(-err),
			    native ? " (try --mode tc or --mode generic)" : "");
		return err;
	}
	err = pin_fd(inst, "link", ifindex, fd, name);
	if (err)
		bpf_link_detach(fd);
	close(fd);
	return err;
}

static int attach_clsact(const struct fp_instance *inst, int ifindex)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex, .attach_point = BPF_TC_INGRESS);
	LIBBPF_OPTS(bpf_tc_opts, tc, .handle = FP_TC_HANDLE, .priority = FP_TC_PRIORITY,
		    .prog_fd = inst->prog_tc_fd);
	libbpf_print_fn_t print = libbpf_set_print(NULL); /* EEXIST is no news */
	int err = bpf_tc_hook_create(&hook);

	libbpf_set_print(print);
	if (err && err != -EEXIST)
		return err;
	return bpf_tc_attach(&hook, &tc);
}

static void detach_clsact(int ifindex)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex, .attach_point = BPF_TC_INGRESS);
	LIBBPF_OPTS(bpf_tc_opts, tc, .handle = FP_TC_HANDLE, .priority = FP_TC_PRIORITY);

	bpf_tc_detach(&hook, &tc);
}

/* What the user can do about @err from attach_clsact. */
static const char *clsact_hint(int err)
{
	if (err == -EEXIST)
		return " (another filter has priority 1 and handle 0xfa57 at its ingress)";
	/* The kernel answers ENOENT for a qdisc or classifier it has no module for, and
	 * EOPNOTSUPP without traffic control at all. */
	if (err == -ENOENT || err == -EOPNOTSUPP)
		return " (the kernel needs the clsact qdisc and the BPF classifier: sch_ingress "
		       "and cls_bpf, on OpenWrt kmod-sched-core and kmod-sched-bpf)";
	return "";
}

/* The tc program at the ingress hook: a tcx link, or a clsact filter on a kernel before
 * 6.6, which does not know tcx's attach type (-EINVAL). */
static int attach_tc(struct fp_instance *inst, int ifindex, const char *name, const char **how)
{
	int fd, err;

	err = fp_instance_load_tc(inst);
	if (err) {
		say(name,
		    "%s: loading the tc entry point failed: %s (run with -v for the verifier log)",
		    strerror(-err));
		return err;
	}
	fd = bpf_link_create(inst->prog_tc_fd, ifindex, FP_BPF_TCX_INGRESS, NULL);
	if (fd >= 0) {
		*how = "tcx";
		err = pin_fd(inst, "tcx", ifindex, fd, name);
		if (err)
			bpf_link_detach(fd);
		close(fd);
		return err;
	}
	if (errno != EINVAL) {
		err = -errno;
		say(name, "%s: attaching at tc ingress failed: %s", strerror(-err));
		return err;
	}
	*how = "clsact";
	err = attach_clsact(inst, ifindex);
	if (err) {
		say(name, "%s: attaching a clsact filter failed: %s%s", strerror(-err),
		    clsact_hint(err));
		return err;
	}
	err = pin_fd(inst, "tc", ifindex, inst->prog_tc_fd, name);
	if (err)
		detach_clsact(ifindex);
	return err;
}

/* @flags (FP_PORT_*) for @ifindex. */
static int set_port_flags(const struct fp_instance *inst, int ifindex, const char *name,
			  uint32_t flags)
{
	uint32_t key = ifindex;

	if (bpf_map_update_elem(inst->ports_fd, &key, &flags, 0)) {
		int err = -errno;

		say(name, "%s: cannot write its port flags: %s", strerror(errno));
		return err;
	}
	return 0;
}

/* The config flags that make the datapath look up fp_ports for @port_flags. */
static uint32_t config_flags_for(uint32_t port_flags)
{
	return (port_flags & FP_PORT_TCP_TO_TC ? FP_CONFIG_TCP_TO_TC : 0) |
	       (port_flags & FP_PORT_PARTIAL_CSUM ? FP_CONFIG_PARTIAL_CSUM : 0);
}

static void add_config_flags(struct fp_config *cfg, void *flags)
{
	cfg->flags |= *(uint32_t *)flags;
}

/* @flags (FP_PORT_*) for @ifindex, and the config flags that make the datapath look them
 * up. The daemon keeps those from then on (fp_hook_config_flags). */
static int set_port(const struct fp_instance *inst, int ifindex, const char *name, uint32_t flags)
{
	uint32_t config_flags = config_flags_for(flags);
	int err;

	if (!flags)
		return 0;
	err = set_port_flags(inst, ifindex, name, flags);
	if (err || !config_flags)
		return err;
	err = fp_change_config(inst, add_config_flags, &config_flags);
	if (err)
		say(name, "%s: cannot write the configuration: %s", strerror(-err));
	return err;
}

int fp_hook_attach(struct fp_instance *inst, int ifindex, const char *name, enum fp_hook hook,
		   const char **how)
{
	uint32_t flags = 0;
	int err;

	*how = NULL;
	if (hook == FP_HOOK_TC)
		return attach_tc(inst, ifindex, name, how);
	err = attach_xdp(inst, ifindex, name, hook);
	if (err)
		return err;
	if (hook == FP_HOOK_GENERIC)
		flags |= FP_PORT_GENERIC;
	if (fp_hook_partial_csum(ifindex, hook))
		flags |= FP_PORT_PARTIAL_CSUM;
	if (hook == FP_HOOK_SPLIT) {
		flags |= FP_PORT_TCP_TO_TC;
		err = attach_tc(inst, ifindex, name, how);
	}
	if (!err)
		err = set_port(inst, ifindex, name, flags);
	if (err)
		fp_hook_detach(inst, ifindex);
	return err;
}

void fp_hook_detach(const struct fp_instance *inst, int ifindex)
{
	static const char *const links[] = {"link", "tcx"};
	char path[PATH_MAX];
	uint32_t key = ifindex;
	int fd;

	for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
		pin_path(inst, links[i], ifindex, path, sizeof(path));
		fd = bpf_obj_get(path);
		if (fd >= 0) {
			bpf_link_detach(fd);
			close(fd);
		}
		unlink(path);
	}
	if (pinned(inst, "tc", ifindex))
		detach_clsact(ifindex);
	fp_hook_forget(inst, ifindex);
	bpf_map_delete_elem(inst->ports_fd, &key);
}

void fp_hook_forget(const struct fp_instance *inst, int ifindex)
{
	static const char *const kinds[] = {"link", "tcx", "tc"};
	char path[PATH_MAX];

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		pin_path(inst, kinds[i], ifindex, path, sizeof(path));
		unlink(path);
	}
	fp_run_path(inst, "hook", ifindex, path, sizeof(path));
	unlink(path);
}

void fp_hook_note(const struct fp_instance *inst, int ifindex, const char *why)
{
	char path[PATH_MAX];
	int fd;

	fp_run_path(inst, "hook", ifindex, path, sizeof(path));
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return; /* status then says no more than the hook */
	if (write(fd, why, strlen(why)) < 0)
		fp_log(LOG_WARNING, "%s: %s", path, strerror(errno));
	close(fd);
}

void fp_hook_why(const struct fp_instance *inst, int ifindex, char *buf, size_t len)
{
	char path[PATH_MAX];
	ssize_t n = -1;
	int fd;

	fp_run_path(inst, "hook", ifindex, path, sizeof(path));
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, buf, len - 1);
		close(fd);
	}
	buf[n > 0 ? n : 0] = '\0';
	for (char *c = buf; *c; c++) /* one line of text, whatever the file holds */
		if (*c < ' ' || *c == '"' || *c == '\\')
			*c = ' ';
}

int fp_hook_by_name(const char *name, size_t len)
{
	for (int hook = FP_HOOK_AUTO; hook <= FP_HOOK_SPLIT; hook++)
		if (strlen(fp_hook_name(hook)) == len && !strncmp(name, fp_hook_name(hook), len))
			return hook;
	return -1;
}

enum fp_hook fp_hook_requested(const struct fp_instance *inst, int ifindex)
{
	static const char prefix[] = "--mode ";
	char why[FP_HOOK_WHY_LEN];
	const char *mode = why + sizeof(prefix) - 1;
	int hook;

	/* "--mode tc", or "--mode native; " and its caveats (fp_iface_choose_hook) */
	fp_hook_why(inst, ifindex, why, sizeof(why));
	if (strncmp(why, prefix, sizeof(prefix) - 1))
		return FP_HOOK_AUTO;
	hook = fp_hook_by_name(mode, strcspn(mode, ";"));
	return hook < 0 ? FP_HOOK_AUTO : hook;
}

bool fp_hook_pinned(const struct fp_instance *inst, int ifindex)
{
	return pinned(inst, "link", ifindex) || pinned(inst, "tcx", ifindex) ||
	       pinned(inst, "tc", ifindex);
}

int fp_hook_pinned_all(const struct fp_instance *inst, int *ifindexes, int max)
{
	DIR *dir = opendir(inst->pin_dir);
	struct dirent *de;
	int n = 0;

	if (!dir)
		return 0;
	while ((de = readdir(dir)) && n < max) {
		bool listed = false;
		int ifindex;

		if (sscanf(de->d_name, "link_%d", &ifindex) != 1 &&
		    sscanf(de->d_name, "tcx_%d", &ifindex) != 1 &&
		    sscanf(de->d_name, "tc_%d", &ifindex) != 1)
			continue;
		for (int i = 0; i < n; i++) /* a split port has two pins */
			listed |= ifindexes[i] == ifindex;
		if (!listed)
			ifindexes[n++] = ifindex;
	}
	closedir(dir);
	return n;
}

uint32_t fp_hook_config_flags(const struct fp_instance *inst)
{
	uint32_t key, *prev = NULL, flags, any = 0;

	while (!bpf_map_get_next_key(inst->ports_fd, prev, &key)) {
		if (!bpf_map_lookup_elem(inst->ports_fd, &key, &flags))
			any |= flags;
		prev = &key;
	}
	return config_flags_for(any);
}

/* The XDP hook the instance attached to @ifindex: native, generic, or FP_HOOK_AUTO. */
static enum fp_hook xdp_hook(int ifindex)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);

	if (bpf_xdp_query(ifindex, 0, &q))
		return FP_HOOK_AUTO;
	if (q.attach_mode == XDP_ATTACHED_SKB)
		return FP_HOOK_GENERIC;
	return q.attach_mode == XDP_ATTACHED_DRV ? FP_HOOK_NATIVE : FP_HOOK_AUTO;
}

enum fp_hook fp_hook_of(const struct fp_instance *inst, int ifindex)
{
	bool tc = pinned(inst, "tcx", ifindex) || pinned(inst, "tc", ifindex);

	if (!pinned(inst, "link", ifindex))
		return tc ? FP_HOOK_TC : FP_HOOK_AUTO;
	return tc ? FP_HOOK_SPLIT : xdp_hook(ifindex);
}

const char *fp_hook_describe(const struct fp_instance *inst, int ifindex)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex, .attach_point = BPF_TC_INGRESS);
	LIBBPF_OPTS(bpf_tc_opts, tc, .handle = FP_TC_HANDLE, .priority = FP_TC_PRIORITY);
	enum fp_hook is = fp_hook_of(inst, ifindex);
	bool tcx = pinned(inst, "tcx", ifindex);

	switch (is) {
	case FP_HOOK_NATIVE:
	case FP_HOOK_GENERIC:
		return fp_hook_name(is);
	case FP_HOOK_TC:
	case FP_HOOK_SPLIT:
		/* A clsact filter has no link: is it still there, with our program? */
		if (!tcx && (bpf_tc_query(&hook, &tc) || tc.prog_id != inst->prog_tc_id))
			return "detached (its clsact filter is gone)";
		if (is == FP_HOOK_TC)
			return tcx ? "tc (tcx)" : "tc (clsact)";
		return tcx ? "native + tc (tcx) for TCP" : "native + tc (clsact) for TCP";
	case FP_HOOK_AUTO:
		break;
	}
	return "detached";
}
