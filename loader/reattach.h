/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Ports awaited by name (reattach.c). A port that is deleted and made again (a USB adapter
 * plugged back in, a driver reloaded, a wireless interface hostapd makes anew) comes back
 * with a new ifindex and nothing attached; one a supervisor's attach names may not be there
 * yet at boot. The daemon awaits each by name, with the --mode it was to have, and once a
 * port of that name is there and up, attaches it as attach would, with the same checks.
 *
 * The list is the instance's, kept in a file under /run/xdp-fastpath: a daemon started
 * again (after a crash, or by its supervisor) awaits what the one before it did, a
 * supervisor's attach sets it to the interfaces its command line names that are not there,
 * and it goes with the instance.
 */
#ifndef FP_REATTACH_H
#define FP_REATTACH_H

#include <stdbool.h>
#include <net/if.h>

#include "common.h"

#define FP_REATTACH_MAX FP_MAX_TX_PORTS

struct fp_awaited_port {
	char name[IF_NAMESIZE];
	int mode;	    /* the --mode it is to be attached with (enum fp_hook; auto too) */
	int failed_ifindex; /* there with this ifindex, but attaching it failed: not retried */
};

struct fp_reattach {
	struct fp_instance *inst;
	bool allow_shaping; /* --allow-shaping, as the daemon was started with */
	struct fp_awaited_port awaited[FP_REATTACH_MAX];
	int nr_awaited;
};

/* @name's entry among the @n @ports of a list, or NULL. */
struct fp_awaited_port *reattach_find(struct fp_awaited_port *ports, int n, const char *name);
/* The instance's list, as its file says: up to @max ports into @ports; how many. */
int reattach_read(const struct fp_instance *inst, struct fp_awaited_port *ports, int max);
/* Writes @r's list to the instance's file; removes it if the list is empty. */
void reattach_save(const struct fp_reattach *r);
/* Adds @name to @r, to be attached with @mode; false if the list is full. */
bool reattach_add(struct fp_reattach *r, const char *name, int mode);
/* @ifindex, called @name, was deleted: if it was attached, it is awaited. Before its pins
 * are removed (fp_hook_forget), which say how it was attached. */
void reattach_await(struct fp_reattach *r, int ifindex, const char *name);
/* Takes the operator's request, if any, then attaches every awaited port that is there and
 * up, and returns how many it attached. */
int reattach_try(struct fp_reattach *r);
/* The operator detached @names, awaited (attach.c, under the instance's lock): with no
 * daemon, out of the list; with one, in a request it takes at its next try (sent SIGUSR1
 * to try now), before it attaches anything. 0 or -errno. */
int reattach_unawait(struct fp_instance *inst, const char *const *names, int n, bool daemon_runs);
/* Removes the instance's files, with the instance. */
void reattach_forget(const struct fp_instance *inst);

#endif
