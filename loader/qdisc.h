/* SPDX-License-Identifier: GPL-2.0-only */
/* Shaping qdiscs: an XDP redirect bypasses them (qdisc.c). */
#ifndef FP_QDISC_H
#define FP_QDISC_H

#include <stddef.h>

/*
 * Whether ifindex has a qdisc that shapes or polices its traffic, which the fastpath would
 * bypass: returns 1 and its kind in kind (e.g. "htb"), 0 if none, or -errno.
 */
int fp_shaping_qdisc(int ifindex, char *kind, size_t len);

#endif
