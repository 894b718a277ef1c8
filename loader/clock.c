// SPDX-License-Identifier: GPL-2.0-only
/*
 * The datapath's clock: jiffies in nanoseconds of CLOCK_MONOTONIC (struct fp_clock).
 *
 * The kernel advances jiffies_64 by one each time CLOCK_MONOTONIC passes another tick of
 * TICK_NSEC, (10^9 + HZ/2) / HZ, so a value of jiffies, the time it took that value, and
 * the tick's length give CLOCK_MONOTONIC to a tick. HZ is nowhere to be read (CONFIG_HZ is
 * in no file a router is sure to have): it is measured, from the times two values of
 * jiffies began 0.1 s apart, and rounded to the tick of the nearest HZ a kernel can be
 * built with. A tick that matches none (three times over) is used as measured; the
 * daemon's check at each scan (fp_clock_check) calibrates again should the clock drift.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "clock.h"
#include "probe.skel.h"

#define NSEC	    1000000000ull
#define SPAN_NS	    (NSEC / 10) /* between the two ticks measured */
#define TICK_MAX_NS (NSEC / 10) /* HZ 24 is the slowest a kernel has: 42 ms */

/* The HZ values of the kernel's Kconfig files, of every architecture. */
static const unsigned int kernel_hz[] = {24,  32,  48,	64,  100,  128,	 200,
					 250, 256, 300, 500, 1000, 1024, 1200};

static uint64_t tick_of(unsigned int hz)
{
	return (NSEC + hz / 2) / hz; /* the kernel's TICK_NSEC */
}

unsigned int fp_clock_hz(uint64_t tick_ns)
{
	for (size_t i = 0; i < sizeof(kernel_hz) / sizeof(kernel_hz[0]); i++)
		if (tick_of(kernel_hz[i]) == tick_ns)
			return kernel_hz[i];
	return 0;
}

struct clock_sample {
	uint64_t jiffies;
	uint64_t ns; /* CLOCK_MONOTONIC, read just before jiffies */
};

/* The probe program, kept open: the daemon reads a sample at each scan. */
static struct probe *probe;

static int clock_sample(struct clock_sample *s)
{
	uint8_t frame[64] = {0}; /* a tc test run wants at least an Ethernet header */
	LIBBPF_OPTS(bpf_test_run_opts, run, .data_in = frame, .data_size_in = sizeof(frame));

	if (!probe) {
		probe = probe__open_and_load();
		if (!probe)
			return -errno;
	}
	if (bpf_prog_test_run_opts(bpf_program__fd(probe->progs.fp_probe_clock), &run))
		return -errno;
	s->jiffies = *(volatile __u64 *)&probe->bss->fp_probe_jiffies;
	s->ns = *(volatile __u64 *)&probe->bss->fp_probe_ns;
	return 0;
}

/* Reads samples until jiffies change: @after is the first of the new value, @before the
 * last of the old one, so the tick came between before->ns and after's reading. */
static int next_tick(struct clock_sample *before, struct clock_sample *after)
{
	struct clock_sample first;
	int err = clock_sample(&first);

	*before = first;
	while (!err) {
		err = clock_sample(after);
		if (err || after->jiffies != first.jiffies)
			break;
		*before = *after;
		if (after->ns - first.ns > TICK_MAX_NS)
			err = -ETIME; /* jiffies stand still */
	}
	return err;
}

/* One measurement: 0 with @clock set and *snapped telling whether the tick is a kernel's. */
static int measure(struct fp_clock *clock, bool *snapped)
{
	struct timespec span = {.tv_nsec = SPAN_NS};
	struct clock_sample a0, a, b0, b;
	uint64_t ticks, measured, tick = 0;
	int err;

	err = next_tick(&a0, &a);
	if (!err) {
		nanosleep(&span, NULL);
		err = next_tick(&b0, &b);
	}
	if (err)
		return err;
	ticks = b.jiffies - a.jiffies;
	if (!ticks || ticks > 1000000)
		return -ERANGE;
	/* From the middle of one tick's window to the middle of the other's. */
	measured = ((b0.ns + b.ns) - (a0.ns + a.ns)) / 2 / ticks;
	for (size_t i = 0; i < sizeof(kernel_hz) / sizeof(kernel_hz[0]); i++) {
		uint64_t t = tick_of(kernel_hz[i]);

		if (!tick || llabs((long long)(t - measured)) < llabs((long long)(tick - measured)))
			tick = t;
	}
	/* 250 and 256 Hz are 2.4% apart; a measurement 0.1 s long is good to far less. */
	*snapped = llabs((long long)(tick - measured)) * 200 <= (long long)tick;
	clock->tick_ns = *snapped ? tick : measured;
	clock->jiffies = b.jiffies;
	clock->ns = b0.ns; /* the tick came after it: the clock never runs ahead */
	return 0;
}

int fp_clock_calibrate(struct fp_clock *clock)
{
	bool snapped;
	int err;

	/* A tick interrupt held up (a busy virtual machine) spoils a measurement: try again
	 * before settling for a tick that is no kernel's. */
	for (int tries = 0; tries < 3; tries++) {
		err = measure(clock, &snapped);
		if (err || snapped)
			break;
	}
	return err;
}

int fp_clock_lag_ns(const struct fp_clock *clock, int64_t *lag_ns)
{
	struct clock_sample s;
	int err = clock_sample(&s);

	if (err)
		return err;
	*lag_ns = (int64_t)(s.ns - clock->ns) -
		  (int64_t)(s.jiffies - clock->jiffies) * (int64_t)clock->tick_ns;
	return 0;
}

int fp_clock_check(struct fp_clock *clock)
{
	int64_t lag, tick = (int64_t)clock->tick_ns;
	struct fp_clock fresh;
	int err;

	if (!clock->tick_ns)
		return 0;
	err = fp_clock_lag_ns(clock, &lag);
	if (err)
		return err;
	if (lag >= -2 * tick && lag <= 3 * tick)
		return 0;
	err = fp_clock_calibrate(&fresh);
	if (err)
		return err;
	*clock = fresh;
	return 1;
}
