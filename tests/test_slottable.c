// SPDX-License-Identifier: GPL-2.0-only
/*
 * The IPv4 slot table's userspace side (loader/slottable.c) on plain memory: what it
 * writes, looked up as the datapath looks (fp_lookup4), through inserts, deletes, syncs
 * and the datapath's own writes.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "instance.h"
#include "slottable.h"
#include "testlib.h"
#include "tests.h"

#define SLOTS 1024

static struct fp_slot4 table[SLOTS];

/* fp_lookup4's search, on the test's table: LIVE keys match, FREE ends it. */
static int64_t datapath_lookup(const struct fp_slots *t, const struct fp_flow_key4 *key)
{
	struct fp_flow_key4 k = *key;
	uint64_t w[2];
	uint32_t at;

	k.state = 0;
	memcpy(w, &k, sizeof(w));
	at = fp_slot_hash(w[0], w[1], t->mask);
	w[1] |= FP_SLOT_STATE_BITS(FP_SLOT_LIVE);
	for (int i = 0; i < FP_SLOT_PROBES; i++) {
		uint32_t index = (at + i) & t->mask;
		uint64_t s[2];

		memcpy(s, &t->slot[index].key, sizeof(s));
		if (s[0] == w[0] && (s[1] & ~FP_SLOT_STATE_BITS(FP_SLOT_CLOSING)) == w[1])
			return index;
		if (!(s[1] & FP_SLOT_STATE_BITS(0xff)))
			return -1;
	}
	return -1;
}

static struct fp_flow_key4 key_of(uint32_t n)
{
	return (struct fp_flow_key4){.saddr = htonl(0xc6120000 | (n & 0xffff)),
				     .daddr = htonl(0xc6130201),
				     .sport = htons(1024 + (n >> 16)),
				     .dport = htons(53),
				     .ifindex = 2,
				     .proto = IPPROTO_UDP};
}

static void fresh(struct fp_slots *t, uint32_t slots)
{
	memset(table, 0, sizeof(table));
	fp_slots_init(t, table, slots - 1, &fp_slot_shape4);
	t->no_readers = true;
	t->owner = true;
}

static void done(struct fp_slots *t)
{
	free(t->pending.index);
	free(t->limbo.index);
}

static int count_live(uint32_t index, void *slot, void *arg)
{
	(void)index;
	(void)slot;
	(*(uint32_t *)arg)++;
	return 0;
}

static void test_insert_publish(void)
{
	struct fp_slots t;
	struct fp_flow4 flow = {.meta.flags = FP_FLOW_SNAT, .nat_saddr = htonl(0xc6130201)};
	struct fp_flow_key4 key = key_of(7);
	uint32_t existing, live = 0;
	int64_t index;

	tl_case_begin("slots: an entry goes live at the sync, not before");
	fresh(&t, SLOTS);
	index = fp_slots_insert(&t, &key, &flow, &existing);
	CHECK(index >= 0, "insert: %lld", (long long)index);
	CHECK_EQ(table[index].key.state, FP_SLOT_RESERVED, "state before the sync");
	CHECK(datapath_lookup(&t, &key) < 0, "the datapath finds a RESERVED entry");
	CHECK(fp_slots_insert(&t, &key, &flow, &existing) == -EEXIST && existing == index,
	      "a second insert of the key is not refused");
	CHECK_EQ(fp_slots_sync(&t), 0, "sync");
	CHECK_EQ(table[index].key.state, FP_SLOT_LIVE, "state after the sync");
	CHECK_EQ(datapath_lookup(&t, &key), index, "the datapath's lookup");
	CHECK(!memcmp(&table[index].flow, &flow, sizeof(flow)), "the entry differs");
	fp_slots_walk(&t, count_live, &live);
	CHECK_EQ(live, 1, "live slots walked");
	CHECK_EQ(t.used, 1, "entries counted");
	/* The datapath closes it: still found, by both. */
	table[index].key.state = FP_SLOT_LIVE | FP_SLOT_CLOSING;
	CHECK_EQ(datapath_lookup(&t, &key), index, "a closing entry is not found");
	CHECK_EQ(fp_slots_find(&t, &key), index, "find: a closing entry");
	CHECK_EQ(fp_slots_delete(&t, index), 0, "delete");
	CHECK(datapath_lookup(&t, &key) < 0, "a deleted entry is found");
	CHECK_EQ(fp_slots_delete(&t, index), -ENOENT, "a second delete");
	CHECK_EQ(fp_slots_sync(&t), 0, "sync");
	/* Its slot ended no run: back to FREE. */
	CHECK_EQ(table[index].key.state, FP_SLOT_FREE, "state after delete and sync");
	done(&t);
	tl_case_end();
}

