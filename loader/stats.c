// SPDX-License-Identifier: GPL-2.0-only
/* The stats command: the datapath's per-CPU counters, summed; --watch adds rates. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "common.h"
#include "instance.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void print_stats(const uint64_t *now, const uint64_t *prev, double elapsed_s, bool json)
{
	if (json) {
		printf("{");
		for (int i = 0; i < FP_STAT_MAX; i++) {
			printf("%s\"%s\": %llu", i ? ", " : "", fp_stat_names[i],
			       (unsigned long long)now[i]);
			if (prev)
				printf(", \"%s_per_s\": %.1f", fp_stat_names[i],
				       (double)(now[i] - prev[i]) / elapsed_s);
		}
		printf("}\n");
	} else {
		for (int i = 0; i < FP_STAT_MAX; i++) {
			printf("%-26s %20llu", fp_stat_names[i], (unsigned long long)now[i]);
			if (prev)
				printf("  %14.1f/s", (double)(now[i] - prev[i]) / elapsed_s);
			printf("\n");
		}
	}
	fflush(stdout);
}

int cmd_stats(int argc, char **argv, struct fp_options *opt)
{
	uint64_t stats[FP_STAT_MAX], prev[FP_STAT_MAX];
	struct fp_instance inst;
	uint64_t t_prev;
	int err;

	(void)argv;
	err = fp_command_open("stats", argc, opt, &inst);
	if (err)
		return err;
	err = fp_read_stats(&inst, stats);
	if (err) {
		fp_err("cannot read the counters: %s", strerror(-err));
		fp_instance_close(&inst);
		return 1;
	}
	if (!opt->watch) {
		print_stats(stats, NULL, 0, opt->json);
		fp_instance_close(&inst);
		return 0;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	t_prev = fp_now_ns();
	while (!stop) {
		uint64_t t;

		memcpy(prev, stats, sizeof(stats));
		sleep(1);
		if (stop || fp_read_stats(&inst, stats))
			break;
		t = fp_now_ns();
		if (!opt->json)
			printf("\n");
		print_stats(stats, prev, (double)(t - t_prev) / 1e9, opt->json);
		t_prev = t;
	}
	fp_instance_close(&inst);
	return 0;
}
