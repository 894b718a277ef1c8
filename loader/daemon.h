/* SPDX-License-Identifier: GPL-2.0-only */
/* The sync daemon: start, stop, find (daemon.c). */
#ifndef FP_DAEMON_H
#define FP_DAEMON_H

#include "common.h"

int fp_daemon_start(struct fp_instance *inst, const struct fp_options *opt);
int fp_daemon_stop(const struct fp_instance *inst);
/* The pid of the instance's running daemon, or 0. */
int fp_daemon_pid(const struct fp_instance *inst);

#endif
