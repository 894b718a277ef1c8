// SPDX-License-Identifier: GPL-2.0-only
/* The flow maps from userspace: keys, values, walking, inserting, deleting. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <bpf/bpf.h>

#include "flowmap.h"
#include "slottable.h"

#define WALK_CHUNK	1024
#define KERNEL_ENOTSUPP 524 /* not in userspace's errno.h */

void fp_tuple_to_key(const struct fp_tuple *t, uint32_t ingress, union fp_flow_key *key)
{
	memset(key, 0, sizeof(*key));
	if (t->family == AF_INET) {
		key->v4.ifindex = ingress;
		key->v4.saddr = t->src[0];
		key->v4.daddr = t->dst[0];
		key->v4.sport = t->sport;
		key->v4.dport = t->dport;
		key->v4.proto = t->proto;
	} else {
		key->v6.ifindex = ingress;
		memcpy(key->v6.saddr, t->src, 16);
		memcpy(key->v6.daddr, t->dst, 16);
		key->v6.sport = t->sport;
		key->v6.dport = t->dport;
		key->v6.proto = t->proto;
	}
}

void fp_key_to_tuple(int family, const union fp_flow_key *key, struct fp_tuple *t,
		     uint32_t *ingress)
{
	memset(t, 0, sizeof(*t));
	t->family = family;
	if (family == AF_INET) {
		*ingress = key->v4.ifindex;
		t->proto = key->v4.proto;
		t->src[0] = key->v4.saddr;
		t->dst[0] = key->v4.daddr;
		t->sport = key->v4.sport;
		t->dport = key->v4.dport;
	} else {
		*ingress = key->v6.ifindex;
		t->proto = key->v6.proto;
		memcpy(t->src, key->v6.saddr, 16);
		memcpy(t->dst, key->v6.daddr, 16);
		t->sport = key->v6.sport;
		t->dport = key->v6.dport;
	}
}

static int marks_fd(const struct fp_instance *inst, int family)
{
	return family == AF_INET ? inst->marks4_fd : inst->marks6_fd;
}

void fp_flow6_split(const struct fp_flow6_full *full, struct fp_flow6 *flow, struct fp_nat6 *nat)
{
	*flow = (struct fp_flow6){
		.bytes = full->bytes,
		.packets = full->packets,
		.last_seen = full->meta.last_seen,
		.flags = full->meta.flags & FP_FLOW_DAEMON_MASK,
	};
	*nat = (struct fp_nat6){.nat_sport = full->nat_sport, .nat_dport = full->nat_dport};
	memcpy(nat->nat_saddr, full->nat_saddr, sizeof(nat->nat_saddr));
	memcpy(nat->nat_daddr, full->nat_daddr, sizeof(nat->nat_daddr));
}

void fp_flow6_join(const struct fp_flow6 *flow, const struct fp_nat6 *nat,
		   const struct fp_nh_ctx *ctx, struct fp_flow6_full *full)
{
	*full = (struct fp_flow6_full){
		.bytes = flow->bytes,
		.packets = flow->packets,
	};
	if (ctx)
		full->meta = ctx->meta;
	full->meta.nh_gen = flow->nh_gen;
	full->meta.last_seen = flow->last_seen;
	full->meta.flags |= flow->flags;
	if (nat) {
		memcpy(full->nat_saddr, nat->nat_saddr, sizeof(full->nat_saddr));
		memcpy(full->nat_daddr, nat->nat_daddr, sizeof(full->nat_daddr));
		full->nat_sport = nat->nat_sport;
		full->nat_dport = nat->nat_dport;
	}
}

/* fp_nh_ctx, read once for the entries of a walk that need it. */
struct nh_ctx_cache {
	bool loaded;
	struct fp_nh_ctx ctx[2 * FP_NH_CTX_HALF];
};

/* The whole array in one batch (5.6+), or entry by entry where the kernel has none. */
static void nh_ctx_load(const struct fp_instance *inst, struct nh_ctx_cache *cache)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	uint32_t keys[2 * FP_NH_CTX_HALF], count = 2 * FP_NH_CTX_HALF, out;
	int ret =
		bpf_map_lookup_batch(inst->nh_ctx_fd, NULL, &out, keys, cache->ctx, &count, &opts);

	if ((ret && errno != ENOENT) || count != 2 * FP_NH_CTX_HALF) {
		for (uint32_t i = 0; i < 2 * FP_NH_CTX_HALF; i++)
			if (bpf_map_lookup_elem(inst->nh_ctx_fd, &i, &cache->ctx[i]))
				memset(&cache->ctx[i], 0, sizeof(cache->ctx[i]));
	}
	cache->loaded = true;
}

