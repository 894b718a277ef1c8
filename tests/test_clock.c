// SPDX-License-Identifier: GPL-2.0-only
/*
 * The datapath's clock (loader/clock.c): jiffies counted in ns of CLOCK_MONOTONIC. The
 * calibration finds the kernel's tick, the clock keeps within a tick of CLOCK_MONOTONIC,
 * and the daemon's check calibrates again a clock that has drifted.
 */
#include <stdio.h>
#include <time.h>

#include "clock.h"
#include "common.h"
#include "fixture.h"
#include "testlib.h"
#include "tests.h"

/* A right clock lags CLOCK_MONOTONIC by 0 to a tick, give or take the tick interrupt's
 * delays: within what the daemon's check leaves alone. */
static void check_lag(const struct fp_clock *clock, const char *what)
{
	int64_t lag = 0;

	CHECK(fp_clock_lag_ns(clock, &lag) == 0, "reading the clock failed");
	CHECK(fp_clock_lag_ok(clock, lag), "%s: %lld ns behind CLOCK_MONOTONIC, the tick is %llu",
	      what, (long long)lag, (unsigned long long)clock->tick_ns);
}

/* CONFIG_HZ of the running kernel, where its configuration can be read (this project's
 * own machine: /proc/config.gz); 0 where not (Debian's kernels in the guests). */
static unsigned int config_hz(void)
{
	FILE *f = popen("zcat /proc/config.gz 2>/dev/null | sed -n 's/^CONFIG_HZ=//p'", "r");
	unsigned int hz = 0;

	if (!f)
		return 0;
	if (fscanf(f, "%u", &hz) != 1)
		hz = 0;
	pclose(f);
	return hz;
}

/*
 * @n changes of jiffies at @hz, those of the first @late_ms milliseconds seen @late_by_us
 * late (a guest's vCPU held up), the others within 0-99 us (a sample's own delay).
 */
static int made_up_changes(struct fp_clock_change *changes, int n, unsigned int hz,
			   unsigned int late_ms, unsigned int late_by_us)
{
	uint64_t tick = (NSEC + hz / 2) / hz, t0 = 100 * NSEC;

	for (int i = 0; i < n; i++) {
		uint64_t at = i * tick, delay = (i * 7919 % 100) * 1000;

		if (at < late_ms * 1000000ull)
			delay = late_by_us * 1000ull;
		changes[i] = (struct fp_clock_change){5000 + i, t0 + at + delay};
	}
	return n;
}

/* The fit of changes made up as made_up_changes() does, for a quarter of a second or a
 * second: the tick it takes (0: none), and whether it is clear. */
static uint64_t fit_of(unsigned int hz, unsigned int seconds_x4, unsigned int late_ms,
		       unsigned int late_by_us, bool *clear)
{
	static struct fp_clock_change changes[1280];
	int n = made_up_changes(changes, hz * seconds_x4 / 4, hz, late_ms, late_by_us);

	return fp_clock_fit(changes, n, clear);
}

static void test_clock_fit(void)
{
	static const unsigned int hzs[] = {100, 250, 256, 1000, 1024};
	bool clear;

	tl_case_begin("the fit takes each HZ's tick from prompt changes, and is clear");
	for (size_t i = 0; i < sizeof(hzs) / sizeof(hzs[0]); i++) {
		uint64_t tick = fit_of(hzs[i], 1, 0, 0, &clear);

		CHECK(fp_clock_hz(tick) == hzs[i], "%u Hz: a tick of %llu ns", hzs[i],
		      (unsigned long long)tick);
		CHECK(clear, "%u Hz: the fit is not clear", hzs[i]);
	}
	tl_case_end();

	/* CI's 32-bit ARM guest once took 256 Hz from a quarter second at 250 so. */
	tl_case_begin("late changes that make a wrong HZ fit a quarter second leave it unclear");
	CHECK_EQ(fit_of(250, 1, 83, 4000, &clear), 3906250, "250 Hz, a twelfth of a second late");
	CHECK(!clear, "the wrong fit is clear");
	CHECK_EQ(fit_of(1000, 1, 83, 4000, &clear), 976563, "1000 Hz, a twelfth of a second late");
	CHECK(!clear, "the wrong fit is clear");
	tl_case_end();

	tl_case_begin("... and a second of them fits the right one, clear");
	CHECK_EQ(fit_of(250, 4, 83, 4000, &clear), 4000000, "250 Hz over a second");
	CHECK(clear, "the fit is not clear");
	CHECK_EQ(fit_of(1000, 4, 83, 4000, &clear), 1000000, "1000 Hz over a second");
	CHECK(clear, "the fit is not clear");
	tl_case_end();

	tl_case_begin("changes that fit no HZ give no tick");
	CHECK_EQ(fit_of(250, 1, 125, 9000, &clear), 0, "250 Hz, half of it 9 ms late");
	CHECK(!clear, "no fit, and clear");
	tl_case_end();
}

