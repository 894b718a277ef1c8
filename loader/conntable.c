// SPDX-License-Identifier: GPL-2.0-only
/* The connection table (conntable.h): a chained hash of compact records, two links each. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>

#include "conntable.h"

#define MIN_BUCKETS 1024

/* A chain link: the record, and in the low bit the direction whose chain goes through it. */
static uintptr_t link_of(const struct fp_conn *c, int dir)
{
	return (uintptr_t)c | (uintptr_t)dir;
}

static struct fp_conn *link_conn(uintptr_t link)
{
	return (struct fp_conn *)(link & ~(uintptr_t)1);
}

static int link_dir(uintptr_t link)
{
	return link & 1;
}

static int addr_words(int family)
{
	return family == AF_INET6 ? 4 : 1;
}

void conn_tuple(const struct fp_conn *c, int dir, struct fp_tuple *t)
{
	int w = addr_words(c->family);

	memset(t, 0, sizeof(*t));
	t->family = c->family;
	t->proto = c->proto;
	memcpy(t->src, &c->addr[2 * w * dir], w * 4);
	memcpy(t->dst, &c->addr[2 * w * dir + w], w * 4);
	t->sport = c->sport[dir];
	t->dport = c->dport[dir];
}

bool conn_has_tuple(const struct fp_conn *c, int dir, const struct fp_tuple *t)
{
	int w = addr_words(c->family);

	return t->family == c->family && t->proto == c->proto && t->sport == c->sport[dir] &&
	       t->dport == c->dport[dir] && !memcmp(t->src, &c->addr[2 * w * dir], w * 4) &&
	       !memcmp(t->dst, &c->addr[2 * w * dir + w], w * 4);
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

static size_t conn_bucket(const struct fp_conntable *t, const struct fp_conn *c, int dir)
{
	struct fp_tuple tuple;

	conn_tuple(c, dir, &tuple);
	return tuple_hash(t, &tuple) & (t->nr_buckets - 1);
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
	/* Unlink the reply links first: freeing a record ends both its chains, and a chain
	 * walked later could still lead through the reply link of a freed record. */
	for (size_t b = 0; b < t->nr_buckets; b++) {
		uintptr_t *pp = &t->buckets[b];

		while (*pp) {
			if (link_dir(*pp) == FP_DIR_REPLY)
				*pp = link_conn(*pp)->next[FP_DIR_REPLY];
			else
				pp = &link_conn(*pp)->next[FP_DIR_ORIG];
		}
	}
	for (size_t b = 0; b < t->nr_buckets; b++) {
		uintptr_t l = t->buckets[b], next;

		for (; l; l = next) {
			next = link_conn(l)->next[FP_DIR_ORIG];
			free(link_conn(l));
		}
	}
	free(t->buckets);
	t->buckets = NULL;
}

static void insert_link(struct fp_conntable *t, struct fp_conn *c, int dir)
{
	size_t b = conn_bucket(t, c, dir);

	c->next[dir] = t->buckets[b];
	t->buckets[b] = link_of(c, dir);
}

/* Moves every record into a table of nr buckets; on no memory keeps the old one. */
static void rehash(struct fp_conntable *t, size_t nr)
{
	uintptr_t *old = t->buckets;
	size_t old_nr = t->nr_buckets;
	uintptr_t *buckets = calloc(nr, sizeof(*buckets));

	if (!buckets)
		return; /* keep working with longer (or emptier) chains */
	t->buckets = buckets;
	t->nr_buckets = nr;
	for (size_t b = 0; b < old_nr; b++) {
		uintptr_t l = old[b], next;

		for (; l; l = next) {
			next = link_conn(l)->next[link_dir(l)];
			insert_link(t, link_conn(l), link_dir(l));
		}
	}
	free(old);
}

struct fp_conn *conntable_find(const struct fp_conntable *t, const struct fp_tuple *tuple, int *dir)
{
	size_t b = tuple_hash(t, tuple) & (t->nr_buckets - 1);

	for (uintptr_t l = t->buckets[b]; l; l = link_conn(l)->next[link_dir(l)]) {
		if (conn_has_tuple(link_conn(l), link_dir(l), tuple)) {
			if (dir)
				*dir = link_dir(l);
			return link_conn(l);
		}
	}
	return NULL;
}

void conntable_pack_addrs(uint32_t *addr, const struct fp_tuple *orig, const struct fp_tuple *reply)
{
	int w = addr_words(orig->family);
	const struct fp_tuple *tuple[2] = {orig, reply};

	for (int dir = 0; dir < 2; dir++) {
		memcpy(&addr[2 * w * dir], tuple[dir]->src, w * 4);
		memcpy(&addr[2 * w * dir + w], tuple[dir]->dst, w * 4);
	}
}

struct fp_conn *conntable_add(struct fp_conntable *t, const struct fp_tuple *orig,
			      const struct fp_tuple *reply)
{
	int w = addr_words(orig->family);
	struct fp_conn *c = calloc(1, sizeof(*c) + 4 * w * 4);
	const struct fp_tuple *tuple[2] = {orig, reply};

	if (!c)
		return NULL;
	if (t->count >= t->nr_buckets)
		rehash(t, t->nr_buckets * 2);
	c->family = orig->family;
	c->proto = orig->proto;
	conntable_pack_addrs(c->addr, orig, reply);
	for (int dir = 0; dir < 2; dir++) {
		c->sport[dir] = tuple[dir]->sport;
		c->dport[dir] = tuple[dir]->dport;
	}
	insert_link(t, c, FP_DIR_ORIG);
	insert_link(t, c, FP_DIR_REPLY);
	t->count++;
	return c;
}

static void unlink_conn(struct fp_conntable *t, struct fp_conn *c, int dir)
{
	uintptr_t *pp = &t->buckets[conn_bucket(t, c, dir)];

	for (; *pp; pp = &link_conn(*pp)->next[link_dir(*pp)]) {
		if (*pp == link_of(c, dir)) {
			*pp = c->next[dir];
			return;
		}
	}
}

void conntable_remove(struct fp_conntable *t, struct fp_conn *c)
{
	unlink_conn(t, c, FP_DIR_ORIG);
	unlink_conn(t, c, FP_DIR_REPLY);
	t->count--;
	free(c);
}

void conntable_walk(const struct fp_conntable *t, void (*fn)(struct fp_conn *c, void *arg),
		    void *arg)
{
	for (size_t b = 0; b < t->nr_buckets; b++)
		for (uintptr_t l = t->buckets[b]; l; l = link_conn(l)->next[link_dir(l)])
			if (link_dir(l) == FP_DIR_ORIG)
				fn(link_conn(l), arg);
}

size_t conntable_reap(struct fp_conntable *t, void (*fn)(struct fp_conn *c, void *arg), void *arg)
{
	size_t removed = 0;

	for (size_t b = 0; b < t->nr_buckets; b++) {
		uintptr_t l = t->buckets[b];

		while (l) {
			struct fp_conn *c = link_conn(l);

			/* Removing c may unlink its other link from this same chain. */
			if (link_dir(l) == FP_DIR_ORIG && c->doomed) {
				if (fn)
					fn(c, arg);
				conntable_remove(t, c);
				removed++;
				l = t->buckets[b]; /* restart the chain: it changed */
				continue;
			}
			l = c->next[link_dir(l)];
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
