// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conntable.h"

#define MIN_BUCKETS 1024

static struct fp_conn *node_conn(struct fp_conn_node *n)
{
	return (struct fp_conn *)((char *)(n - n->dir) - offsetof(struct fp_conn, node));
}

static uint64_t tuple_hash(const struct fp_conntable *t, const struct fp_tuple *tuple)
{
	const uint8_t *p = (const uint8_t *)tuple;
	uint64_t h = t->seed ^ 0xcbf29ce484222325ull;

	/* FNV-1a, then a final mix so that the low bits (the bucket) depend on every byte. */
	for (size_t i = 0; i < sizeof(*tuple); i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h;
}

int conntable_init(struct fp_conntable *t)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	t->nr_buckets = MIN_BUCKETS;
	t->count = 0;
	t->seed = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull;
	t->buckets = calloc(t->nr_buckets, sizeof(*t->buckets));
	return t->buckets ? 0 : -ENOMEM;
}

void conntable_free(struct fp_conntable *t)
{
	t->count = 0;
	/* Unlink the reply nodes first: freeing a record frees both its nodes, and a chain
	 * walked later could still lead through the reply node of a freed record. */
	for (size_t b = 0; b < t->nr_buckets; b++) {
		struct fp_conn_node **pp = &t->buckets[b];

		while (*pp) {
			if ((*pp)->dir == FP_DIR_REPLY)
				*pp = (*pp)->next;
			else
				pp = &(*pp)->next;
		}
	}
	for (size_t b = 0; b < t->nr_buckets; b++) {
		struct fp_conn_node *n = t->buckets[b], *next;

		for (; n; n = next) {
			next = n->next;
			if (n->dir == FP_DIR_ORIG)
				free(node_conn(n));
		}
	}
	free(t->buckets);
	t->buckets = NULL;
}

static void insert_node(struct fp_conntable *t, struct fp_conn *c, int dir)
{
	size_t b = tuple_hash(t, &c->tuple[dir]) & (t->nr_buckets - 1);

	c->node[dir].dir = dir;
	c->node[dir].next = t->buckets[b];
	t->buckets[b] = &c->node[dir];
}

/* Moves every node into a table of nr buckets; on no memory keeps the old one. */
static void rehash(struct fp_conntable *t, size_t nr)
{
	struct fp_conn_node **old = t->buckets;
	size_t old_nr = t->nr_buckets;
	struct fp_conn_node **buckets = calloc(nr, sizeof(*buckets));

	if (!buckets)
		return; /* keep working with longer (or emptier) chains */
	t->buckets = buckets;
	t->nr_buckets = nr;
	for (size_t b = 0; b < old_nr; b++) {
		struct fp_conn_node *n = old[b], *next;

		for (; n; n = next) {
			next = n->next;
			insert_node(t, node_conn(n), n->dir);
		}
	}
	free(old);
}

struct fp_conn *conntable_find(const struct fp_conntable *t, const struct fp_tuple *tuple, int *dir)
{
	size_t b = tuple_hash(t, tuple) & (t->nr_buckets - 1);

	for (struct fp_conn_node *n = t->buckets[b]; n; n = n->next) {
		struct fp_conn *c = node_conn(n);

		if (!memcmp(&c->tuple[n->dir], tuple, sizeof(*tuple))) {
			if (dir)
				*dir = n->dir;
			return c;
		}
	}
	return NULL;
}

struct fp_conn *conntable_add(struct fp_conntable *t, const struct fp_tuple *orig,
			      const struct fp_tuple *reply)
{
	struct fp_conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	if (t->count >= t->nr_buckets)
		rehash(t, t->nr_buckets * 2);
	c->tuple[FP_DIR_ORIG] = *orig;
	c->tuple[FP_DIR_REPLY] = *reply;
	insert_node(t, c, FP_DIR_ORIG);
	insert_node(t, c, FP_DIR_REPLY);
	t->count++;
	return c;
}

static void unlink_node(struct fp_conntable *t, struct fp_conn *c, int dir)
{
	size_t b = tuple_hash(t, &c->tuple[dir]) & (t->nr_buckets - 1);

	for (struct fp_conn_node **pp = &t->buckets[b]; *pp; pp = &(*pp)->next) {
		if (*pp == &c->node[dir]) {
			*pp = c->node[dir].next;
			return;
		}
	}
}

void conntable_remove(struct fp_conntable *t, struct fp_conn *c)
{
	unlink_node(t, c, FP_DIR_ORIG);
	unlink_node(t, c, FP_DIR_REPLY);
	t->count--;
	free(c);
}

void conntable_walk(const struct fp_conntable *t, void (*fn)(struct fp_conn *c, void *arg),
		    void *arg)
{
	for (size_t b = 0; b < t->nr_buckets; b++)
		for (struct fp_conn_node *n = t->buckets[b]; n; n = n->next)
			if (n->dir == FP_DIR_ORIG)
				fn(node_conn(n), arg);
}

size_t conntable_reap(struct fp_conntable *t, void (*fn)(struct fp_conn *c, void *arg), void *arg)
{
	size_t removed = 0;

	for (size_t b = 0; b < t->nr_buckets; b++) {
		struct fp_conn_node *n = t->buckets[b];

		while (n) {
			struct fp_conn *c = node_conn(n);

			/* Removing c may unlink its other node from this same chain. */
			if (n->dir == FP_DIR_ORIG && c->doomed) {
				if (fn)
					fn(c, arg);
				conntable_remove(t, c);
				removed++;
				n = t->buckets[b]; /* restart the chain: it changed */
				continue;
			}
			n = n->next;
		}
	}
	/* After a burst ends, give the bucket array back: a quarter full at least. */
	if (t->nr_buckets > MIN_BUCKETS && t->count < t->nr_buckets / 8) {
		size_t nr = MIN_BUCKETS;

		while (nr < t->count * 4)
			nr *= 2;
		rehash(t, nr);
	}
	return removed;
}