/* A key as the side maps (fp_marks4/6, fp_nat6) have it, without the state a slot's has. */
static const union fp_flow_key *side_key(int family, const union fp_flow_key *key,
					 union fp_flow_key *buf)
{
	if (family == AF_INET ? !key->v4.state : !key->v6.state)
		return key;
	*buf = *key;
	if (family == AF_INET)
		buf->v4.state = 0;
	else
		buf->v6.state = 0;
	return buf;
}

/* The flow in slot @key, @flow: its translation read from its map, its next hop from
 * @cache (NULL: not joined, as reading a flow by its key needs none), its state. */
static void flow6_view(const struct fp_instance *inst, const struct fp_flow_key6 *key,
		       const struct fp_flow6 *flow, struct nh_ctx_cache *cache,
		       struct fp_flow6_full *full)
{
	union fp_flow_key kbuf;
	struct fp_nat6 nat, *natp = NULL;
	struct fp_nh_ctx *ctx = NULL;

	if ((flow->flags & (FP_FLOW_SNAT | FP_FLOW_DNAT)) &&
	    bpf_map_lookup_elem(inst->nat6_fd,
				side_key(AF_INET6, (const union fp_flow_key *)key, &kbuf),
				&nat) == 0)
		natp = &nat;
	if (flow->nh_gen && cache && flow->nh_ctx < 2 * FP_NH_CTX_HALF) {
		if (!cache->loaded)
			nh_ctx_load(inst, cache);
		ctx = &cache->ctx[flow->nh_ctx];
	}
	fp_flow6_join(flow, natp, ctx, full);
	full->state = key->state;
}

/* What the daemon decides of an entry: the translation, and whether it has a mark. The
 * rest (counters, next hop, last packet, closing) is the datapath's. */
static bool same_translation(int family, const union fp_flow_value *a, const union fp_flow_value *b)
{
	const uint8_t daemon_flags = FP_FLOW_DAEMON_MASK;

	if (family == AF_INET)
		return !((a->v4.meta.flags ^ b->v4.meta.flags) & daemon_flags) &&
		       a->v4.nat_saddr == b->v4.nat_saddr && a->v4.nat_sport == b->v4.nat_sport &&
		       a->v4.nat_daddr == b->v4.nat_daddr && a->v4.nat_dport == b->v4.nat_dport;
	return !((a->v6.meta.flags ^ b->v6.meta.flags) & daemon_flags) &&
	       !memcmp(a->v6.nat_saddr, b->v6.nat_saddr, sizeof(a->v6.nat_saddr)) &&
	       a->v6.nat_sport == b->v6.nat_sport &&
	       !memcmp(a->v6.nat_daddr, b->v6.nat_daddr, sizeof(a->v6.nat_daddr)) &&
	       a->v6.nat_dport == b->v6.nat_dport;
}

/* After a replacement, the old entry's mark, which no entry names any more. */
static void drop_old_mark(const struct fp_instance *inst, int family, const union fp_flow_key *key,
			  uint8_t old_flags, uint32_t mark)
{
	if ((old_flags & FP_FLOW_MARK) && !mark)
		bpf_map_delete_elem(marks_fd(inst, family), key);
}

static struct fp_slots *slots_of(const struct fp_instance *inst, int family)
{
	return family == AF_INET ? inst->slots4 : inst->slots6;
}

/* The entry in slot @index as a value: IPv6's joined with its translation. */
static void slot_value(const struct fp_instance *inst, int family, uint32_t index,
		       union fp_flow_value *value)
{
	const struct fp_slots *t = slots_of(inst, family);

	if (family == AF_INET)
		value->v4 = t->slot[index & t->mask].flow;
	else
		flow6_view(inst, &t->slot6[index & t->mask].key, &t->slot6[index & t->mask].flow,
			   NULL, &value->v6);
}

