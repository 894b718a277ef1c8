// SPDX-License-Identifier: GPL-2.0-only
/*
 * Where the datapath runs on an interface. XDP in the driver (native) sees frames before
 * the kernel allocates anything; generic XDP runs on skbs and turns the device's GRO off;
 * the tc ingress hook sees skbs after GRO, and forwards a TCP connection's aggregates whole.
 *
 * What keeps a program attached after the command exits is pinned beside the maps:
 *   link_IFINDEX  a bpf_link: XDP (native or generic), or tcx (tc, Linux 6.6)
 *   tc_IFINDEX    the tc program itself, attached as a clsact filter (before 6.6), which
 *                 has no link: the filter is ours at FP_TC_HANDLE and FP_TC_PRIORITY
 * Removing the link's pin and detaching it, or deleting the filter, detaches the program.
 */
#include <errno.h>
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "hooks.h"
#include "instance.h"
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

enum fp_hook fp_hook_choose(int ifindex, char *why, size_t len)
{
	struct fp_veth_peer peer;
	uint64_t features;
	int err;

	char cannot[160];

	if (fp_veth_peer(ifindex, &peer) == 1 && peer.tx_checksum) {
		snprintf(why, len, "its veth peer %s transmits with checksum offload", peer.name);
		return FP_HOOK_TC;
	}
	/* Redirected XDP frames would be dropped there; skbs are not. */
	if (fp_takes_redirects(ifindex, cannot, sizeof(cannot)) == 0) {
		snprintf(why, len, "it cannot take redirected XDP frames (%s)",
			 cannot[0] ? cannot : "no ndo_xdp_xmit");
		return FP_HOOK_TC;
	}
	err = fp_xdp_features(ifindex, &features);
	if (!err && !(features & FP_NETDEV_XDP_ACT_BASIC)) {
		snprintf(why, len, "the driver has no native XDP");
		return FP_HOOK_TC;
	}
	if (!err)
		snprintf(why, len, "the driver has native XDP");
	else /* before 6.3 the kernel cannot say: native is tried first, tc if it fails */
		snprintf(why, len, "native XDP attached");
	return FP_HOOK_NATIVE;
}

static int attach_xdp(const struct fp_instance *inst, int ifindex, enum fp_hook hook)
{
	LIBBPF_OPTS(bpf_link_create_opts, lopts,
		    .flags = hook == FP_HOOK_NATIVE ? XDP_FLAGS_DRV_MODE : XDP_FLAGS_SKB_MODE);
	int fd = bpf_link_create(inst->prog_fd, ifindex, BPF_XDP, &lopts);

	return fd < 0 ? -errno : fd;
}

