/* SPDX-License-Identifier: GPL-2.0-only */
/* The flow maps from userspace: keys, values, walking, inserting, deleting. */
#ifndef FP_FLOWMAP_H
#define FP_FLOWMAP_H

#include "common.h"
#include "conntable.h"

union fp_flow_key {
	struct fp_flow_key4 v4;
	struct fp_flow_key6 v6;
};

/*
 * An IPv6 entry as userspace handles it, in the IPv4 entry's shape: fp_flows6's entry
 * (struct fp_flow6) joined with its translation (fp_nat6) and its next hop's entry
 * (fp_nh_ctx), with its slot's state. meta.nh_gen holds the entry's 8 bits.
 */
struct fp_flow6_full {
	__u64 bytes;
	__u32 packets;
	struct fp_flow_meta meta;
	__be32 nat_saddr[4];
	__be32 nat_daddr[4];
	__be16 nat_sport;
	__be16 nat_dport;
	__u8 state;
};

union fp_flow_value {
	struct fp_flow4 v4;
	struct fp_flow6_full v6;
};

/* The entry and translation of @full, as fp_flows6's slots and fp_nat6 hold them; the
 * next hop stays unresolved (nh_gen 0), as userspace inserts every entry. */
void fp_flow6_split(const struct fp_flow6_full *full, struct fp_flow6 *flow, struct fp_nat6 *nat);
/* @flow with its translation @nat and its next hop's entry @ctx (either NULL: none); the
 * state is the slot's, for the caller to fill in. */
void fp_flow6_join(const struct fp_flow6 *flow, const struct fp_nat6 *nat,
		   const struct fp_nh_ctx *ctx, struct fp_flow6_full *full);

void fp_tuple_to_key(const struct fp_tuple *t, uint32_t ingress, union fp_flow_key *key);
void fp_key_to_tuple(int family, const union fp_flow_key *key, struct fp_tuple *t,
		     uint32_t *ingress);
/* Inserts a new entry, and before it its conntrack mark if @mark is not 0 (the value then
 * has FP_FLOW_MARK). -EEXIST if one translating the same way is there: it stays, with its
 * counters and next hop; one translating otherwise is replaced. -E2BIG if the map is full. */
int fp_flow_insert(const struct fp_instance *inst, int family, const union fp_flow_key *key,
		   const union fp_flow_value *value, uint32_t mark);
/* Deletes an entry, and then its mark if it has one (@marked). An IPv4 key's state is
 * ignored: a walk's may have one. */
int fp_flow_delete(const struct fp_instance *inst, int family, const union fp_flow_key *key,
		   bool marked);
/* Makes the IPv4 entries inserted since the last call live, after a grace period, and the
 * slots deleted since free for reuse (slottable.h): after every batch of changes. */
int fp_flows_sync(const struct fp_instance *inst);
/*
 * For a generation @gen that has entered the other half of fp_nh_ctx (fp_nh_ctx_half):
 * clears the cached next hop of every entry whose generation is neither 0 nor @gen's low
 * 8 or 16 bits, which entries keep, so that no generation a wrap brings back (255 later)
 * finds an entry that cached it; then, after a grace period, empties the half of
 * fp_nh_ctx that no program can use any more. Also called as a daemon starts, for what
 * an earlier one left. 0, or -errno if it could not empty the half.
 */
int fp_flows_forget_next_hops(const struct fp_instance *inst, uint32_t gen);
/* Whether the datapath saw the flow's FIN or RST: its key as a walk or a read gives it. */
bool fp_flow_closing(int family, const union fp_flow_key *key);
/* The live entry with @key (its state ignored), as the datapath has it now: 0 with @value
 * and the key's state filled in, or -errno. A read of the mapped table, no syscall; for a
 * NAT66 flow a lookup in fp_nat6 too. An IPv6 entry's next hop is left out (meta's MACs,
 * tags, MTU and port 0: a walk gives them). */
int fp_flow_read(const struct fp_instance *inst, int family, union fp_flow_key *key,
		 union fp_flow_value *value);
/* Calls fn for every live entry of the family's table; fn may delete entries. */
int fp_flows_walk(const struct fp_instance *inst, int family,
		  int (*fn)(int family, const union fp_flow_key *key,
			    const union fp_flow_value *value, void *arg),
		  void *arg);
/* Removes every entry arriving on, or cached as leaving through, ifindex: how many. */
uint32_t fp_flows_delete_ifindex(const struct fp_instance *inst, uint32_t ifindex);
/* Removes every entry, and every mark: how many entries, batched where the kernel can. */
uint32_t fp_flows_delete_all(const struct fp_instance *inst);
int fp_flows_count(const struct fp_instance *inst, uint32_t *v4, uint32_t *v6);

#endif