/*
 * Inserting, either family: an entry with the key may be there, left by an earlier
 * daemon. It is kept as it is if it translates as @value does (-EEXIST), replaced if not.
 * A connection can end while no daemon runs and another take its tuple, translated
 * otherwise (the WAN address changed, a port was taken): the old entry would send the new
 * connection's packets to the old address. A replacement loses the old entry's counters
 * and next hop; it is a new slot, which goes live a grace period after the old one is
 * deleted (slottable.h).
 *
 * An IPv6 translation is written first, in its side map under the flow's key (the
 * datapath passes a NAT66 flow's packets while it has none), a replacement's after the
 * old slot is deleted: a packet that still meets the old entry with it leaves as the new
 * entry would send it.
 */
static int slot_insert(const struct fp_instance *inst, int family, const union fp_flow_key *key,
		       const union fp_flow_value *value, uint32_t mark)
{
	struct fp_slots *t = slots_of(inst, family);
	bool nat6 = family == AF_INET6 && (value->v6.meta.flags & (FP_FLOW_SNAT | FP_FLOW_DNAT));
	union fp_flow_value old;
	struct fp_flow6 flow6;
	struct fp_nat6 translation;
	const void *entry = &value->v4;
	uint32_t existing;
	int64_t index;

	if (!t)
		return -EBADF;
	if (family == AF_INET6) {
		fp_flow6_split(&value->v6, &flow6, &translation);
		entry = &flow6;
	}
	index = fp_slots_find(t, key);
	if (index >= 0) {
		slot_value(inst, family, index, &old);
		if (same_translation(family, &old, value))
			return -EEXIST;
		fp_slots_delete(t, index);
		drop_old_mark(inst, family, key,
			      family == AF_INET ? old.v4.meta.flags : old.v6.meta.flags, mark);
		if (family == AF_INET6 && !nat6 &&
		    (old.v6.meta.flags & (FP_FLOW_SNAT | FP_FLOW_DNAT)))
			bpf_map_delete_elem(inst->nat6_fd, key);
	}
	if (nat6 && bpf_map_update_elem(inst->nat6_fd, key, &translation, BPF_ANY))
		return -errno;
	index = fp_slots_insert(t, key, entry, &existing);
	if (index >= 0)
		return 0;
	if (nat6)
		bpf_map_delete_elem(inst->nat6_fd, key);
	return index;
}

int fp_flow_insert(const struct fp_instance *inst, int family, const union fp_flow_key *key,
		   const union fp_flow_value *value, uint32_t mark)
{
	union fp_flow_key kbuf;
	int err;

	key = side_key(family, key, &kbuf);
	/* The mark first: the datapath passes a marked flow's packets while it has none. */
	if (mark && bpf_map_update_elem(marks_fd(inst, family), key, &mark, BPF_ANY))
		return -errno;
	err = slot_insert(inst, family, key, value, mark);
	/* Not inserted, nor kept: no entry names the mark written for it. */
	if (err && err != -EEXIST && mark)
		bpf_map_delete_elem(marks_fd(inst, family), key);
	return err;
}

int fp_flow_delete(const struct fp_instance *inst, int family, const union fp_flow_key *key,
		   bool marked)
{
	struct fp_slots *t = slots_of(inst, family);
	union fp_flow_key kbuf;
	int64_t index;
	int err;

	key = side_key(family, key, &kbuf);
	index = t ? fp_slots_locate(t, key) : -EBADF;
	err = index < 0 ? index : fp_slots_delete(t, index);
	/* And its translation, if it has one. */
	if (family == AF_INET6)
		bpf_map_delete_elem(inst->nat6_fd, key);
	if (marked)
		bpf_map_delete_elem(marks_fd(inst, family), key);
	return err;
}

int fp_flows_sync(const struct fp_instance *inst)
{
	struct fp_slots *tables[] = {inst->slots4, inst->slots6};

	return fp_slots_sync_all(tables, 2);
}

/* Empties half @half of fp_nh_ctx: the entries, then the claims that took them. */
static int nh_ctx_clear_half(const struct fp_instance *inst, uint32_t half)
{
	struct fp_nh_ctx empty = {};
	int err = 0;

	for (uint32_t i = half * FP_NH_CTX_HALF; i < (half + 1) * FP_NH_CTX_HALF; i++) {
		if (bpf_map_update_elem(inst->nh_ctx_fd, &i, &empty, BPF_ANY))
			err = -errno;
		else if (bpf_map_delete_elem(inst->nh_claim_fd, &i) && errno != ENOENT)
			err = -errno;
	}
	return err;
}

