/* SPDX-License-Identifier: GPL-2.0-only */
/* The command line's options (options.c). */
#ifndef FP_OPTIONS_H
#define FP_OPTIONS_H

#include "common.h"

#define FP_DEFAULT_LEASE_S	    5
#define FP_DEFAULT_SCAN_MS	    1000
#define FP_DEFAULT_EVENT_BUFFER_MIB 4
#define FP_MAX_EVENT_BUFFER_MIB	    128

#define FP_PARSE_EXIT  (-1) /* --help or --version was printed: exit 0 */
#define FP_PARSE_ERROR (-2) /* a one-line error was printed: exit 2 */

#include <stdio.h>

void fp_usage(FILE *f);

/*
 * Fills opt from the defaults, the environment and argv. Returns the index of the command
 * in argv (argc when there is none), FP_PARSE_EXIT or FP_PARSE_ERROR.
 */
int fp_options_parse(int argc, char **argv, struct fp_options *opt);
/* Whether every option given applies to command: 0, or FP_PARSE_ERROR with a one-line error. */
int fp_options_check(const struct fp_options *opt, const char *command);

#endif
