/* SPDX-License-Identifier: GPL-2.0-only */
/* The command line's options (options.c). */
#ifndef FP_OPTIONS_H
#define FP_OPTIONS_H

#include "common.h"

#define FP_PARSE_EXIT  (-1) /* --help or --version was printed: exit 0 */
#define FP_PARSE_ERROR (-2) /* a one-line error was printed: exit 2 */

extern const char fp_usage_text[];

/*
 * Fills opt from the defaults, the environment and argv. Returns the index of the command
 * in argv (argc when there is none), FP_PARSE_EXIT or FP_PARSE_ERROR.
 */
int fp_options_parse(int argc, char **argv, struct fp_options *opt);

#endif