void test_clock(void)
{
	struct fp_clock clock, drifted, none;
	struct fp_clock_retry retry = {0};
	struct timespec pause = {.tv_nsec = 300000000};

	test_clock_fit(); /* no kernel's clock in it */
	if (!(fx.kernel & FP_KERNEL_JIFFIES)) {
		printf("  (no bpf_jiffies64() here: skipped)\n");
		return;
	}
	if (fx.clock.tick_ns) {
		tl_case_begin("the clock the datapath got at the start of the run is still right");
		printf("  (calibrated at the start: a tick of %llu ns)\n",
		       (unsigned long long)fx.clock.tick_ns);
		CHECK(fp_clock_hz(fx.clock.tick_ns), "a tick of %llu ns is no kernel's",
		      (unsigned long long)fx.clock.tick_ns);
		check_lag(&fx.clock, "at the end of the run");
		tl_case_end();
	} else {
		/* An emulated guest, now and then: attach's does the same, and the daemon's
		 * check below calibrates it later. */
		printf("  (the calibration at the start of the run failed)\n");
	}

	tl_case_begin("the calibration finds a kernel's tick");
	CHECK(fp_clock_calibrate(&clock) == 0, "the calibration failed");
	CHECK(fp_clock_hz(clock.tick_ns), "a tick of %llu ns is no kernel's",
	      (unsigned long long)clock.tick_ns);
	printf("  (a tick of %llu ns: HZ %u)\n", (unsigned long long)clock.tick_ns,
	       fp_clock_hz(clock.tick_ns));
	if (config_hz())
		CHECK_EQ(fp_clock_hz(clock.tick_ns), config_hz(), "HZ against the kernel's config");
	tl_case_end();

	tl_case_begin("the clock keeps within a tick of CLOCK_MONOTONIC");
	check_lag(&clock, "at once");
	nanosleep(&pause, NULL);
	check_lag(&clock, "0.3 s later");
	tl_case_end();

	tl_case_begin("the daemon's check leaves a right clock alone");
	drifted = clock;
	CHECK_EQ(fp_clock_check(&drifted, &retry, fx_now_ns()), 0, "the check");
	CHECK(drifted.ns == clock.ns && drifted.jiffies == clock.jiffies, "the clock changed");
	tl_case_end();

	tl_case_begin("... and calibrates again one that has drifted");
	drifted.ns += 5 * drifted.tick_ns; /* 5 ticks fast */
	CHECK_EQ(fp_clock_check(&drifted, &retry, fx_now_ns()), 1,
		 "the check of a clock 5 ticks fast");
	check_lag(&drifted, "after the check");
	drifted = clock;
	drifted.jiffies -= 500; /* the same clock, started 500 ticks earlier */
	drifted.ns -= 500 * drifted.tick_ns;
	check_lag(&drifted, "started 500 ticks earlier");
	drifted.tick_ns += drifted.tick_ns / 100; /* with a tick 1% long: 5 ticks fast by now */
	CHECK_EQ(fp_clock_check(&drifted, &retry, fx_now_ns()), 1,
		 "the check of a clock whose tick is 1% long");
	CHECK(drifted.tick_ns == clock.tick_ns, "a tick of %llu ns after the check",
	      (unsigned long long)drifted.tick_ns);
	tl_case_end();

	/* What attach left when its calibration failed, or a drift that did not calibrate. */
	tl_case_begin("... and calibrates one with no tick when its retry is due, not before");
	none = (struct fp_clock){0};
	retry = (struct fp_clock_retry){.due_ns = fx_now_ns() + FP_CLOCK_RETRY_FIRST_NS,
					.wait_ns = FP_CLOCK_RETRY_FIRST_NS};
	CHECK_EQ(fp_clock_check(&none, &retry, fx_now_ns()), 0,
		 "the check before the retry is due");
	CHECK_EQ(none.tick_ns, 0, "the tick before the retry is due");
	CHECK_EQ(fp_clock_check(&none, &retry, retry.due_ns), 1, "the check once it is due");
	CHECK(fp_clock_hz(none.tick_ns), "a tick of %llu ns is no kernel's",
	      (unsigned long long)none.tick_ns);
	check_lag(&none, "calibrated by the retry");
	CHECK(!retry.due_ns && !retry.wait_ns, "the retry after it succeeded: due %llu, wait %llu",
	      (unsigned long long)retry.due_ns, (unsigned long long)retry.wait_ns);
	tl_case_end();

	tl_case_begin("calibrations that keep failing are retried ever less often, to a bound");
	retry = (struct fp_clock_retry){0};
	for (uint64_t i = 0, wait = 10; i < 9; i++, wait = wait * 2 < 600 ? wait * 2 : 600) {
		fp_clock_retry_later(&retry, 1000 * NSEC);
		CHECK(retry.due_ns == (1000 + wait) * NSEC,
		      "after failure %llu: due %llu s after it, want %llu",
		      (unsigned long long)i + 1, (unsigned long long)(retry.due_ns / NSEC - 1000),
		      (unsigned long long)wait);
	}
	tl_case_end();
}
