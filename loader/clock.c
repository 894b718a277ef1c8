// SPDX-License-Identifier: GPL-2.0-only
/*
 * The datapath's clock: jiffies in nanoseconds of CLOCK_MONOTONIC (struct fp_clock).
 *
 * The kernel advances jiffies_64 by one each time CLOCK_MONOTONIC passes another tick of
 * TICK_NSEC, (10^9 + HZ/2) / HZ, so a value of jiffies, the time it took that value, and
 * the tick's length give CLOCK_MONOTONIC to a tick. HZ is nowhere to be read (CONFIG_HZ is
 * in no file a router is sure to have): jiffies are sampled for a quarter of a second (a
 * second when that cannot tell the HZ, clear_fit()), and of the HZ values a kernel can be
 * built with, the one whose tick fits the changes seen is taken. Changes are seen late, by
 * a tick interrupt held up or a slow sample (milliseconds in an emulated guest), never
 * early, which is what the fit relies on (disagreement()).
 * The daemon's check at each scan (fp_clock_check) calibrates again should the clock drift.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "clock.h"
#include "common.h"
#include "probe.skel.h"

#define SPAN_NS	     (NSEC / 4) /* sampled: 62 changes at 250 Hz, 6 at the slowest HZ, 24 */
#define LONG_SPAN_NS NSEC	/* sampled when SPAN_NS does not tell the HZ */
#define MAX_CHANGES  1280	/* 1200 Hz, the fastest, changes 1200 times in LONG_SPAN_NS */

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
	uint64_t ns; /* CLOCK_MONOTONIC, read just after jiffies: never before their tick */
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

/* The changes of jiffies seen since the first sample. */
struct clock_sampling {
	struct clock_sample first, last;
	int n;
	struct fp_clock_change changes[MAX_CHANGES];
};

/* Samples jiffies until @span_ns after the first sample (taken now if none was), recording
 * their changes; 0, or -errno. */
static int sample_changes(struct clock_sampling *sampling, uint64_t span_ns)
{
	struct clock_sample s;
	int err = 0;

	if (!sampling->first.ns) {
		err = clock_sample(&sampling->first);
		sampling->last = sampling->first;
	}
	while (!err && sampling->n < MAX_CHANGES &&
	       sampling->last.ns - sampling->first.ns < span_ns) {
		err = clock_sample(&s);
		if (!err && s.jiffies != sampling->last.jiffies)
			sampling->changes[sampling->n++] =
				(struct fp_clock_change){s.jiffies, s.ns};
		sampling->last = s;
	}
	return err;
}

/* When jiffies @j began, as change @c tells if ticks are @tick long: no earlier than that
 * (its tick came by @seen_ns). */
static int64_t implied(const struct fp_clock_change *c, uint64_t j, uint64_t tick)
{
	return (int64_t)c->seen_ns + (int64_t)(j - c->jiffies) * (int64_t)tick;
}

/* The earliest of @n changes' answers to when jiffies @j began: the least delayed one's. */
static int64_t earliest(const struct fp_clock_change *c, int n, uint64_t j, uint64_t tick)
{
	int64_t at, first = INT64_MAX;

	for (int i = 0; i < n; i++) {
		at = implied(&c[i], j, tick);
		if (at < first)
			first = at;
	}
	return first;
}

/*
 * How far the first and last thirds of the changes disagree on when jiffies @j0 began, if a
 * tick is @tick long. Each change tells a time no earlier than the truth, later by how long
 * its tick interrupt and its sample took: each third's earliest answer is its least
 * delayed one, and with the right tick the two agree. With one 2.4% off (250 against
 * 256 Hz), the answers of changes 0.1 s apart differ by 2.4 ms.
 */
static uint64_t disagreement(const struct fp_clock_change *c, int n, uint64_t tick)
{
	int64_t first = earliest(c, n / 3, c[0].jiffies, tick);
	int64_t last = earliest(c + n - n / 3, n / 3, c[0].jiffies, tick);

	return (uint64_t)llabs((long long)(last - first));
}

/* The tick of the HZ that fits the @n changes best, and in @best by how much they disagree. */
static uint64_t best_tick(const struct fp_clock_change *c, int n, uint64_t *best)
{
	uint64_t tick = 0;

	*best = UINT64_MAX;
	for (size_t i = 0; i < sizeof(kernel_hz) / sizeof(kernel_hz[0]); i++) {
		uint64_t t = tick_of(kernel_hz[i]), d = disagreement(c, n, t);

		if (d < *best) {
			*best = d;
			tick = t;
		}
	}
	return tick;
}