int fp_flows_forget_next_hops(const struct fp_instance *inst, uint32_t gen)
{
	int err;

	fp_slots_forget_next_hops(inst->slots4, gen);
	fp_slots_forget_next_hops(inst->slots6, gen);
	/* A program that read an older generation may still be resolving into that half. */
	err = fp_slots_grace_period(inst->slots4);
	return err ? err : nh_ctx_clear_half(inst, !fp_nh_ctx_half(gen));
}

int fp_flow_read(const struct fp_instance *inst, int family, union fp_flow_key *key,
		 union fp_flow_value *value)
{
	const struct fp_slots *t = slots_of(inst, family);
	int64_t index = t ? fp_slots_find(t, key) : -EBADF;
	uint8_t state;

	if (index < 0)
		return index;
	/* Acquire, as a walk reads it: the entry is read after its state says it is live. */
	state = __atomic_load_n(fp_slot_state(t, fp_slot_at(t, index)), __ATOMIC_ACQUIRE);
	if (!(state & FP_SLOT_LIVE))
		return -ENOENT; /* RESERVED: being written, live at the next sync */
	if (family == AF_INET)
		key->v4.state = state;
	else
		key->v6.state = state;
	slot_value(inst, family, index, value);
	return 0;
}

bool fp_flow_closing(int family, const union fp_flow_key *key)
{
	return (family == AF_INET ? key->v4.state : key->v6.state) & FP_SLOT_CLOSING;
}

/* What a walk calls for each entry. */
struct walk_fn {
	int (*fn)(int family, const union fp_flow_key *key, const union fp_flow_value *value,
		  void *arg);
	void *arg;
	const struct fp_instance *inst;
	struct nh_ctx_cache *cache; /* IPv6's */
};

/*
 * Reads map @fd by batches of WALK_CHUNK entries, deleting them too if @delete, and hands
 * each batch to @chunk; a non-zero return from @chunk ends the walk. 0 at the end, or
 * -errno if the kernel failed a batch: -EOPNOTSUPP if it has no batch operations for the
 * map (the first batch refused), so that a caller can go entry by entry.
 */
static int walk_batches(int fd, size_t key_size, size_t value_size, bool delete,
			int (*chunk)(const uint8_t *keys, const uint8_t *values, uint32_t count,
				     void *arg),
			void *arg)
{
	uint8_t *keys = malloc(key_size * WALK_CHUNK), *values = malloc(value_size * WALK_CHUNK);
	uint64_t batch_in, batch_out;
	void *in = NULL;
	int err = keys && values ? 0 : -ENOMEM;

	while (!err) {
		LIBBPF_OPTS(bpf_map_batch_opts, opts);
		uint32_t count = WALK_CHUNK;
		int ret = delete ? bpf_map_lookup_and_delete_batch(fd, in, &batch_out, keys, values,
								   &count, &opts)
				 : bpf_map_lookup_batch(fd, in, &batch_out, keys, values, &count,
							&opts);
		bool last = ret && errno == ENOENT;

		if (ret && !last) {
			err = -errno;
			/* The kernel's "no batch operations for this map" is ENOTSUPP (524). */
			if (err == -EINVAL || err == -EOPNOTSUPP || err == -KERNEL_ENOTSUPP)
				err = in ? -EIO : -EOPNOTSUPP;
			break;
		}
		if (chunk(keys, values, count, arg) || last)
			break;
		batch_in = batch_out;
		in = &batch_in;
	}
	free(keys);
	free(values);
	return err;
}

/* The IPv4 table's live slots, as entries of a map. */
static int walk4_slot(uint32_t index, void *at, void *arg)
{
	const struct fp_slot4 *slot = at;
	const struct walk_fn *wf = arg;
	union fp_flow_key key = {.v4 = slot->key};
	union fp_flow_value value = {.v4 = slot->flow};

	(void)index;
	return wf->fn(AF_INET, &key, &value, wf->arg);
}

/* The IPv6 table's, joined with their translations and next hops. */
static int walk6_slot(uint32_t index, void *at, void *arg)
{
	const struct fp_slot6 *slot = at;
	const struct walk_fn *wf = arg;
	union fp_flow_key key = {.v6 = slot->key};
	union fp_flow_value value;

	(void)index;
	flow6_view(wf->inst, &key.v6, &slot->flow, wf->cache, &value.v6);
	return wf->fn(AF_INET6, &key, &value, wf->arg);
}

