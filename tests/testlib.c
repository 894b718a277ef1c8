// SPDX-License-Identifier: GPL-2.0-only
#include <stdarg.h>
#include <stdio.h>

#include "testlib.h"

int tl_passed, tl_failed;
bool tl_case_ok;
const char *tl_case_name;

void tl_case_begin(const char *name)
{
	tl_case_name = name;
	tl_case_ok = true;
}

void tl_case_end(void)
{
	if (tl_case_ok)
		tl_passed++;
	else
		tl_failed++;
	printf("%s - %s\n", tl_case_ok ? "ok  " : "FAIL", tl_case_name);
	fflush(stdout);
}

void tl_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	tl_case_ok = false;
	fprintf(stdout, "  %s:%d: [%s] ", file, line, tl_case_name);
	va_start(ap, fmt);
	vfprintf(stdout, fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
}

void tl_hexdump_diff(const unsigned char *got, unsigned int got_len, const unsigned char *want,
		     unsigned int want_len)
{
	unsigned int n = got_len > want_len ? got_len : want_len;

	printf("  offset  got want (length %u, want %u)\n", got_len, want_len);
	for (unsigned int i = 0; i < n; i++) {
		int g = i < got_len ? got[i] : -1, w = i < want_len ? want[i] : -1;

		if (g != w)
			printf("  %6u   %02x  %02x\n", i, g & 0xff, w & 0xff);
	}
}