/* A tcx link, or -EINVAL from a kernel before 6.6, which does not know the attach type. */
static int attach_tcx(const struct fp_instance *inst, int ifindex)
{
	int fd = bpf_link_create(inst->prog_tc_fd, ifindex, FP_BPF_TCX_INGRESS, NULL);

	return fd < 0 ? -errno : fd;
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

/* fp_err, unless @name is NULL: a quiet try. */
#define say(name, fmt, ...)                                                                        \
	do {                                                                                       \
		if (name)                                                                          \
			fp_err(fmt, name, ##__VA_ARGS__);                                          \
	} while (0)

int fp_hook_attach(const struct fp_instance *inst, int ifindex, const char *name, enum fp_hook hook,
		   const char **how)
{
	char path[PATH_MAX];
	int fd, err;

	*how = NULL;
	if (hook != FP_HOOK_TC) {
		fd = attach_xdp(inst, ifindex, hook);
		if (fd < 0) {
			say(name, "%s: attaching in %s mode failed: %s%s", fp_hook_name(hook),
			    strerror(-fd),
			    hook == FP_HOOK_NATIVE ? " (try --mode tc or --mode generic)" : "");
			return fd;
		}
	} else if (inst->prog_tc_fd < 0) {
		say(name, "%s: this instance was loaded without the tc entry point; detach every "
			  "interface and attach again");
		return -ENOENT;
	} else {
		fd = attach_tcx(inst, ifindex);
		*how = "tcx";
		if (fd == -EINVAL) {
			*how = "clsact";
			err = attach_clsact(inst, ifindex);
			if (err) {
				say(name, "%s: attaching a clsact filter failed: %s%s",
				    strerror(-err),
				    err == -EEXIST ? " (another filter has priority 1 and "
						     "handle 0xfa57 at its ingress)"
						   : "");
				return err;
			}
			pin_path(inst, "tc", ifindex, path, sizeof(path));
			if (bpf_obj_pin(inst->prog_tc_fd, path)) {
				err = -errno;
				say(name, "%s: cannot pin %s: %s", path, strerror(errno));
				detach_clsact(ifindex);
				return err;
			}
			return 0;
		}
		if (fd < 0) {
			say(name, "%s: attaching at tc ingress failed: %s", strerror(-fd));
			return fd;
		}
	}
	pin_path(inst, "link", ifindex, path, sizeof(path));
	err = bpf_obj_pin(fd, path) ? -errno : 0;
	if (err) {
		say(name, "%s: cannot pin its link at %s: %s", path, strerror(-err));
		bpf_link_detach(fd);
	}
	close(fd);
	return err;
}

void fp_hook_detach(const struct fp_instance *inst, int ifindex)
{
	char path[PATH_MAX];
	int fd;

	pin_path(inst, "link", ifindex, path, sizeof(path));
	fd = bpf_obj_get(path);
	if (fd >= 0) {
		bpf_link_detach(fd);
		close(fd);
	}
	unlink(path);
	pin_path(inst, "tc", ifindex, path, sizeof(path));
	if (!access(path, F_OK))
		detach_clsact(ifindex);
	unlink(path);
}

void fp_hook_forget(const struct fp_instance *inst, int ifindex)
{
	char path[PATH_MAX];

	pin_path(inst, "link", ifindex, path, sizeof(path));
	unlink(path);
	pin_path(inst, "tc", ifindex, path, sizeof(path));
	unlink(path);
}

bool fp_hook_pinned(const struct fp_instance *inst, int ifindex)
{
	char link[PATH_MAX], tc[PATH_MAX];

	pin_path(inst, "link", ifindex, link, sizeof(link));
	pin_path(inst, "tc", ifindex, tc, sizeof(tc));
	return !access(link, F_OK) || !access(tc, F_OK);
}

int fp_hook_pinned_all(const struct fp_instance *inst, int *ifindexes, int max)
{
	DIR *dir = opendir(inst->pin_dir);
	struct dirent *de;
	int n = 0;

	if (!dir)
		return 0;
	while ((de = readdir(dir)) && n < max) {
		int ifindex;

		if (sscanf(de->d_name, "link_%d", &ifindex) == 1 ||
		    sscanf(de->d_name, "tc_%d", &ifindex) == 1)
			ifindexes[n++] = ifindex;
	}
	closedir(dir);
	return n;
}

/* The type of the link pinned for @ifindex, or -errno. */
static int pinned_link_type(const struct fp_instance *inst, int ifindex)
{
	struct bpf_link_info info = {};
	uint32_t len = sizeof(info);
	char path[PATH_MAX];
	int fd, err;

	pin_path(inst, "link", ifindex, path, sizeof(path));
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -errno;
	err = bpf_obj_get_info_by_fd(fd, &info, &len) ? -errno : (int)info.type;
	close(fd);
	return err;
}

enum fp_hook fp_hook_of(const struct fp_instance *inst, int ifindex)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	char path[PATH_MAX];
	int type = pinned_link_type(inst, ifindex);

	if (type == FP_BPF_LINK_TYPE_TCX)
		return FP_HOOK_TC;
	if (type == BPF_LINK_TYPE_XDP && !bpf_xdp_query(ifindex, 0, &q))
		return q.attach_mode == XDP_ATTACHED_SKB ? FP_HOOK_GENERIC : FP_HOOK_NATIVE;
	pin_path(inst, "tc", ifindex, path, sizeof(path));
	if (!access(path, F_OK))
		return FP_HOOK_TC;
	return FP_HOOK_AUTO;
}

const char *fp_hook_describe(const struct fp_instance *inst, int ifindex)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex, .attach_point = BPF_TC_INGRESS);
	LIBBPF_OPTS(bpf_tc_opts, tc, .handle = FP_TC_HANDLE, .priority = FP_TC_PRIORITY);
	int type = pinned_link_type(inst, ifindex);

	if (type == FP_BPF_LINK_TYPE_TCX)
		return "tc (tcx)";
	if (type == BPF_LINK_TYPE_XDP)
		return fp_hook_name(fp_hook_of(inst, ifindex));
	/* A clsact filter: still there, with our program? */
	if (fp_hook_of(inst, ifindex) == FP_HOOK_TC)
		return bpf_tc_query(&hook, &tc) == 0 && tc.prog_id == inst->prog_tc_id
			       ? "tc (clsact)"
			       : "detached (its clsact filter is gone)";
	return "detached";
}
