// SPDX-License-Identifier: GPL-2.0-only
/*
 * The command line's options: parsed and checked before anything is changed. Kept apart
 * from the commands so that tests/fuzz/fuzz_cli.c can drive it with hostile arguments.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "hooks.h"
#include "instance.h"
#include "options.h"

void fp_usage(FILE *f)
{
	fprintf(f,
		"Usage: xdp-fastpath [OPTIONS] COMMAND [ARGS]\n"
		"\n"
		"XDP flow offload for Linux routers: packets of connections the firewall accepted\n"
		"are NATed and forwarded by XDP; everything else takes the kernel path as before.\n"
		"\n"
		"Commands:\n"
		"  attach IFACE...   load, pin and attach to each interface, start the sync "
		"daemon\n"
		"  detach [IFACE...] detach from the interfaces, await them no more; with none\n"
		"                    (or the last), stop the daemon and remove everything\n"
		"  status            interfaces, daemon, heartbeat, flows, counters\n"
		"  stats             per-reason packet counters of the datapath\n"
		"  flows             the offloaded flows, one line per direction\n"
		"  flush             remove every offloaded flow; the daemon offloads again\n"
		"\n"
		"Options of attach:\n"
		"  -m, --mode MODE      native, generic, tc, split or auto (default auto)\n"
		"  -n, --flows N        flow table size per family, at first attach (default\n"
		"                       twice nf_conntrack_max, from %u to %u)\n"
		"  -l, --lease S        heartbeat lease in seconds: with the daemon silent that\n"
		"                       long, all traffic goes to the kernel; 0 disables (default "
		"%u)\n"
		"      --scan-ms MS     daemon scan interval (default %u)\n"
		"      --skip-mark M[/MASK]  never offload connections whose mark matches\n"
		"  -f, --foreground     run the daemon in the foreground (procd, systemd)\n"
		"      --log-file FILE  background daemon log (default syslog)\n"
		"      --event-buffer B conntrack event socket buffer in bytes (default %u MiB);\n"
		"                       it doubles after every overrun, up to %u MiB\n"
		"      --allow-shaping  attach even where a shaping qdisc (htb, tbf, hfsc, cake,\n"
		"                       ingress) is: offloaded flows bypass it\n"
		"      --steer[=CPUS]   spread the fastpath's work by flow over all CPUs, or "
		"those\n"
		"                       listed (e.g. 1-3), with a cpumap: for NICs with fewer\n"
		"                       receive queues than cores\n"
		"Options of status, stats and flows:\n"
		"  -j, --json           machine-readable output\n"
		"Options of stats:\n"
		"  -w, --watch          print every second, with rates\n"
		"Options of every command:\n"
		"  -p, --pin-dir DIR    pin directory (default $XDP_FASTPATH_PIN_DIR, or\n"
		"                       %s)\n"
		"  -v, --verbose        more log output (twice: debug)\n"
		"  -V, --version        print the version\n"
		"  -h, --help           this text\n",
		FP_MIN_DEFAULT_FLOWS, FP_DEFAULT_FLOWS, FP_DEFAULT_LEASE_S, FP_DEFAULT_SCAN_MS,
		FP_DEFAULT_EVENT_BUFFER_MIB, FP_MAX_EVENT_BUFFER_MIB, FP_DEFAULT_PIN_ROOT);
}

/* A whole number in [min, max], or an error naming the option. */
static int parse_u32(const char *opt, const char *arg, uint32_t min, uint32_t max, uint32_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(arg, &end, 0);
	if (errno || end == arg || *end || arg[0] == '-' || v < min || v > max) {
		fp_err("invalid value for %s: '%s' (a number from %u to %u)", opt, arg, min, max);
		return -EINVAL;
	}
	*out = (uint32_t)v;
	return 0;
}

static int parse_mark(const char *arg, struct fp_options *o)
{
	char buf[64], *slash;

	snprintf(buf, sizeof(buf), "%s", arg);
	slash = strchr(buf, '/');
	if (slash)
		*slash++ = '\0';
	o->skip_mask = 0xffffffff;
	if (parse_u32("--skip-mark", buf, 0, 0xffffffff, &o->skip_mark) ||
	    (slash && parse_u32("--skip-mark mask", slash, 1, 0xffffffff, &o->skip_mask)))
		return -EINVAL;
	o->skip_mark &= o->skip_mask;
	return 0;
}

/* The long options; getopt returns each one's val. */
static const struct option long_opts[] = {
	{"mode", required_argument, NULL, 'm'},
	{"flows", required_argument, NULL, 'n'},
	{"lease", required_argument, NULL, 'l'},
	{"scan-ms", required_argument, NULL, 'S'},
	{"skip-mark", required_argument, NULL, 'K'},
	{"foreground", no_argument, NULL, 'f'},
	{"log-file", required_argument, NULL, 'L'},
	{"event-buffer", required_argument, NULL, 'E'},
	{"allow-shaping", no_argument, NULL, 'A'},
	{"steer", optional_argument, NULL, 'C'},
	{"pin-dir", required_argument, NULL, 'p'},
	{"json", no_argument, NULL, 'j'},
	{"watch", no_argument, NULL, 'w'},
	{"verbose", no_argument, NULL, 'v'},
	{"version", no_argument, NULL, 'V'},
	{"help", no_argument, NULL, 'h'},
	{0},
};

