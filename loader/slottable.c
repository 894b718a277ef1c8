// SPDX-License-Identifier: GPL-2.0-only
/* A flow table from userspace: probing, inserting, deleting, grace periods. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>

#include "slottable.h"

/* The slot a key's hash points to, computed as the datapath does (fp_lookup4, fp_lookup6). */
static uint32_t home4(const void *key, uint32_t mask)
{
	struct fp_flow_key4 k;
	uint64_t w[2];

	memcpy(&k, key, sizeof(k));
	k.state = 0;
	memcpy(w, &k, sizeof(w));
	return fp_slot_hash(w[0], w[1], mask);
}

static uint32_t home6(const void *key, uint32_t mask)
{
	struct fp_flow_key6 k;
	__u64 w[5];

	memcpy(&k, key, sizeof(k));
	k.state = 0;
	memcpy(w, &k, sizeof(w));
	return fp_slot_hash6(w, mask);
}

const struct fp_slot_shape fp_slot_shape4 = {
	.key_size = sizeof(struct fp_flow_key4),
	.nh_gen_off = offsetof(struct fp_slot4, flow.meta.nh_gen),
	.nh_gen_size = sizeof(((struct fp_slot4 *)0)->flow.meta.nh_gen),
	.home = home4,
};

const struct fp_slot_shape fp_slot_shape6 = {
	.key_size = sizeof(struct fp_flow_key6),
	.nh_gen_off = offsetof(struct fp_slot6, flow.nh_gen),
	.nh_gen_size = sizeof(((struct fp_slot6 *)0)->flow.nh_gen),
	.home = home6,
};

_Static_assert(sizeof(struct fp_slot4) == FP_SLOT_SIZE && sizeof(struct fp_slot6) == FP_SLOT_SIZE,
	       "one slot size");

/* The key without its state byte: what a slot's key is compared by. */
static size_t key_bytes(const struct fp_slots *t)
{
	return t->shape->key_size - 1;
}

static uint8_t state_of(const struct fp_slots *t, uint32_t index)
{
	return __atomic_load_n(fp_slot_state(t, fp_slot_at(t, index)), __ATOMIC_RELAXED);
}

static bool set_state(const struct fp_slots *t, uint32_t index, uint8_t from, uint8_t to, int order)
{
	return __atomic_compare_exchange_n(fp_slot_state(t, fp_slot_at(t, index)), &from, to, false,
					   order, __ATOMIC_RELAXED);
}

static uint32_t home_of(const struct fp_slots *t, const void *key)
{
	return t->shape->home(key, t->mask);
}

void fp_slots_init(struct fp_slots *t, void *slots, uint32_t mask,
		   const struct fp_slot_shape *shape)
{
	memset(t, 0, sizeof(*t));
	t->base = slots;
	t->shape = shape;
	t->mask = mask;
	t->capacity = (mask + 1) / 2;
	t->walk_pos = UINT64_MAX;
	t->grace_outer_fd = t->grace_inner_fd = -1;
}

