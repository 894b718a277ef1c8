/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Incremental Internet checksum updates (RFC 1624, eqn. 3: HC' = ~(~HC + ~m + m')).
 *
 * One's-complement sums do not depend on byte order (RFC 1071, 2.B), so every helper works
 * on header fields exactly as they sit in the packet, in network byte order.
 * A delta is a 32-bit accumulator of (~old + new) terms, folded once when applied.
 */
#ifndef FP_CSUM_H
#define FP_CSUM_H

#include <stdbool.h>
#include <linux/types.h>
#include <bpf/bpf_helpers.h>

static __always_inline __u32 csum_delta16(__u32 delta, __u16 old, __u16 new)
{
	return delta + (__u16)~old + new;
}

static __always_inline __u32 csum_delta32(__u32 delta, __u32 old, __u32 new)
{
	delta = csum_delta16(delta, old >> 16, new >> 16);
	return csum_delta16(delta, old & 0xffff, new & 0xffff);
}

static __always_inline __u16 csum_fold(__u32 sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return sum;
}

/* A sum of 32-bit words, in 64 bits, folded to 32: one fold leaves at most 33 bits, the
 * next 32. The same one's-complement sum (RFC 1071). */
static __always_inline __u32 csum_fold64(__u64 sum)
{
	sum = (sum & 0xffffffff) + (sum >> 32);
	return (sum & 0xffffffff) + (sum >> 32);
}

/* The checksum field @check after the changes summed in @delta. */
static __always_inline __u16 csum_apply(__u16 check, __u32 delta)
{
	return ~csum_fold((__u16)~check + delta);
}

/* True if the 20-byte IPv4 header at @iph (no options) carries a valid checksum. Summed
 * by 32-bit words, half the loads of 16-bit ones: the folded sum is the same (RFC 1071). */
static __always_inline bool csum_ipv4_header_ok(const void *iph)
{
	const __u32 *word = iph;
	__u64 sum = 0;

#pragma unroll
	for (int i = 0; i < 5; i++)
		sum += word[i];
	return csum_fold(csum_fold64(sum)) == 0xffff;
}

#endif /* FP_CSUM_H */