/* The options that only some commands take; every other option applies to all. */
static const struct {
	int val;	      /* getopt's, as in long_opts */
	const char *commands; /* space-separated */
} scoped_options[] = {
	{'m', "attach"},
	{'n', "attach"},
	{'l', "attach"},
	{'S', "attach"},
	{'K', "attach"},
	{'f', "attach"},
	{'L', "attach"},
	{'E', "attach"},
	{'A', "attach"},
	{'C', "attach"},
	{'j', "status stats flows"},
	{'w', "stats"},
};

/* Whether the space-separated list commands names command. */
static bool takes(const char *commands, const char *command)
{
	size_t len = strlen(command);

	for (const char *p = commands; *p; p += strspn(p, " ")) {
		size_t word = strcspn(p, " ");

		if (word == len && !strncmp(p, command, len))
			return true;
		p += word;
	}
	return false;
}

static const char *long_name(int val)
{
	for (const struct option *o = long_opts; o->name; o++)
		if (o->val == val)
			return o->name;
	return "?";
}

int fp_options_check(const struct fp_options *opt, const char *command)
{
	for (size_t i = 0; i < sizeof(scoped_options) / sizeof(scoped_options[0]); i++) {
		if (!(opt->scoped_given & (1u << i)) || takes(scoped_options[i].commands, command))
			continue;
		fp_err("--%s does not apply to %s (only to: %s)", long_name(scoped_options[i].val),
		       command, scoped_options[i].commands);
		return FP_PARSE_ERROR;
	}
	return 0;
}

int fp_options_parse(int argc, char **argv, struct fp_options *opt)
{
	int c;

	*opt = (struct fp_options){
		.pin_dir = getenv("XDP_FASTPATH_PIN_DIR") ? getenv("XDP_FASTPATH_PIN_DIR")
							  : FP_DEFAULT_PIN_ROOT,
		.lease_s = FP_DEFAULT_LEASE_S,
		.scan_ms = FP_DEFAULT_SCAN_MS,
		.event_buffer = FP_DEFAULT_EVENT_BUFFER_MIB << 20,
	};
	optind = 0; /* glibc: a full reinitialisation, so it may be called again */

	while ((c = getopt_long(argc, argv, "m:n:l:fp:jwvVh", long_opts, NULL)) != -1) {
		for (size_t i = 0; i < sizeof(scoped_options) / sizeof(scoped_options[0]); i++)
			if (scoped_options[i].val == c)
				opt->scoped_given |= 1u << i;
		switch (c) {
		case 'm':
			if (!strcmp(optarg, "native")) {
				opt->mode = FP_HOOK_NATIVE;
			} else if (!strcmp(optarg, "generic")) {
				opt->mode = FP_HOOK_GENERIC;
			} else if (!strcmp(optarg, "tc")) {
				opt->mode = FP_HOOK_TC;
			} else if (!strcmp(optarg, "split")) {
				opt->mode = FP_HOOK_SPLIT;
			} else if (!strcmp(optarg, "auto")) {
				opt->mode = FP_HOOK_AUTO;
			} else {
				fp_err("invalid value for --mode: '%s' (%s)", optarg,
				       "native, generic, tc, split or auto");
				return FP_PARSE_ERROR;
			}
			break;
		case 'n':
			if (parse_u32("--flows", optarg, 1, 1 << 24, &opt->flows))
				return FP_PARSE_ERROR;
			break;
		case 'l':
			if (parse_u32("--lease", optarg, 0, 3600, &opt->lease_s))
				return FP_PARSE_ERROR;
			break;
		case 'S':
			if (parse_u32("--scan-ms", optarg, 10, 60000, &opt->scan_ms))
				return FP_PARSE_ERROR;
			break;
		case 'K':
			if (parse_mark(optarg, opt))
				return FP_PARSE_ERROR;
			break;
		case 'f':
			opt->foreground = true;
			break;
		case 'A':
			opt->allow_shaping = true;
			break;
		case 'C': {
			bool cpus[FP_MAX_CPUS];

			opt->steer = true;
			opt->steer_cpus = optarg;
			if (optarg && fp_parse_cpulist(optarg, cpus, FP_MAX_CPUS) < 0) {
				fp_err("invalid value for --steer: '%s' (a CPU list, e.g. 1-3)",
				       optarg);
				return FP_PARSE_ERROR;
			}
			break;
		}
		case 'L':
			opt->log_file = optarg;
			break;
		case 'E':
			if (parse_u32("--event-buffer", optarg, 4096, FP_MAX_EVENT_BUFFER_MIB << 20,
				      &opt->event_buffer))
				return FP_PARSE_ERROR;
			break;
		case 'p':
			if (optarg[0] != '/' || strlen(optarg) > PATH_MAX - 32) {
				fp_err("invalid value for --pin-dir: '%s' (an absolute path)",
				       optarg);
				return FP_PARSE_ERROR;
			}
			opt->pin_dir = optarg;
			break;
		case 'j':
			opt->json = true;
			break;
		case 'w':
			opt->watch = true;
			break;
		case 'v':
			opt->verbose++;
			break;
		case 'V':
			printf("xdp-fastpath %s\n", FP_VERSION);
			return FP_PARSE_EXIT;
		case 'h':
			fp_usage(stdout);
			return FP_PARSE_EXIT;
		default:
			fprintf(stderr, "Try 'xdp-fastpath --help'.\n");
			return FP_PARSE_ERROR;
		}
	}
	if (opt->lease_s && (uint64_t)opt->lease_s * 1000 < 2ull * opt->scan_ms) {
		fp_err("--lease %u s is shorter than two scans (--scan-ms %u): the fastpath would "
		       "keep switching off",
		       opt->lease_s, opt->scan_ms);
		return FP_PARSE_ERROR;
	}
	return optind;
}