/*
 * Random inserts and deletes at half load and beyond, a sync now and then: every entry the
 * reference holds is found where the datapath looks, none it deleted is, and a deleted
 * slot is reused only after a sync.
 */
static void test_churn(void)
{
	static bool in_table[4096];
	static int64_t at[4096];
	struct fp_slots t;
	unsigned int seed = 12345, bad = 0, refused = 0, reused_early = 0;
	uint32_t live, held = 0;

	tl_case_begin("slots: churn keeps every entry where the datapath looks");
	fresh(&t, SLOTS);
	memset(in_table, 0, sizeof(in_table));
	for (int round = 0; round < 200000; round++) {
		uint32_t n = rand_r(&seed) % 4096;
		struct fp_flow_key4 key = key_of(n);

		if (in_table[n]) {
			if (fp_slots_delete(&t, at[n]))
				bad++;
			in_table[n] = false;
			held--;
		} else {
			struct fp_flow4 flow = {.packets = n};
			uint32_t existing;
			int64_t index = fp_slots_insert(&t, &key, &flow, &existing);

			if (index >= 0) {
				/* A slot in limbo is not reused before its sync. */
				for (size_t i = 0; i < t.limbo.count; i++)
					reused_early += t.limbo.index[i] == index;
				in_table[n] = true;
				at[n] = index;
				held++;
			} else if (index == -E2BIG) {
				refused++;
			} else {
				bad++;
			}
		}
		if (round % 97 == 0) {
			fp_slots_sync(&t);
			for (uint32_t k = 0; k < 4096; k++) {
				struct fp_flow_key4 kk = key_of(k);
				int64_t found = datapath_lookup(&t, &kk);

				if (in_table[k] != (found >= 0) ||
				    (found >= 0 &&
				     (found != at[k] || table[found].flow.packets != k)))
					bad++;
			}
		}
	}
	CHECK_EQ(bad, 0, "entries lost, found after their delete, or refused wrongly");
	CHECK_EQ(reused_early, 0, "slots reused before a grace period");
	CHECK(refused > 0 && held <= t.capacity, "the capacity (%u) held: %u refused, %u held",
	      t.capacity, refused, held);
	fp_slots_sync(&t);
	live = 0;
	fp_slots_walk(&t, count_live, &live);
	CHECK(live == held && t.used == held, "%u live, %u counted, %u held", live, t.used, held);
	done(&t);
	tl_case_end();
}

/* A table with no free slot near a key's hash refuses it: the datapath would not look
 * farther than FP_SLOT_PROBES. */
static void test_probe_bound(void)
{
	struct fp_slots t;
	uint32_t existing, refused = 0, bad = 0, n;

	tl_case_begin("slots: no entry farther than the datapath looks");
	fresh(&t, 64);
	t.capacity = 64;
	for (n = 0; n < 1000; n++) {
		struct fp_flow_key4 key = key_of(n);
		struct fp_flow4 flow = {};
		int64_t index = fp_slots_insert(&t, &key, &flow, &existing);

		if (index == -E2BIG)
			refused++;
		else if (index < 0)
			bad++;
	}
	fp_slots_sync(&t);
	for (n = 0; n < 1000; n++) {
		struct fp_flow_key4 key = key_of(n);

		bad += (fp_slots_find(&t, &key) >= 0) != (datapath_lookup(&t, &key) >= 0);
	}
	CHECK(refused > 0, "a full table refused nothing");
	CHECK_EQ(bad, 0, "entries the datapath would not find");
	CHECK_EQ(t.used, 1000 - refused, "entries counted");
	done(&t);
	tl_case_end();
}