int fp_slots_map(struct fp_slots *t, int fd, const struct fp_slot_shape *shape)
{
	struct bpf_map_info info = {};
	uint32_t len = sizeof(info);
	long page = sysconf(_SC_PAGESIZE);
	void *mem;

	fp_slots_init(t, NULL, 0, shape);
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	if (info.value_size != FP_SLOT_SIZE || info.max_entries < 2 ||
	    (info.max_entries & (info.max_entries - 1)))
		return -EINVAL;
	t->map_len = ((size_t)info.max_entries * FP_SLOT_SIZE + page - 1) & ~(page - 1);
	mem = mmap(NULL, t->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (mem == MAP_FAILED)
		return -errno;
	t->base = mem;
	t->mask = info.max_entries - 1;
	t->capacity = info.max_entries / 2;
	return 0;
}

void fp_slots_unmap(struct fp_slots *t)
{
	if (!t->slot)
		return; /* never mapped: nothing else was made either */
	if (t->map_len)
		munmap(t->slot, t->map_len);
	if (t->grace_outer_fd >= 0)
		close(t->grace_outer_fd);
	if (t->grace_inner_fd >= 0)
		close(t->grace_inner_fd);
	free(t->pending.index);
	free(t->limbo.index);
	fp_slots_init(t, NULL, 0, t->shape);
}

static int list_add(struct fp_slot_list *l, uint32_t index)
{
	if (l->count == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		uint32_t *grown = realloc(l->index, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		l->index = grown;
		l->cap = cap;
	}
	l->index[l->count++] = index;
	return 0;
}

/* fp_slots_find, from the key's home slot. */
static int64_t find_from(const struct fp_slots *t, const void *key, uint32_t home)
{
	for (uint32_t i = 0; i < FP_SLOT_PROBES; i++) {
		uint32_t index = (home + i) & t->mask;
		uint8_t state = state_of(t, index);

		if (state == FP_SLOT_FREE)
			break;
		if (fp_slot_taken(state) && !memcmp(fp_slot_at(t, index), key, key_bytes(t)))
			return index;
	}
	return -ENOENT;
}

int64_t fp_slots_find(const struct fp_slots *t, const void *key)
{
	return find_from(t, key, home_of(t, key));
}

int64_t fp_slots_locate(const struct fp_slots *t, const void *key)
{
	int64_t index = fp_slots_find(t, key);
	uint32_t at = t->walk_pos & t->mask;

	/* In a walk, the slot it is at, wherever it lies: one written by hand may lie where
	 * no lookup finds it, and still be walked, and deleted. */
	if (index < 0 && t->walk_pos <= t->mask && (state_of(t, at) & FP_SLOT_LIVE) &&
	    !memcmp(fp_slot_at(t, at), key, key_bytes(t)))
		index = t->walk_pos;
	return index;
}

int64_t fp_slots_insert(struct fp_slots *t, const void *key, const void *flow, uint32_t *existing)
{
	uint32_t home = home_of(t, key);
	int64_t found = find_from(t, key, home);

	if (found >= 0) {
		*existing = found;
		return -EEXIST;
	}
	if (t->used >= t->capacity)
		return -E2BIG;
	/* The first free slot: none of those before it is FREE, so lookups reach it. */
	for (uint32_t i = 0; i < FP_SLOT_PROBES; i++) {
		uint32_t index = (home + i) & t->mask;
		uint8_t *slot = fp_slot_at(t, index);
		uint8_t state = state_of(t, index);

		if (state != FP_SLOT_FREE && state != FP_SLOT_VACANT)
			continue;
		if (!set_state(t, index, state, FP_SLOT_RESERVED, __ATOMIC_ACQUIRE)) {
			i--; /* another process took it or tidied it: look again */
			continue;
		}
		memcpy(slot, key, key_bytes(t));
		memcpy(slot + t->shape->key_size, flow, FP_SLOT_SIZE - t->shape->key_size);
		if (list_add(&t->pending, index)) {
			set_state(t, index, FP_SLOT_RESERVED, FP_SLOT_VACANT, __ATOMIC_RELAXED);
			return -ENOMEM;
		}
		t->used++;
		if (index < t->walk_pos)
			t->walk_adjust++; /* a walk that has passed it does not count it */
		return index;
	}
	return -E2BIG;
}

int fp_slots_delete(struct fp_slots *t, uint32_t index)
{
	for (;;) {
		uint8_t state = state_of(t, index);

		if (!fp_slot_taken(state))
			return -ENOENT;
		if (set_state(t, index, state, FP_SLOT_DELETED, __ATOMIC_RELAXED))
			break;
	}
	if (t->used)
		t->used--;
	if ((index & t->mask) < t->walk_pos)
		t->walk_adjust--; /* a walk that has passed it counted it */
	/* Without room to queue it the slot stays DELETED: a later walk adopts it. */
	list_add(&t->limbo, index & t->mask);
	return 0;
}

int fp_slots_walk(struct fp_slots *t, int (*fn)(uint32_t index, void *slot, void *arg), void *arg)
{
	uint64_t counted = 0;
	int ret = 0;

	t->walk_adjust = 0;
	for (t->walk_pos = 0; t->walk_pos <= t->mask; t->walk_pos++) {
		uint32_t index = t->walk_pos;
		void *slot = fp_slot_at(t, index);
		uint8_t state = __atomic_load_n(fp_slot_state(t, slot), __ATOMIC_ACQUIRE);

		/* Perhaps of a process that died before its sync. */
		if (state == FP_SLOT_DELETED && t->owner)
			list_add(&t->limbo, index);
		if (!fp_slot_taken(state))
			continue;
		counted++;
		if ((state & FP_SLOT_LIVE) && fn(index, slot, arg)) {
			ret = 1;
			break;
		}
	}
	if (!ret)
		t->used = counted + t->walk_adjust;
	t->walk_pos = UINT64_MAX;
	return ret;
}

uint32_t fp_slots_delete_all(struct fp_slots *t)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i <= t->mask; i++)
		n += fp_slots_delete(t, i) == 0;
	return n;
}

uint32_t fp_slots_reclaim_orphans(struct fp_slots *t)
{
	uint32_t n = 0;

	t->used = 0;
	for (uint32_t i = 0; i <= t->mask; i++) {
		uint8_t state = state_of(t, i);

		if (state == FP_SLOT_RESERVED &&
		    set_state(t, i, state, FP_SLOT_DELETED, __ATOMIC_RELAXED))
			state = FP_SLOT_DELETED;
		if (state == FP_SLOT_DELETED) {
			list_add(&t->limbo, i);
			n++;
		}
		/* The entries an earlier daemon left count against --flows from the start. */
		t->used += !!(state & FP_SLOT_LIVE);
	}
	return n;
}

