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

/* Measures the tick (a quarter of a second, or a second when that does not tell the HZ) and
 * sets @clock; 0, or -errno when the kernel cannot read jiffies or they do not tick like a
 * kernel's (then the datapath reads bpf_ktime_get_ns()). */
int fp_clock_calibrate(struct fp_clock *clock);

/* A change of jiffies seen while sampling: to @jiffies, by @seen_ns (CLOCK_MONOTONIC). The
 * tick that made it came before @seen_ns, late by however long its interrupt was held up,
 * never early. */
struct fp_clock_change {
	uint64_t jiffies, seen_ns;
};

/* The tick of the kernel HZ that @n changes fit (fp_clock_calibrate's fit), or 0 if none
 * does; @clear tells whether the fit leaves no doubt, or more changes are wanted. */
uint64_t fp_clock_fit(const struct fp_clock_change *changes, int n, bool *clear);

/* What fp_clock_calibrate()'s -errno @err means, for a log line. */
const char *fp_clock_strerror(int err);

/* The HZ whose tick is @tick_ns, or 0 if no kernel's is. */
unsigned int fp_clock_hz(uint64_t tick_ns);

/* How far @clock runs behind CLOCK_MONOTONIC now, in ns: between 0 and a tick when it is
 * right (a little less than 0 when the tick comes as it is read). */
int fp_clock_lag_ns(const struct fp_clock *clock, int64_t *lag_ns);

/* Whether a clock @lag_ns behind CLOCK_MONOTONIC is right: from two ticks ahead to three
 * behind (a tick's resolution, and the tick interrupt's delays on a busy machine). */
bool fp_clock_lag_ok(const struct fp_clock *clock, int64_t lag_ns);

/*
 * A clock with no tick (tick_ns 0) is calibrated again by the daemon's check: at once, then,
 * while calibrations fail, after waits that double from FP_CLOCK_RETRY_FIRST_NS to
 * FP_CLOCK_RETRY_LAST_NS. A calibration that fails at attach (a router busy booting, an
 * emulated guest) costs the datapath the kernel's clock only until one succeeds; a kernel
 * whose jiffies never calibrate costs the daemon a second or so every 10 minutes.
 */
#define FP_CLOCK_RETRY_FIRST_NS (10 * 1000000000ull)
#define FP_CLOCK_RETRY_LAST_NS	(600 * 1000000000ull)

struct fp_clock_retry {
	uint64_t due_ns;  /* CLOCK_MONOTONIC of the next calibration; 0: at the next check */
	uint64_t wait_ns; /* the wait after the last failure; 0: none has failed */
};

/* After a calibration that failed at @now_ns: the next one is due after a wait that doubles,
 * within FP_CLOCK_RETRY_FIRST_NS and FP_CLOCK_RETRY_LAST_NS. */
void fp_clock_retry_later(struct fp_clock_retry *retry, uint64_t now_ns);

/*
 * The daemon's check at each scan (@now_ns), for a kernel with bpf_jiffies64(): a clock that
 * fp_clock_lag_ok() finds wrong twice, a tick apart (one tick interrupt held up is no drift),
 * is calibrated again, or dropped if it does not calibrate (tick_ns 0: the datapath reads
 * bpf_ktime_get_ns()); a dropped one, or one that never calibrated, is calibrated when
 * @retry is due. 1 if @clock was rewritten, 0 if not, -errno.
 */
int fp_clock_check(struct fp_clock *clock, struct fp_clock_retry *retry, uint64_t now_ns);

#endif
