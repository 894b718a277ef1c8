// SPDX-License-Identifier: GPL-2.0-only
/* Helpers every fuzz target links. */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fuzz.h"

void fuzz_quiet(void)
{
	int null = open("/dev/null", O_WRONLY);

	if (null < 0 || dup2(null, STDOUT_FILENO) < 0)
		abort();
	close(null);
	fp_log_level = -1;
}

void fuzz_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}