void fp_slots_forget_next_hops(struct fp_slots *t, uint32_t gen)
{
	for (uint32_t i = 0; i <= t->mask; i++) {
		uint8_t *at = (uint8_t *)fp_slot_at(t, i) + t->shape->nh_gen_off;

		/* The datapath may write it meanwhile: then it is current, and stays. */
		if (t->shape->nh_gen_size == 2) {
			__u16 cached = __atomic_load_n((__u16 *)at, __ATOMIC_RELAXED);

			if (cached && cached != (__u16)gen)
				__atomic_compare_exchange_n((__u16 *)at, &cached, 0, false,
							    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
		} else {
			__u8 cached = __atomic_load_n(at, __ATOMIC_RELAXED);

			if (cached && cached != (__u8)gen)
				__atomic_compare_exchange_n(at, &cached, 0, false, __ATOMIC_RELAXED,
							    __ATOMIC_RELAXED);
		}
	}
}

/*
 * Waits until every BPF program running now has finished: updating a map in a map does
 * (synchronize_rcu() in the kernel, since 4.20), and the datapath runs under RCU.
 */
static int grace_period(struct fp_slots *t)
{
	uint32_t zero = 0;

	if (t->grace_inner_fd < 0) {
		t->grace_inner_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "fp_grace_inner",
						   sizeof(uint32_t), sizeof(uint32_t), 1, NULL);
		if (t->grace_inner_fd < 0)
			return -errno;
	}
	if (t->grace_outer_fd < 0) {
		LIBBPF_OPTS(bpf_map_create_opts, opts, .inner_map_fd = t->grace_inner_fd);

		t->grace_outer_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, "fp_grace",
						   sizeof(uint32_t), sizeof(uint32_t), 1, &opts);
		if (t->grace_outer_fd < 0)
			return -errno;
	}
	if (bpf_map_update_elem(t->grace_outer_fd, &zero, &t->grace_inner_fd, BPF_ANY))
		return -errno;
	return 0;
}

/* A VACANT slot before a FREE one ends no search that could find a key: FREE it, and the
 * VACANT ones before it, so that lookups of keys that are not there stop sooner. */
static void tidy_before(struct fp_slots *t, uint32_t index)
{
	if (state_of(t, index + 1) != FP_SLOT_FREE)
		return;
	for (uint32_t i = 0; i <= t->mask; i++)
		if (!set_state(t, index - i, FP_SLOT_VACANT, FP_SLOT_FREE, __ATOMIC_RELAXED))
			break;
}

int fp_slots_grace_period(struct fp_slots *t)
{
	return !t || t->no_readers ? 0 : grace_period(t);
}

static bool has_work(const struct fp_slots *t)
{
	return t && (t->pending.count || t->limbo.count);
}

/* After a grace period, every program that could have seen the queued slots before is
 * gone: the DELETED ones go VACANT, the RESERVED ones LIVE. */
static void publish(struct fp_slots *t)
{
	struct fp_slot_list again = {};

	/* The deleted ones first: one reused since (RESERVED, pending) is left to what
	 * follows. */
	for (size_t i = 0; i < t->limbo.count; i++) {
		uint32_t index = t->limbo.index[i];
		uint8_t state = state_of(t, index);

		if (state == (FP_SLOT_LIVE | FP_SLOT_CLOSING) && t->owner) {
			/* The datapath closed it as it was deleted (fp_check_tcp): once more. */
			if (set_state(t, index, state, FP_SLOT_DELETED, __ATOMIC_RELAXED))
				list_add(&again, index);
			continue;
		}
		if (set_state(t, index, FP_SLOT_DELETED, FP_SLOT_VACANT, __ATOMIC_RELAXED))
			tidy_before(t, index);
	}
	free(t->limbo.index);
	t->limbo = again;
	/* A reader that sees one of these LIVE now sees what was written before it. */
	for (size_t i = 0; i < t->pending.count; i++)
		set_state(t, t->pending.index[i], FP_SLOT_RESERVED, FP_SLOT_LIVE, __ATOMIC_RELEASE);
	t->pending.count = 0;
}

int fp_slots_sync_all(struct fp_slots *const *tables, size_t n)
{
	struct fp_slots *read = NULL; /* one with work that programs read */
	bool work = false;
	int err;

	for (size_t i = 0; i < n; i++) {
		work |= has_work(tables[i]);
		if (has_work(tables[i]) && !tables[i]->no_readers)
			read = tables[i];
	}
	if (!work)
		return 0;
	err = read ? grace_period(read) : 0;
	if (err)
		return err;
	for (size_t i = 0; i < n; i++)
		if (has_work(tables[i]))
			publish(tables[i]);
	return 0;
}

int fp_slots_sync(struct fp_slots *t)
{
	return fp_slots_sync_all(&t, 1);
}
