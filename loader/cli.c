// SPDX-License-Identifier: GPL-2.0-only
/*
 * xdp-fastpath: the command line. Options may come before or after the command; every
 * value is checked before anything is changed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <bpf/libbpf.h>

#include "common.h"
#include "commands.h"
#include "options.h"

struct command {
	const char *name;
	int (*fn)(int argc, char **argv, struct fp_options *opt);
};

static const struct command commands[] = {
	{"attach", cmd_attach}, {"detach", cmd_detach}, {"status", cmd_status},
	{"stats", cmd_stats},	{"flows", cmd_flows},	{"flush", cmd_flush},
};

int main(int argc, char **argv)
{
	struct fp_options opt;
	int first = fp_options_parse(argc, argv, &opt);

	if (first == FP_PARSE_EXIT)
		return 0;
	if (first == FP_PARSE_ERROR)
		return 2;
	fp_log_level = opt.verbose >= 2 ? LOG_DEBUG : opt.verbose ? LOG_INFO : LOG_NOTICE;
	libbpf_set_print(fp_libbpf_print);

	if (first >= argc) {
		fp_usage(stderr);
		return 2;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[first], commands[i].name))
			return fp_options_check(&opt, argv[first]) == FP_PARSE_ERROR
				       ? 2
				       : commands[i].fn(argc - first - 1, argv + first + 1, &opt);
	fp_err("unknown command '%s' (see 'xdp-fastpath --help')", argv[first]);
	return 2;
}
