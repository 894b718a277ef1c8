// SPDX-License-Identifier: GPL-2.0-only
/*
 * fp-bench: the benchmark's helper (see run.sh). Run it inside the right network namespace
 * with nsenter --net, so that its pins in PINDIR stay visible to the next call.
 *
 *   fp-bench sink PINDIR IFACE                 attach the counting sink to IFACE
 *   fp-bench pass PINDIR IFACE 0|1             the sink drops (0) or passes up (1) frames
 *   fp-bench count PINDIR IFACE                IP frames the sink (or ceiling) saw
 *   fp-bench ceiling PINDIR IN OUT DMAC SMAC   bare redirect IN -> OUT with new MACs
 *   fp-bench detach PINDIR IFACE               remove what was attached to IFACE
 *   fp-bench gen IFACE FLOWS PACKETS SECONDS DMAC SMAC SADDR DADDR [PACE_US [DPORT_BASE]]
 *        send 64-byte UDP frames over FLOWS flows from IFACE (XDP_TX of live frames), until
 *        PACKETS were sent (0: no limit) or SECONDS passed; prints "sent N in T s".
 *        With PACE_US, 64 frames at a time with that pause between: for establishing flows,
 *        whose replies must not overflow the veth rings on the way back.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/stat.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bench.h"
#include "bench.skel.h"

#define FRAME_LEN  60 /* 64 bytes on the wire with the FCS */
#define GEN_REPEAT (1 << 16)

static int die(const char *what)
{
	fprintf(stderr, "fp-bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int ifindex_of(const char *name)
{
	int ifindex = if_nametoindex(name);

	if (!ifindex)
		die(name);
	return ifindex;
}

static void parse_mac(const char *s, __u8 *mac)
{
	if (sscanf(s, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &mac[0], &mac[1], &mac[2], &mac[3], &mac[4],
		   &mac[5]) != 6) {
		fprintf(stderr, "fp-bench: bad MAC address %s\n", s);
		exit(2);
	}
}

static void pin_path(char *buf, const char *dir, const char *iface, const char *what)
{
	snprintf(buf, PATH_MAX, "%s/%s_%s", dir, iface, what); /* bpffs: no dots */
}

/* Attaches prog to iface in native mode and pins link, config and counter. */
static struct bench *attach(const char *dir, const char *iface, int which)
{
	struct bench *skel = bench__open_and_load();
	struct bpf_program *prog;
	struct bpf_link *link;
	char path[PATH_MAX];

	if (!skel)
		die("loading the benchmark programs");
	prog = which ? skel->progs.xdp_redirect : skel->progs.xdp_sink;
	link = bpf_program__attach_xdp(prog, ifindex_of(iface));
	if (!link)
		die(iface);
	mkdir(dir, 0700);
	pin_path(path, dir, iface, "link");
	if (bpf_link__pin(link, path))
		die(path);
	pin_path(path, dir, iface, "cfg");
	if (bpf_map__pin(skel->maps.bench_cfg, path))
		die(path);
	pin_path(path, dir, iface, "count");
	if (bpf_map__pin(skel->maps.bench_count, path))
		die(path);
	return skel;
}

static int open_pin(const char *dir, const char *iface, const char *what)
{
	char path[PATH_MAX];
	int fd;

	pin_path(path, dir, iface, what);
	fd = bpf_obj_get(path);
	if (fd < 0)
		die(path);
	return fd;
}

static unsigned long long count(const char *dir, const char *iface)
{
	int fd = open_pin(dir, iface, "count"), nr_cpus = libbpf_num_possible_cpus();
	unsigned long long total = 0, values[nr_cpus];
	__u32 zero = 0;

	if (bpf_map_lookup_elem(fd, &zero, values))
		die("count");
	for (int i = 0; i < nr_cpus; i++)
		total += values[i];
	return total;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int generate(char **argv)
{
	struct bench *skel = bench__open_and_load();
	struct bench_cfg cfg = { .nr_flows = strtoul(argv[1], NULL, 0) };
	unsigned long long limit = strtoull(argv[2], NULL, 0), sent = 0;
	double seconds = atof(argv[3]), start;
	unsigned int pace_us = argv[8] ? strtoul(argv[8], NULL, 0) : 0;

	cfg.dport_base = argv[8] && argv[9] ? strtoul(argv[9], NULL, 0) : 0;
	__u8 frame[FRAME_LEN] = { 0 };
	__u32 zero = 0;

	if (!skel)
		die("loading the generator");
	parse_mac(argv[4], cfg.dmac);
	parse_mac(argv[5], cfg.smac);
	if (inet_pton(AF_INET, argv[6], &cfg.saddr) != 1 || inet_pton(AF_INET, argv[7], &cfg.daddr) != 1)
		die("addresses");
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.bench_cfg), &zero, &cfg, 0))
		die("generator config");

	struct xdp_md ctx = { .data_end = FRAME_LEN, .ingress_ifindex = ifindex_of(argv[0]) };
	start = now_s();
	while ((!limit || sent < limit) && now_s() - start < seconds) {
		unsigned long long batch = pace_us ? 64 : GEN_REPEAT;

		if (limit && limit - sent < batch)
			batch = limit - sent;
		LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = frame, .data_size_in = sizeof(frame),
			    .ctx_in = &ctx, .ctx_size_in = sizeof(ctx), .repeat = batch,
			    .flags = BPF_F_TEST_XDP_LIVE_FRAMES, .batch_size = 64);

		if (bpf_prog_test_run_opts(bpf_program__fd(skel->progs.xdp_gen), &opts))
			die("BPF_PROG_TEST_RUN live frames");
		sent += batch;
		if (pace_us)
			usleep(pace_us);
	}
	printf("sent %llu in %.3f s\n", sent, now_s() - start);
	bench__destroy(skel);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "sink")) {
		bench__destroy(attach(argv[2], argv[3], 0));
		return 0;
	}
	if (argc == 5 && !strcmp(argv[1], "pass")) {
		struct bench_cfg cfg = { .pass = atoi(argv[4]) };
		__u32 zero = 0;

		return bpf_map_update_elem(open_pin(argv[2], argv[3], "cfg"), &zero, &cfg, 0) ? die("pass") : 0;
	}
	if (argc == 4 && !strcmp(argv[1], "count")) {
		printf("%llu\n", count(argv[2], argv[3]));
		return 0;
	}
	if (argc == 7 && !strcmp(argv[1], "ceiling")) {
		struct bench *skel = attach(argv[2], argv[3], 1);
		struct bench_cfg cfg = { 0 };
		__u32 zero = 0, out = ifindex_of(argv[4]);

		parse_mac(argv[5], cfg.dmac);
		parse_mac(argv[6], cfg.smac);
		if (bpf_map_update_elem(bpf_map__fd(skel->maps.bench_cfg), &zero, &cfg, 0) ||
		    bpf_map_update_elem(bpf_map__fd(skel->maps.bench_tx), &zero, &out, 0))
			die("ceiling config");
		bench__destroy(skel);
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "detach")) {
		static const char *const what[] = { "link", "cfg", "count" };
		char path[PATH_MAX];

		for (int i = 0; i < 3; i++) {
			pin_path(path, argv[2], argv[3], what[i]);
			unlink(path);
		}
		return 0;
	}
	if (argc >= 10 && argc <= 12 && !strcmp(argv[1], "gen"))
		return generate(argv + 2);
	fprintf(stderr, "usage: see the top of tests/bench/fp_bench.c\n");
	return 2;
}
