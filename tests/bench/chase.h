/* SPDX-License-Identifier: GPL-2.0-only */
/* Shared by chase.bpf.c and fp-bench lookup-chase. */
#ifndef FP_CHASE_H
#define FP_CHASE_H

#include <linux/types.h>

#define CHASE_STEPS  64		 /* lookups per program run */
#define CHASE_PROBES 64		 /* slots a lookup in the slot table looks at, at most */
#define CHASE_LOST   0xffffffffu /* a lookup found nothing: the tables are wrong */

/* Sizes as the IPv4 flow map's before the slot table (2026-12-03): a 16-byte key, a
 * 56-byte value. */
struct chase_key {
	__u32 word[4];
};

struct chase_value {
	__u32 next; /* the entry the chase looks up next */
	__u8 rest[52];
};

/* Key and value in one 64-byte slot: 16 + 48 bytes. */
struct chase_slot {
	struct chase_key key;
	__u32 next;
	__u8 rest[44];
};

/* Entry @i's key, written a word at a time as the datapath writes its keys: addresses,
 * then ports, then ingress and protocol. */
static inline __attribute__((always_inline)) void chase_key_of(__u32 i, struct chase_key *key)
{
	key->word[0] = 0xc6120000 ^ i;
	key->word[1] = 0xc6130202;
	key->word[2] = i * 2654435761u;
	key->word[3] = 0x0611;
}

/* The slot table's hash: cheap, a multiply and a fold, so that every key bit reaches the
 * low bits a slot's index is taken from. */
static inline __attribute__((always_inline)) __u32 chase_hash(const struct chase_key *key)
{
	__u32 h = key->word[0] ^ (key->word[1] << 7 | key->word[1] >> 25) ^
		  (key->word[2] << 13 | key->word[2] >> 19) ^ key->word[3];

	h *= 0x9e3779b1;
	return h ^ h >> 15;
}

/* The IPv6 flow map's sizes (fp_flow_key6, fp_flow6): a 40-byte key, an 80-byte value. */
struct chase_key6 {
	__u32 word[10];
};

struct chase_value6 {
	__u32 next;
	__u8 rest[76];
};

/* Key and value in one 128-byte slot, two cache lines: 40 + 88 bytes. */
struct chase_slot6 {
	struct chase_key6 key;
	__u32 next;
	__u8 rest[84];
};

/* Entry @i's IPv6 key: two addresses (2001:2::/48 read in host order, as the IPv4 key's
 * are), the first differing in its last word, then the words of the IPv4 key's tail. */
static inline __attribute__((always_inline)) void chase_key6_of(__u32 i, struct chase_key6 *key)
{
	key->word[0] = 0x20010002;
	key->word[1] = 0;
	key->word[2] = 0;
	key->word[3] = i;
	key->word[4] = 0x20010002;
	key->word[5] = 0x00010000;
	key->word[6] = 0;
	key->word[7] = 2;
	key->word[8] = i * 2654435761u;
	key->word[9] = 0x0611;
}

static inline __attribute__((always_inline)) __u32 chase_hash6(const struct chase_key6 *key)
{
	__u32 h = 0;

	for (int i = 0; i < 10; i++)
		h = (h << 7 | h >> 25) ^ key->word[i];
	h *= 0x9e3779b1;
	return h ^ h >> 15;
}

#endif
