/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The byte order of the BPF target, not of the machine that builds: the UAPI headers take
 * their bitfield order (iphdr's version and ihl, tcphdr's doff and flags) from
 * asm/byteorder.h, and the build machine's (x86: little endian) would lay them out wrong in
 * a big-endian object (-target bpfeb, for ath79). Found first in the s390x guest: every
 * IPv4 packet was "malformed" there. This header comes first in the BPF include path.
 */
#ifndef FP_ASM_BYTEORDER_H
#define FP_ASM_BYTEORDER_H

#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#include <linux/byteorder/big_endian.h>
#elif __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#include <linux/byteorder/little_endian.h>
#else
#error "unknown byte order"
#endif

#endif /* FP_ASM_BYTEORDER_H */
