/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A flow table from userspace: an array of 64-byte slots (struct fp_slot4, fp_slot6: a
 * key whose last byte is the state, then the entry) shared with the datapath through a
 * mapping of its map, open addressing with linear probing.
 *
 * The datapath reads slots while this side writes them, and a BPF program has no acquire
 * loads on the kernels routers run: an entry is written while its slot is RESERVED and
 * made LIVE only after a grace period (fp_slots_sync), so that no reader can see its key
 * before the rest; a DELETED slot is reused only after a grace period, when no program
 * can still hold it. Inserting and deleting only queue that work; fp_slots_sync does it,
 * one grace period for all that is queued.
 */
#ifndef FP_SLOTTABLE_H
#define FP_SLOTTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xdp_fastpath.h"

struct fp_slot_list {
	uint32_t *index;
	size_t count, cap;
};

/* What tells one family's table from the other's (slottable.c has both). */
struct fp_slot_shape {
	uint32_t key_size;				  /* its last byte the state */
	uint32_t nh_gen_off, nh_gen_size;		  /* the cached next hop's generation */
	uint32_t (*home)(const void *key, uint32_t mask); /* as the datapath hashes it */
};
extern const struct fp_slot_shape fp_slot_shape4, fp_slot_shape6;

#define FP_SLOT_SIZE 64

struct fp_slots {
	union { /* the mapping; NULL if none */
		struct fp_slot4 *slot;
		struct fp_slot6 *slot6;
		uint8_t *base;
	};
	const struct fp_slot_shape *shape;
	uint32_t mask;	       /* slots - 1 */
	size_t map_len;
	/* Entries allowed (--flows; half the slots unless told), and those LIVE or RESERVED
	 * as this process counts them: its own inserts and deletes, recounted by each walk. */
	uint32_t capacity, used;
	uint64_t walk_pos; /* in a walk: the next slot it visits; else past the end */
	int64_t walk_adjust;
	struct fp_slot_list pending;	    /* RESERVED here, to make LIVE after a grace period */
	struct fp_slot_list limbo;	    /* DELETED, to make VACANT after a grace period */
	int grace_outer_fd, grace_inner_fd; /* a map in a map, whose update waits (-1: none) */
	bool no_readers; /* no program reads the table (the fuzzers'): no grace periods */
	/* This process inserts (the daemon; a test): it alone also reclaims the slots others
	 * left DELETED, and deletes again those the datapath closed as they were deleted.
	 * Another may find a slot it deleted reused by the owner, and must leave it be. */
	bool owner;
};

/* Maps the table of @shape's slots in map @fd; -errno. */
int fp_slots_map(struct fp_slots *t, int fd, const struct fp_slot_shape *shape);
/* Uses @slots (mask + 1 of them) as the table: tests. */
void fp_slots_init(struct fp_slots *t, void *slots, uint32_t mask,
		   const struct fp_slot_shape *shape);
/* Unmaps, after the queued work is done (fp_slots_sync). */
void fp_slots_unmap(struct fp_slots *t);

/* The index of the LIVE or RESERVED slot with @key (its state ignored), or -ENOENT. */
int64_t fp_slots_find(const struct fp_slots *t, const void *key);
/* The same, or in a walk (fp_slots_walk) the slot it is at if that has @key. */
int64_t fp_slots_locate(const struct fp_slots *t, const void *key);
/*
 * Writes @key and @flow into a free slot near the key's hash, RESERVED until the next
 * fp_slots_sync: its index, -EEXIST if the key is LIVE or RESERVED (@existing set to its
 * index), -E2BIG if no slot within FP_SLOT_PROBES is free.
 */
int64_t fp_slots_insert(struct fp_slots *t, const void *key, const void *flow, uint32_t *existing);
/* Deletes the slot at @index if it is LIVE or RESERVED: 0, or -ENOENT. */
int fp_slots_delete(struct fp_slots *t, uint32_t index);
/*
 * The queued work: one grace period, then the RESERVED slots made LIVE and the DELETED
 * ones VACANT (FREE where they end a run). 0, or -errno if no grace period could be had
 * (the work stays queued).
 */
int fp_slots_sync(struct fp_slots *t);
/* The same for @n tables (NULL ones skipped), with one grace period for all of them. */
int fp_slots_sync_all(struct fp_slots *const *tables, size_t n);
/* Waits until every BPF program running now has finished (with the table's map in a map):
 * 0, or -errno. For other structures the datapath reads too (fp_nh_ctx). */
int fp_slots_grace_period(struct fp_slots *t);
/* Calls @fn for every LIVE slot, with its index, until it returns non-zero; recounts the
 * entries, and in the owner queues the DELETED slots found (of a process that did not
 * finish: it queues them again, harmlessly). */
int fp_slots_walk(struct fp_slots *t, int (*fn)(uint32_t index, void *slot, void *arg), void *arg);
/* Slot @index of the table, and its state byte. */
static inline void *fp_slot_at(const struct fp_slots *t, uint32_t index)
{
	return t->base + (size_t)(index & t->mask) * FP_SLOT_SIZE;
}

static inline uint8_t *fp_slot_state(const struct fp_slots *t, void *slot)
{
	return (uint8_t *)slot + t->shape->key_size - 1;
}
/* Whether a slot in @state holds an entry: LIVE (CLOSING or not), or RESERVED (being
 * written, live at the next sync). What --flows counts, and what find and delete take. */
static inline bool fp_slot_taken(uint8_t state)
{
	return (state & FP_SLOT_LIVE) || state == FP_SLOT_RESERVED;
}
/* Deletes every LIVE or RESERVED slot: how many. */
uint32_t fp_slots_delete_all(struct fp_slots *t);
/* For the owner, at its start: slots an earlier one left RESERVED or DELETED are deleted
 * and reclaimed at the next sync, and the LIVE ones counted. How many were reclaimed. */
uint32_t fp_slots_reclaim_orphans(struct fp_slots *t);
/* Clears the cached next hop of every slot whose generation is neither 0 nor @gen's low
 * 16 bits (IPv6: 8): so that no generation a wrap brings back finds one (daemon.c). */
void fp_slots_forget_next_hops(struct fp_slots *t, uint32_t gen);

#endif
