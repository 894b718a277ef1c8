/* SPDX-License-Identifier: GPL-2.0-only */
/* --steer: spreading packets over CPUs by flow (steer.c). */
#ifndef FP_STEER_H
#define FP_STEER_H

#include "common.h"

/* A cpumap entry running the fastpath on each CPU of cpus (a CPU list, NULL: all online),
 * and the config on. */
int fp_steer_enable(const struct fp_instance *inst, const char *cpus);

#endif
