/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One interface attached to an instance, or detached from it (port_attach.c): for attach's
 * commands, and for the daemon attaching a port it awaited (reattach.c).
 */
#ifndef FP_PORT_ATTACH_H
#define FP_PORT_ATTACH_H

#include <stdbool.h>

#include "common.h"
#include "hooks.h"

struct fp_iface {
	const char *name;
	int ifindex;
	enum fp_hook hook;	       /* what it is attached at */
	const char *how;	       /* tc: "tcx" or "clsact" */
	char why[FP_HOOK_WHY_LEN];     /* --mode auto: why this hook */
	char caveats[FP_HOOK_WHY_LEN]; /* --mode at XDP: what it leaves to the kernel there */
};

/* The hook @ifc gets: --mode @mode's, or what auto chooses for it, and why (ifc->why). */
void fp_iface_choose_hook(struct fp_iface *ifc, int mode);
/*
 * Everything that refuses @ifc at its hook, with a one-line error: an ifindex the flow keys
 * cannot hold, not an Ethernet port, a bond in native mode, a port that cannot take
 * redirected frames, a veth whose peer hands over partial checksums, one attached already
 * or holding another XDP program, a shaper (unless @allow_shaping). @inst is NULL while
 * there is no instance. 0 or -errno.
 */
int fp_iface_check(const struct fp_instance *inst, const struct fp_iface *ifc, bool allow_shaping);
/* Attaches @ifc at its hook (auto's XDP may fall back to tc) and adds it to the egress map;
 * 0 or -errno after a one-line error. */
int fp_iface_attach(struct fp_instance *inst, struct fp_iface *ifc, int mode);
/* Detaches one interface: its hook and pin, egress entry and its flows. */
void fp_iface_detach(const struct fp_instance *inst, int ifindex);

#endif
