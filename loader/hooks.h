/* SPDX-License-Identifier: GPL-2.0-only */
/* Where the datapath runs on an interface, and attaching and detaching it there (hooks.c). */
#ifndef FP_HOOKS_H
#define FP_HOOKS_H

#include "common.h"

/* --mode; FP_HOOK_AUTO chooses per interface (fp_hook_choose). */
enum fp_hook {
	FP_HOOK_AUTO = 0,
	FP_HOOK_NATIVE,	 /* XDP in the driver */
	FP_HOOK_GENERIC, /* XDP on skbs, after the driver; turns the device's GRO off */
	FP_HOOK_TC,	 /* tc ingress, after GRO: a tcx link (6.6), a clsact filter before */
	FP_HOOK_SPLIT,	 /* native XDP, and tc for TCP after GRO: for a port that does GRO */
};

const char *fp_hook_name(enum fp_hook hook);
/* The hook whose fp_hook_name() is the @len bytes at @name, or -1. */
int fp_hook_by_name(const char *name, size_t len);

/*
 * What --mode auto attaches to @ifindex: native XDP where the driver has it; tc where it
 * has not, on a port that cannot take redirected XDP frames, on a veth whose peer
 * transmits with checksum offload (its partial checksums survive only as skbs), and on a
 * port whose VLANs' tags XDP would not see (fp_hook_vlan_caveat); but generic XDP instead
 * of tc on a port carrying a PPPoE session, on it or on a VLAN of it, which the tc hook
 * leaves to the kernel (XDP, with the caveat, if the session is on the port and a VLAN's
 * tags are hidden). @why says so in a few words. (Split is not auto's yet: see the
 * README's Hooks.)
 */
enum fp_hook fp_hook_choose(int ifindex, char *why, size_t len);
#define FP_HOOK_WHY_LEN 256 /* room for auto's longest why, or --mode's caveats */
/*
 * Whether XDP on @ifindex would see a VLAN's frames without their tag: it carries a VLAN
 * tagged (topology_vlan_on) and VLAN offload takes the tags out of the frames before XDP runs
 * (fp_strips_vlan_tags). Such frames find no flow and pass: the VLAN's incoming direction
 * stays in the kernel. If so, @buf says that and names the command that turns it off.
 */
bool fp_hook_vlan_caveat(int ifindex, char *buf, size_t len);

/* Attaches the instance's program at @hook and pins what keeps it there; @how: "tcx" or
 * "clsact" for tc, else NULL. 0 or -errno, after a one-line error naming @name (none if
 * @name is NULL). */
int fp_hook_attach(struct fp_instance *inst, int ifindex, const char *name, enum fp_hook hook,
		   const char **how);
/* Detaches whatever the instance attached to @ifindex, and its pin. */
void fp_hook_detach(const struct fp_instance *inst, int ifindex);
/* Removes the pins of an interface that is gone (its hooks went with it), and its note. */
void fp_hook_forget(const struct fp_instance *inst, int ifindex);
/* Why @ifindex got its hook ("--mode tc", or auto's reason), kept for status under
 * /run/xdp-fastpath; fp_hook_why reads it back ("" if there is none). */
void fp_hook_note(const struct fp_instance *inst, int ifindex, const char *why);
void fp_hook_why(const struct fp_instance *inst, int ifindex, char *buf, size_t len);
/* The --mode @ifindex was attached with, as its note says: FP_HOOK_AUTO if auto chose. */
enum fp_hook fp_hook_requested(const struct fp_instance *inst, int ifindex);
/* True if the instance attached to @ifindex (it has a pin for it). */
bool fp_hook_pinned(const struct fp_instance *inst, int ifindex);
/* The interfaces the instance has pins for; returns how many. */
int fp_hook_pinned_all(const struct fp_instance *inst, int *ifindexes, int max);
/* What runs the datapath on @ifindex now, for status: "native", "generic", "tc (tcx)",
 * "tc (clsact)", "native + tc (tcx) for TCP"..., or "detached". */
const char *fp_hook_describe(const struct fp_instance *inst, int ifindex);
/* The hook the instance attached to @ifindex: FP_HOOK_AUTO if none. */
enum fp_hook fp_hook_of(const struct fp_instance *inst, int ifindex);
/* Whether frames from @ifindex at XDP @hook may carry partial checksums, which the datapath
 * passes to the kernel (FP_PORT_PARTIAL_CSUM). */
bool fp_hook_partial_csum(int ifindex, enum fp_hook hook);
/* The FP_CONFIG_* flags the attached ports' FP_PORT_* flags call for: TCP_TO_TC if some
 * port leaves its TCP to the tc hook, PARTIAL_CSUM if some may hand over partial checksums
 * (kept by the daemon). */
uint32_t fp_hook_config_flags(const struct fp_instance *inst);

#endif
