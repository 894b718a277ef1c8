// SPDX-License-Identifier: GPL-2.0-only
/*
 * fp-bench lookup-chase: what one flow lookup costs when the entry is not in the cache,
 * for the kernel's hash map and for a table of slots in an array, open addressing, key
 * and value in one slot (issue 13's "one cache line serves a lookup"). lookup-chase has
 * the IPv4 flow map's former sizes and 64-byte slots (which fp_flows4 became);
 * lookup-chase6 the IPv6 flow map's, and slots of 128 bytes. Each program makes
 * CHASE_STEPS lookups in a row, each of the key the entry found before it names: no lookup
 * can start before the last one has finished, as a packet's cannot before its headers are
 * read, and fp-bench links the entries in one random cycle, so that every lookup lands
 * somewhere else in the table.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "chase.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1); /* fp-bench sizes both tables before load */
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct chase_key);
	__type(value, struct chase_value);
} chase_htab SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct chase_slot);
} chase_slots SEC(".maps");

/* The same for IPv6's sizes: its hash map, and slots of two cache lines in a mappable
 * array, as fp_flows4 is, whose slots start on a page and so never straddle a third line. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct chase_key6);
	__type(value, struct chase_value6);
} chase6_htab SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct chase_slot6);
} chase6_slots SEC(".maps");

const volatile __u32 chase_slot_mask = 0;
__u32 chase_at = 0; /* where the chase goes on from in the next run */

/* One lookup of each kind, the next key from the entry it found (bpf_loop callbacks: a
 * plain loop of lookups with probes in it is more than the verifier walks). */
static long chase_htab_step(__u32 step, __u32 *at)
{
	struct chase_key key;
	struct chase_value *value;

	chase_key_of(*at, &key);
	value = bpf_map_lookup_elem(&chase_htab, &key);
	if (!value) {
		*at = CHASE_LOST;
		return 1;
	}
	*at = value->next;
	return 0;
}

static long chase_slots_step(__u32 step, __u32 *at)
{
	struct chase_key key;
	__u32 slot;

	chase_key_of(*at, &key);
	slot = chase_hash(&key);
	for (int probe = 0; probe < CHASE_PROBES; probe++) {
		__u32 index = (slot + probe) & chase_slot_mask;
		struct chase_slot *s = bpf_map_lookup_elem(&chase_slots, &index);

		if (!s)
			break;
		if (s->key.word[0] == key.word[0] && s->key.word[1] == key.word[1] &&
		    s->key.word[2] == key.word[2] && s->key.word[3] == key.word[3]) {
			*at = s->next;
			return 0;
		}
	}
	*at = CHASE_LOST;
	return 1;
}

static long chase6_htab_step(__u32 step, __u32 *at)
{
	struct chase_key6 key;
	struct chase_value6 *value;

	chase_key6_of(*at, &key);
	value = bpf_map_lookup_elem(&chase6_htab, &key);
	if (!value) {
		*at = CHASE_LOST;
		return 1;
	}
	*at = value->next;
	return 0;
}

/* The key compared as five 64-bit words, as the IPv4 datapath compares its two. */
static long chase6_slots_step(__u32 step, __u32 *at)
{
	struct chase_key6 key;
	__u32 slot;

	chase_key6_of(*at, &key);
	slot = chase_hash6(&key);
	for (int probe = 0; probe < CHASE_PROBES; probe++) {
		__u32 index = (slot + probe) & chase_slot_mask;
		struct chase_slot6 *s = bpf_map_lookup_elem(&chase6_slots, &index);
		const __u64 *have, *want = (const __u64 *)&key;

		if (!s)
			break;
		have = (const __u64 *)&s->key;
		if (have[0] == want[0] && have[1] == want[1] && have[2] == want[2] &&
		    have[3] == want[3] && have[4] == want[4]) {
			*at = s->next;
			return 0;
		}
	}
	*at = CHASE_LOST;
	return 1;
}

static __always_inline int chase(void *step)
{
	__u32 at = chase_at;

	bpf_loop(CHASE_STEPS, step, &at, 0);
	if (at == CHASE_LOST)
		return XDP_ABORTED;
	chase_at = at;
	return XDP_PASS;
}

SEC("xdp")
int chase_htab_run(struct xdp_md *ctx)
{
	return chase(chase_htab_step);
}

SEC("xdp")
int chase_slots_run(struct xdp_md *ctx)
{
	return chase(chase_slots_step);
}

SEC("xdp")
int chase6_htab_run(struct xdp_md *ctx)
{
	return chase(chase6_htab_step);
}

SEC("xdp")
int chase6_slots_run(struct xdp_md *ctx)
{
	return chase(chase6_slots_step);
}

char LICENSE[] SEC("license") = "GPL";