static void test_deleted_while_closing(void)
{
	struct fp_slots t;
	struct fp_flow_key4 key = key_of(1);
	struct fp_flow4 flow = {};
	uint32_t existing;
	int64_t index;

	tl_case_begin("slots: a slot the datapath closes as it is deleted is deleted again");
	fresh(&t, SLOTS);
	index = fp_slots_insert(&t, &key, &flow, &existing);
	fp_slots_sync(&t);
	fp_slots_delete(&t, index);
	/* A program that found it before the delete stores its close after it. */
	table[index].key.state = FP_SLOT_LIVE | FP_SLOT_CLOSING;
	fp_slots_sync(&t);
	CHECK_EQ(table[index].key.state, FP_SLOT_DELETED, "state after the first sync");
	CHECK(fp_slots_insert(&t, &key, &flow, &existing) >= 0, "the key cannot be inserted");
	CHECK(fp_slots_find(&t, &key) != index, "the slot was reused before its grace period");
	fp_slots_sync(&t);
	CHECK(table[index].key.state == FP_SLOT_FREE || table[index].key.state == FP_SLOT_VACANT,
	      "state after the second sync: %#x", table[index].key.state);
	done(&t);
	tl_case_end();
}

static void test_orphans_and_next_hops(void)
{
	struct fp_slots t;
	struct fp_flow4 flow = {};
	uint32_t existing;

	tl_case_begin("slots: a dead writer's slots are reclaimed, its live ones counted");
	fresh(&t, SLOTS);
	table[5].key.state = FP_SLOT_RESERVED;
	table[9].key.state = FP_SLOT_DELETED;
	table[20].key.state = FP_SLOT_LIVE;
	table[21].key.state = FP_SLOT_LIVE | FP_SLOT_CLOSING;
	CHECK_EQ(fp_slots_reclaim_orphans(&t), 2, "orphans");
	CHECK_EQ(t.used, 2, "live entries counted");
	fp_slots_sync(&t);
	CHECK(table[5].key.state == FP_SLOT_FREE && table[9].key.state == FP_SLOT_FREE,
	      "states %#x %#x", table[5].key.state, table[9].key.state);
	done(&t);
	tl_case_end();

	tl_case_begin("slots: next hops cached under other generations are forgotten");
	fresh(&t, SLOTS);
	for (uint32_t n = 0; n < 3; n++) {
		struct fp_flow_key4 key = key_of(n);

		fp_slots_insert(&t, &key, &flow, &existing);
	}
	fp_slots_sync(&t);
	{
		struct fp_flow_key4 k0 = key_of(0), k1 = key_of(1);
		struct fp_flow_meta *m0 = &table[fp_slots_find(&t, &k0)].flow.meta;
		struct fp_flow_meta *m1 = &table[fp_slots_find(&t, &k1)].flow.meta;

		m0->nh_gen = 7;
		m1->nh_gen = 0x4000;
		fp_slots_forget_next_hops(&t, 0x10000 + 0x4000);
		CHECK_EQ(m0->nh_gen, 0, "a stale generation");
		CHECK_EQ(m1->nh_gen, 0x4000, "the current generation");
	}
	done(&t);
	tl_case_end();
}

static struct fp_slot6 table6[SLOTS];

