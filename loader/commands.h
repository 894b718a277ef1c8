/* SPDX-License-Identifier: GPL-2.0-only */
/* The commands cli.c dispatches to: each returns the process's exit status. */
#ifndef FP_COMMANDS_H
#define FP_COMMANDS_H

#include "common.h"

int cmd_attach(int argc, char **argv, struct fp_options *opt); /* attach.c */
int cmd_detach(int argc, char **argv, struct fp_options *opt); /* attach.c */
int cmd_status(int argc, char **argv, struct fp_options *opt); /* status.c */
int cmd_stats(int argc, char **argv, struct fp_options *opt);  /* stats.c */
int cmd_flows(int argc, char **argv, struct fp_options *opt);  /* flows.c */
int cmd_flush(int argc, char **argv, struct fp_options *opt);  /* flows.c */

#endif
