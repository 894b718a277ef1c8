/* SPDX-License-Identifier: GPL-2.0-only */
/* A very small test harness: cases, checks, and the closing "N passed, N failed" line. */
#ifndef FP_TESTLIB_H
#define FP_TESTLIB_H

#include <stdbool.h>
#include <stdio.h>

extern int tl_passed, tl_failed;
extern bool tl_case_ok;
extern const char *tl_case_name;

void tl_case_begin(const char *name);
void tl_case_end(void);
void tl_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Records a failure of the current case and goes on (the case keeps reporting). */
#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond))                                                                       \
			tl_fail(__FILE__, __LINE__, __VA_ARGS__);                                  \
	} while (0)

/* CHECK(got == want) for integers, saying both when it fails. */
#define CHECK_EQ(got, want, what)                                                                  \
	do {                                                                                       \
		long long got_ = (long long)(got), want_ = (long long)(want);                      \
		if (got_ != want_)                                                                 \
			tl_fail(__FILE__, __LINE__, "%s: got %lld, want %lld", (what), got_,       \
				want_);                                                            \
	} while (0)

/* Fatal setup error: the suite cannot run. */
#define DIE(...)                                                                                   \
	do {                                                                                       \
		fprintf(stderr, "fatal: " __VA_ARGS__);                                            \
		fprintf(stderr, "\n");                                                             \
		exit(2);                                                                           \
	} while (0)

void tl_hexdump_diff(const unsigned char *got, unsigned int got_len, const unsigned char *want,
		     unsigned int want_len);

#endif