/* fp_lookup6's search, as datapath_lookup is fp_lookup4's. */
static int64_t datapath_lookup6(const struct fp_slots *t, const struct fp_flow_key6 *key)
{
	struct fp_flow_key6 k = *key;
	__u64 w[5];
	uint32_t at;

	k.state = 0;
	memcpy(w, &k, sizeof(w));
	at = fp_slot_hash6(w, t->mask);
	w[4] |= FP_SLOT_STATE_BITS(FP_SLOT_LIVE);
	for (int i = 0; i < FP_SLOT_PROBES; i++) {
		uint32_t index = (at + i) & t->mask;
		__u64 s[5];

		memcpy(s, &t->slot6[index].key, sizeof(s));
		if (!memcmp(s, w, 4 * sizeof(s[0])) &&
		    (s[4] & ~FP_SLOT_STATE_BITS(FP_SLOT_CLOSING)) == w[4])
			return index;
		if (!(s[4] & FP_SLOT_STATE_BITS(0xff)))
			return -1;
	}
	return -1;
}

static struct fp_flow_key6 key6_of(uint32_t n)
{
	struct fp_flow_key6 key = {.sport = htons(1024 + (n >> 16)),
				   .dport = htons(443),
				   .ifindex = 2,
				   .proto = IPPROTO_TCP};

	inet_pton(AF_INET6, "2001:2:0:1::", key.saddr);
	inet_pton(AF_INET6, "2001:2:0:2::2", key.daddr);
	key.saddr[3] = htonl(n & 0xffff);
	return key;
}

/*
 * The same table of IPv6 slots (a 40-byte key, a 24-byte entry): inserts go live at the
 * sync where the datapath's lookup finds them, entries are written whole beside their
 * keys, a half-full table of keys that differ only in their last words keeps them within
 * the probes, deletes are found no more, and 8-bit generations are forgotten.
 */
static void test_ipv6_slots(void)
{
	struct fp_flow6 flow = {.flags = FP_FLOW_SNAT, .packets = 5, .bytes = 700};
	struct fp_slots t;
	uint32_t existing, bad = 0;
	int64_t index;

	tl_case_begin("slots, IPv6: half full, every key where the datapath looks, whole");
	memset(table6, 0, sizeof(table6));
	fp_slots_init(&t, table6, SLOTS - 1, &fp_slot_shape6);
	t.no_readers = true;
	t.owner = true;
	for (uint32_t n = 0; n < SLOTS / 2; n++) {
		struct fp_flow_key6 key = key6_of(n);

		if (fp_slots_insert(&t, &key, &flow, &existing) < 0)
			bad++;
	}
	CHECK_EQ(bad, 0, "inserts refused");
	CHECK(datapath_lookup6(&t, &(struct fp_flow_key6){}) < 0, "found a key never inserted");
	CHECK_EQ(fp_slots_sync(&t), 0, "sync");
	for (uint32_t n = 0; n < SLOTS / 2; n++) {
		struct fp_flow_key6 key = key6_of(n);

		index = datapath_lookup6(&t, &key);
		if (index < 0 || index != fp_slots_find(&t, &key) ||
		    memcmp(&t.slot6[index].flow, &flow, sizeof(flow)) ||
		    memcmp(&t.slot6[index].key, &key, sizeof(key) - 1))
			bad++;
	}
	CHECK_EQ(bad, 0, "keys not found, or found otherwise than written");
	tl_case_end();

	tl_case_begin("slots, IPv6: deleted keys are gone, stale 8-bit generations forgotten");
	{
		struct fp_flow_key6 k0 = key6_of(0), k1 = key6_of(1), k2 = key6_of(2);

		index = fp_slots_find(&t, &k0);
		CHECK_EQ(fp_slots_delete(&t, index), 0, "delete");
		CHECK_EQ(fp_slots_sync(&t), 0, "sync");
		CHECK(datapath_lookup6(&t, &k0) < 0, "a deleted key is found");
		t.slot6[fp_slots_find(&t, &k1)].flow.nh_gen = 7;
		t.slot6[fp_slots_find(&t, &k2)].flow.nh_gen = 0x40;
		fp_slots_forget_next_hops(&t, 0x1140);
		CHECK_EQ(t.slot6[fp_slots_find(&t, &k1)].flow.nh_gen, 0, "a stale generation");
		CHECK_EQ(t.slot6[fp_slots_find(&t, &k2)].flow.nh_gen, 0x40, "the current one");
	}
	done(&t);
	tl_case_end();
}

