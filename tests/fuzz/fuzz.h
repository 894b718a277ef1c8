/* SPDX-License-Identifier: GPL-2.0-only */
/* What the fuzz targets share (fake_instance.c). */
#ifndef FP_FUZZ_H
#define FP_FUZZ_H

#include <stddef.h>

#include "common.h"

#define FUZZ_LAN_IFINDEX 2 /* the fake router's attached interfaces */
#define FUZZ_WAN_IFINDEX 3

/* Messages the code prints go nowhere: a fuzzer prints millions. */
void fuzz_quiet(void);
/* Creates inst's flow maps: real BPF hash maps like the datapath's. Needs root. */
void fuzz_flow_maps(struct fp_instance *inst);
size_t fuzz_flow_entries(const struct fp_instance *inst);
size_t fuzz_mark_entries(const struct fp_instance *inst); /* fp_marks4 and fp_marks6 */
void fuzz_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif
