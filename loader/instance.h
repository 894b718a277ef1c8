/* SPDX-License-Identifier: GPL-2.0-only */
/* The pinned program and maps of one pin directory (instance.c). */
#ifndef FP_INSTANCE_H
#define FP_INSTANCE_H

#include "common.h"

struct xdp_fastpath;

/* Checks root and a BPF filesystem at pin_dir's parent (mounting one if may_mount). */
int fp_check_environment(const char *pin_dir, bool may_mount);
int fp_instance_open(struct fp_instance *inst, const char *pin_dir);
/* What a read-only command (status, stats, flows, flush) does first: 0 or its exit code. */
int fp_command_open(const char *cmd, int argc, const struct fp_options *opt,
		    struct fp_instance *inst);
/* The embedded datapath, opened for a kernel with these FP_KERNEL_* features; not loaded. */
struct xdp_fastpath *fp_datapath_open(uint32_t kernel);
/*
 * --flows when it is not given: twice conntrack's limit of connections @ct_max (each takes
 * an entry a way), a power of two from FP_MIN_DEFAULT_FLOWS to FP_DEFAULT_FLOWS; that
 * most when conntrack sets no limit (0).
 */
#define FP_MIN_DEFAULT_FLOWS 1024
uint32_t fp_flows_for_conntrack(uint32_t ct_max);
/* Sizes fp_flows4 to @slots (fp_slots_for), before the load. */
void fp_datapath_set_slots(struct xdp_fastpath *skel, uint32_t slots4, uint32_t slots6);
/* Loads and pins the XDP entry point, and the cpumap's with --steer, with every map. */
int fp_instance_create(struct fp_instance *inst, const struct fp_options *opt);
/* Loads and pins the tc entry point, if the instance has none yet. */
int fp_instance_load_tc(struct fp_instance *inst);
void fp_instance_close(struct fp_instance *inst);
void fp_instance_unpin(const char *pin_dir);
int fp_instance_lock(const struct fp_instance *inst);
/* The same without waiting, for the daemon, released by closing the fd it returns:
 * -EWOULDBLOCK while a command holds it. */
int fp_instance_try_lock(const struct fp_instance *inst);
void fp_instance_unlock(void);
/* The pid and lock files' paths under /run/xdp-fastpath; either may be NULL. */
void fp_run_paths(const struct fp_instance *inst, char *pid, char *lock, size_t len);
/* Another file of the instance there, INSTANCE.WHAT_N (INSTANCE.WHAT if @n < 0). */
void fp_run_path(const struct fp_instance *inst, const char *what, int n, char *buf, size_t len);
int fp_read_config(const struct fp_instance *inst, struct fp_config *cfg);
/* Reads fp_config, lets @change change it, writes it back: one writer at a time. */
int fp_change_config(const struct fp_instance *inst,
		     void (*change)(struct fp_config *cfg, void *arg), void *arg);
int fp_read_stats(const struct fp_instance *inst, uint64_t stats[FP_STAT_MAX]);
int fp_tx_ports(const struct fp_instance *inst, uint32_t *ifindexes, int max);
bool fp_tx_port_attached(const struct fp_instance *inst, uint32_t ifindex); /* in the devmap */

#endif
