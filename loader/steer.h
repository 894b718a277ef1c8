/* SPDX-License-Identifier: GPL-2.0-only */
/* --steer: spreading packets over CPUs by flow (steer.c). */
#ifndef FP_STEER_H
#define FP_STEER_H

#include <stdbool.h>
#include <stdint.h>

#include "common.h"

/* The value size of a cpumap whose entries run no program (bpf_cpumap_val's qsize alone):
 * the instance's cpumap unless it was created with --steer. */
#define FP_CPUMAP_QSIZE_ONLY sizeof(uint32_t)

/* Whether the instance's cpumap entries can run the fastpath: it was created with --steer. */
bool fp_steer_capable(const struct fp_instance *inst);

/* A cpumap entry running the fastpath on each CPU of cpus (a CPU list, NULL: all online),
 * and the config on. */
int fp_steer_enable(const struct fp_instance *inst, const char *cpus);
/* Steering off: the config's steer_cpus 0, and no cpumap entry. */
int fp_steer_disable(const struct fp_instance *inst);

#endif
