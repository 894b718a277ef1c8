// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: the command line's option parser. The input is split at NUL bytes into
 * arguments. Whatever they are, the parser either fails (with its one-line error), exits
 * (help, version), or returns options that are all within their documented ranges.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "options.h"

#define MAX_ARGS 32

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_quiet();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *copy = malloc(size + 1), *argv[MAX_ARGS + 2];
	struct fp_options opt;
	int argc = 1, first;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	copy[size] = '\0';
	argv[0] = "xdp-fastpath";
	for (char *p = copy; p < copy + size && argc <= MAX_ARGS; p += strlen(p) + 1)
		argv[argc++] = p;
	argv[argc] = NULL;

	first = fp_options_parse(argc, argv, &opt);
	if (first >= 0) {
		if (first > argc)
			fuzz_fail("command index %d past argc %d", first, argc);
		if (opt.flows > 1 << 24) /* 0: not given, sized from conntrack's limit */
			fuzz_fail("flows %u", opt.flows);
		if (opt.lease_s > 3600 || opt.scan_ms < 10 || opt.scan_ms > 60000)
			fuzz_fail("lease %u scan %u", opt.lease_s, opt.scan_ms);
		if (opt.lease_s && opt.lease_s * 1000ull < 2ull * opt.scan_ms)
			fuzz_fail("lease %u shorter than two scans of %u ms", opt.lease_s,
				  opt.scan_ms);
		if (opt.skip_mark & ~opt.skip_mask)
			fuzz_fail("mark %#x outside mask %#x", opt.skip_mark, opt.skip_mask);
		if (opt.event_buffer < 4096 || opt.event_buffer > 128 << 20)
			fuzz_fail("event buffer %u", opt.event_buffer);
		if (!opt.pin_dir || opt.pin_dir[0] != '/')
			fuzz_fail("pin dir '%s'", opt.pin_dir ? opt.pin_dir : "(null)");
		/* Whatever the command's name, the check says yes or gives an error. */
		if (first < argc && fp_options_check(&opt, argv[first]) != 0 &&
		    fp_options_check(&opt, argv[first]) != FP_PARSE_ERROR)
			fuzz_fail("check returned neither 0 nor an error");
	} else if (first != FP_PARSE_EXIT && first != FP_PARSE_ERROR) {
		fuzz_fail("parse returned %d", first);
	}
	free(copy);
	return 0;
}