/*
 * Whether a fit of @tick to the @n changes leaves no doubt. With the right tick most
 * changes are seen promptly and tell about the same start, within a fraction of a tick of
 * the earliest answer; with a wrong one the answers drift apart along the sampling (250 Hz
 * against 256: 6 ms in a quarter of a second), however well the two thirds agree when a
 * run of late changes in one of them happens to make up for the drift (an emulated guest
 * beside another, now and then). Clear when half of them answer within an eighth of a tick.
 */
static bool clear_fit(const struct fp_clock_change *c, int n, uint64_t tick)
{
	int64_t first = earliest(c, n, c[0].jiffies, tick);
	int close = 0;

	for (int i = 0; i < n; i++)
		close += implied(&c[i], c[0].jiffies, tick) - first <= (int64_t)tick / 8;
	return 2 * close >= n;
}

uint64_t fp_clock_fit(const struct fp_clock_change *changes, int n, bool *clear)
{
	uint64_t best, tick = best_tick(changes, n, &best);

	*clear = false;
	if (best > tick / 4) /* no HZ fits: better no jiffies clock than a wrong one */
		return 0;
	*clear = clear_fit(changes, n, tick);
	return tick;
}

int fp_clock_calibrate(struct fp_clock *clock)
{
	struct clock_sampling sampling = {0};
	struct fp_clock_change *changes = sampling.changes;
	int err = sample_changes(&sampling, SPAN_NS);
	uint64_t tick = 0;
	bool clear;

	if (!err && sampling.n >= 6) {
		tick = fp_clock_fit(changes, sampling.n, &clear);
		if (!clear) { /* four times the evidence */
			err = sample_changes(&sampling, LONG_SPAN_NS);
			tick = err ? 0 : fp_clock_fit(changes, sampling.n, &clear);
		}
	}
	if (err)
		return err;
	if (sampling.n < 6) /* not 2 per third: jiffies stand (almost) still */
		return -ETIME;
	if (!tick)
		return -ERANGE;
	/* The start: the earliest answer of all, the least delayed one. */
	clock->jiffies = changes[sampling.n - 1].jiffies;
	clock->ns = (uint64_t)earliest(changes, sampling.n, clock->jiffies, tick);
	clock->tick_ns = tick;
	return 0;
}

const char *fp_clock_strerror(int err)
{
	switch (err) {
	case -ETIME:
		return "jiffies stood still while they were sampled";
	case -ERANGE:
		return "the ticks seen fit no kernel's HZ (a busy CPU held them up)";
	default:
		return strerror(-err);
	}
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

bool fp_clock_lag_ok(const struct fp_clock *clock, int64_t lag_ns)
{
	int64_t tick = (int64_t)clock->tick_ns;

	return lag_ns >= -2 * tick && lag_ns <= 3 * tick;
}

void fp_clock_retry_later(struct fp_clock_retry *retry, uint64_t now_ns)
{
	if (retry->wait_ns < FP_CLOCK_RETRY_FIRST_NS)
		retry->wait_ns = FP_CLOCK_RETRY_FIRST_NS;
	else if (retry->wait_ns < FP_CLOCK_RETRY_LAST_NS / 2)
		retry->wait_ns *= 2;
	else
		retry->wait_ns = FP_CLOCK_RETRY_LAST_NS;
	retry->due_ns = now_ns + retry->wait_ns;
}

/* A clock that has none (tick_ns 0) calibrated when its retry is due. */
static int calibrate_when_due(struct fp_clock *clock, struct fp_clock_retry *retry, uint64_t now_ns)
{
	struct fp_clock fresh;

	if (now_ns < retry->due_ns)
		return 0;
	if (fp_clock_calibrate(&fresh)) {
		fp_clock_retry_later(retry, now_ns);
		return 0;
	}
	*retry = (struct fp_clock_retry){0};
	*clock = fresh;
	return 1;
}

int fp_clock_check(struct fp_clock *clock, struct fp_clock_retry *retry, uint64_t now_ns)
{
	int64_t lag;
	int err;

	if (!clock->tick_ns)
		return calibrate_when_due(clock, retry, now_ns);
	err = fp_clock_lag_ns(clock, &lag);
	if (err)
		return err;
	if (fp_clock_lag_ok(clock, lag))
		return 0;
	/* A tick interrupt held up makes one reading late: it has caught up a tick later. */
	nanosleep(&(struct timespec){.tv_nsec = (long)clock->tick_ns}, NULL);
	err = fp_clock_lag_ns(clock, &lag);
	if (err)
		return err;
	if (fp_clock_lag_ok(clock, lag))
		return 0;
	/* A clock that stays wrong would pass every packet to the kernel once it runs a lease
	 * ahead: if it does not calibrate again, the datapath reads the kernel's clock until
	 * a retry calibrates it. It had calibrated: no failed retries are behind it. */
	*clock = (struct fp_clock){0};
	*retry = (struct fp_clock_retry){0};
	calibrate_when_due(clock, retry, now_ns);
	return 1;
}