int fp_flows_walk(const struct fp_instance *inst, int family,
		  int (*fn)(int family, const union fp_flow_key *key,
			    const union fp_flow_value *value, void *arg),
		  void *arg)
{
	struct walk_fn wf = {.fn = fn, .arg = arg, .inst = inst};
	int err;

	if (family == AF_INET)
		return inst->slots4 ? fp_slots_walk(inst->slots4, walk4_slot, &wf) : -EBADF;
	if (!inst->slots6)
		return -EBADF;
	wf.cache = calloc(1, sizeof(*wf.cache)); /* without it, no next hops are joined */
	err = fp_slots_walk(inst->slots6, walk6_slot, &wf);
	free(wf.cache);
	return err;
}

struct delete_ctx {
	const struct fp_instance *inst;
	bool all;
	uint32_t ifindex; /* unless all */
	uint32_t deleted;
};

static int delete_matching(int family, const union fp_flow_key *key,
			   const union fp_flow_value *value, void *arg)
{
	struct delete_ctx *dc = arg;
	uint32_t ingress = family == AF_INET ? key->v4.ifindex : key->v6.ifindex;
	const struct fp_flow_meta *meta = family == AF_INET ? &value->v4.meta : &value->v6.meta;

	if (!dc->all && ingress != dc->ifindex && !(meta->nh_gen && meta->oif == dc->ifindex))
		return 0;
	if (fp_flow_delete(dc->inst, family, key, meta->flags & FP_FLOW_MARK) == 0)
		dc->deleted++;
	return 0;
}

static uint32_t delete_where(struct delete_ctx *dc)
{
	fp_flows_walk(dc->inst, AF_INET, delete_matching, dc);
	fp_flows_walk(dc->inst, AF_INET6, delete_matching, dc);
	fp_flows_sync(dc->inst);
	return dc->deleted;
}

uint32_t fp_flows_delete_ifindex(const struct fp_instance *inst, uint32_t ifindex)
{
	struct delete_ctx dc = {.inst = inst, .ifindex = ifindex};

	return delete_where(&dc);
}

static int count_chunk(const uint8_t *keys, const uint8_t *values, uint32_t count, void *arg)
{
	(void)keys;
	(void)values;
	*(uint32_t *)arg += count;
	return 0;
}

/*
 * Empties one map by batches of lookup-and-delete, adding to *cleared how many it removed:
 * a syscall per WALK_CHUNK entries, where deleting them one by one takes a syscall each (a
 * million entries: seconds). 0, or -errno if it could not finish (no batch operations).
 */
static int clear_map(int fd, size_t key_size, size_t value_size, uint32_t *cleared)
{
	return walk_batches(fd, key_size, value_size, true, count_chunk, cleared);
}

uint32_t fp_flows_delete_all(const struct fp_instance *inst)
{
	uint32_t cleared = 0;

	/* The flows first: the datapath passes a marked flow's packets while it has no mark. */
	if (inst->slots4)
		cleared = fp_slots_delete_all(inst->slots4);
	if (inst->slots6)
		cleared += fp_slots_delete_all(inst->slots6);
	fp_flows_sync(inst);
	/* Marks of flows that are gone too (a daemon that died between a mark and its flow). */
	clear_map(inst->marks4_fd, sizeof(struct fp_flow_key4), sizeof(__u32), &(uint32_t){0});
	clear_map(inst->marks6_fd, sizeof(struct fp_flow_key6), sizeof(__u32), &(uint32_t){0});
	clear_map(inst->nat6_fd, sizeof(struct fp_flow_key6), sizeof(struct fp_nat6),
		  &(uint32_t){0});
	return cleared;
}

static int count_one(int family, const union fp_flow_key *key, const union fp_flow_value *value,
		     void *arg)
{
	(void)family;
	(void)key;
	(void)value;
	(*(uint32_t *)arg)++;
	return 0;
}

int fp_flows_count(const struct fp_instance *inst, uint32_t *v4, uint32_t *v6)
{
	*v4 = *v6 = 0;
	fp_flows_walk(inst, AF_INET, count_one, v4);
	fp_flows_walk(inst, AF_INET6, count_one, v6);
	return 0;
}
