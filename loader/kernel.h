/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the running kernel offers xdp-fastpath (FP_KERNEL_* of xdp_fastpath.h), and what it
 * does without what it lacks. Routers run kernels from 5.10 on; each feature newer than
 * that has a fallback, which `status` names.
 */
#ifndef FP_LOADER_KERNEL_H
#define FP_LOADER_KERNEL_H

#include <stdbool.h>
#include <stdint.h>

#include "xdp_fastpath.h"

struct fp_kernel_feature {
	uint32_t bit;	      /* FP_KERNEL_* */
	const char *name;     /* in status --json */
	const char *since;    /* the first Linux release that has it; NULL: not a release's */
	const char *what;     /* what it is */
	const char *fallback; /* what xdp-fastpath does without it */
};

extern const struct fp_kernel_feature fp_kernel_features[];
extern const int fp_nr_kernel_features;

/* FP_KERNEL_* of the running kernel, probed once (a few BPF programs and a netlink
 * request). fp-test tries the fallbacks by loading the program with fewer. */
uint32_t fp_kernel_probe(void);
/* Whether the program came out of the JIT (not the interpreter). */
bool fp_prog_jited(int prog_fd);
/* What attach and status say of a datapath that did not: why, and what to do. */
extern const char fp_interpreter_note[];
/* The datapath's clock, calibrated by the probe; all 0 without FP_KERNEL_JIFFIES, or if it
 * did not calibrate. */
struct fp_clock fp_kernel_clock(void);

#endif
