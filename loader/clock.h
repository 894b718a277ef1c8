/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The datapath's clock (struct fp_clock of xdp_fastpath.h): jiffies, counted in nanoseconds
 * of CLOCK_MONOTONIC. Calibrated here against the kernel's own two clocks, read together by
 * a small BPF program (fp_probe_clock in bpf/probe.bpf.c).
 */
#ifndef FP_LOADER_CLOCK_H
#define FP_LOADER_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "xdp_fastpath.h"

/* Measures the tick (a quarter of a second) and sets @clock; 0, or -errno when the kernel cannot
 * read jiffies or they do not tick like a kernel's (then the datapath reads
 * bpf_ktime_get_ns()). */
int fp_clock_calibrate(struct fp_clock *clock);

/* The HZ whose tick is @tick_ns, or 0 if no kernel's is. */
unsigned int fp_clock_hz(uint64_t tick_ns);

/* How far @clock runs behind CLOCK_MONOTONIC now, in ns: between 0 and a tick when it is
 * right (a little less than 0 when the tick comes as it is read). */
int fp_clock_lag_ns(const struct fp_clock *clock, int64_t *lag_ns);

/* Whether a clock @lag_ns behind CLOCK_MONOTONIC is right: from two ticks ahead to three
 * behind (a tick's resolution, and the tick interrupt's delays on a busy machine). */
bool fp_clock_lag_ok(const struct fp_clock *clock, int64_t lag_ns);

/* The daemon's check at each scan, one BPF test run: a clock that fp_clock_lag_ok() finds
 * wrong twice, a tick apart (one tick interrupt held up is no drift), is calibrated again,
 * or dropped (tick_ns 0: the datapath reads bpf_ktime_get_ns()) if it does not calibrate.
 * 1 if @clock was rewritten, 0 if it is right or not in use, -errno. */
int fp_clock_check(struct fp_clock *clock);

#endif