/* One sync for both families' tables (fp_flows_sync): a table without work, or none at all
 * (NULL), is passed over, and each table's queued inserts and deletes are done. */
static void test_sync_all(void)
{
	struct fp_flow6 flow6 = {.packets = 1};
	struct fp_flow4 flow4 = {.packets = 1};
	struct fp_flow_key4 k4 = key_of(3);
	struct fp_flow_key6 k6 = key6_of(3);
	struct fp_slots t4, t6;
	uint32_t existing;
	int64_t i4, i6;

	tl_case_begin("slots: one sync does the queued work of both tables");
	fresh(&t4, SLOTS);
	memset(table6, 0, sizeof(table6));
	fp_slots_init(&t6, table6, SLOTS - 1, &fp_slot_shape6);
	t6.no_readers = t6.owner = true;
	CHECK_EQ(fp_slots_sync_all((struct fp_slots *[]){&t4, NULL, &t6}, 3), 0,
		 "a sync with nothing queued");
	i4 = fp_slots_insert(&t4, &k4, &flow4, &existing);
	i6 = fp_slots_insert(&t6, &k6, &flow6, &existing);
	CHECK(i4 >= 0 && i6 >= 0, "inserts: %lld, %lld", (long long)i4, (long long)i6);
	CHECK_EQ(fp_slots_sync_all((struct fp_slots *[]){&t4, NULL, &t6}, 3), 0, "sync");
	CHECK_EQ(table[i4].key.state, FP_SLOT_LIVE, "the IPv4 entry's state after the sync");
	CHECK_EQ(table6[i6].key.state, FP_SLOT_LIVE, "the IPv6 entry's state after the sync");
	CHECK_EQ(fp_slots_delete(&t6, i6), 0, "delete");
	CHECK_EQ(fp_slots_sync_all((struct fp_slots *[]){&t4, &t6}, 2), 0, "sync");
	CHECK_EQ(table6[i6].key.state, FP_SLOT_FREE, "the deleted IPv6 slot after the sync");
	CHECK_EQ(table[i4].key.state, FP_SLOT_LIVE, "the IPv4 entry, left alone");
	done(&t4);
	done(&t6);
	tl_case_end();
}

/* --flows when not given: room for every connection conntrack may hold, both ways. */
static void test_default_size(void)
{
	static const struct {
		uint32_t ct_max, flows;
	} sizes[] = {
		{0, FP_DEFAULT_FLOWS}, /* no limit */
		{1, FP_MIN_DEFAULT_FLOWS},
		{512, FP_MIN_DEFAULT_FLOWS},
		{513, 2048},
		{3000, 8192},
		{16384, 32768}, /* OpenWrt's */
		{16385, FP_DEFAULT_FLOWS},
		{262144, FP_DEFAULT_FLOWS},
		{UINT32_MAX, FP_DEFAULT_FLOWS},
	};

	tl_case_begin("slots: the default size follows nf_conntrack_max");
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t flows = fp_flows_for_conntrack(sizes[i].ct_max);

		CHECK(flows == sizes[i].flows, "nf_conntrack_max %u: %u entries, want %u",
		      sizes[i].ct_max, flows, sizes[i].flows);
		/* A table of that many slots takes exactly that many entries. */
		CHECK_EQ(fp_slots_for(flows) / 2, flows, "the table's capacity");
	}
	tl_case_end();
}

void test_slottable(void)
{
	test_insert_publish();
	test_churn();
	test_probe_bound();
	test_deleted_while_closing();
	test_orphans_and_next_hops();
	test_ipv6_slots();
	test_sync_all();
	test_default_size();
}
