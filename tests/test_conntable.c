// SPDX-License-Identifier: GPL-2.0-only
/* The daemon's table of connections (loader/conntable.c), on its own. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "conntable.h"
#include "testlib.h"
#include "tests.h"

static struct fp_tuple tuple(uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport)
{
	struct fp_tuple t = {.family = AF_INET, .proto = IPPROTO_UDP};

	t.src[0] = htonl(src);
	t.dst[0] = htonl(dst);
	t.sport = htons(sport);
	t.dport = htons(dport);
	return t;
}

static void count_cb(struct fp_conn *c, void *arg)
{
	(void)c;
	(*(size_t *)arg)++;
}

/* Dooms every record but the first 16 walked; marks those (gen 16) and counts them. */
static void doom_all_but_first_16(struct fp_conn *c, void *arg)
{
	size_t *kept = arg;

	if (*kept < 16) {
		c->gen = 16;
		++*kept;
	} else {
		c->doomed = 1;
	}
}

static void doom_odd(struct fp_conn *c, void *arg)
{
	(void)arg;
	c->doomed = ntohs(c->sport[FP_DIR_ORIG]) & 1;
}

void test_conntable(void)
{
	enum { N = 5000 }; /* several times the initial bucket count: the table grows */
	struct fp_conntable t;
	struct fp_conn *c;
	size_t walked = 0, reaped;
	int dir, missing = 0;

	tl_case_begin("conntable: both directions find the same record, across growth");
	CHECK_EQ(conntable_init(&t), 0, "init");
	for (int i = 0; i < N; i++) {
		struct fp_tuple o = tuple(0xc6120102, 0xc6130202, 1024 + i, 443);
		struct fp_tuple r = tuple(0xc6130202, 0xc6130201, 443, 30000 + i);

		CHECK(conntable_add(&t, &o, &r), "add %d", i);
	}
	CHECK(t.count == N, "count %zu", t.count);
	for (int i = 0; i < N; i++) {
		struct fp_tuple o = tuple(0xc6120102, 0xc6130202, 1024 + i, 443);
		struct fp_tuple r = tuple(0xc6130202, 0xc6130201, 443, 30000 + i);
		struct fp_conn *by_orig = conntable_find(&t, &o, &dir);
		int dir_orig = dir;
		struct fp_conn *by_reply = conntable_find(&t, &r, &dir);

		if (!by_orig || by_orig != by_reply || dir_orig != FP_DIR_ORIG ||
		    dir != FP_DIR_REPLY)
			missing++;
	}
	CHECK(missing == 0, "%d connections not found by both tuples", missing);
	{
		struct fp_tuple absent = tuple(0xc6120102, 0xc6130202, 9, 9);

		CHECK(!conntable_find(&t, &absent, NULL), "found a tuple never added");
	}
	conntable_walk(&t, count_cb, &walked);
	CHECK(walked == N, "walk visited %zu records", walked);
	tl_case_end();

	tl_case_begin("conntable: reaping doomed records, chains intact");
	conntable_walk(&t, doom_odd, NULL);
	reaped = conntable_reap(&t, NULL, NULL);
	CHECK(reaped == N / 2 && t.count == N / 2, "reaped %zu, %zu left", reaped, t.count);
	missing = 0;
	for (int i = 0; i < N; i++) {
		struct fp_tuple o = tuple(0xc6120102, 0xc6130202, 1024 + i, 443);
		struct fp_tuple r = tuple(0xc6130202, 0xc6130201, 443, 30000 + i);
		bool want = !((1024 + i) & 1);

		if (!!conntable_find(&t, &o, NULL) != want ||
		    !!conntable_find(&t, &r, NULL) != want)
			missing++;
	}
	CHECK(missing == 0, "%d records wrong after reaping", missing);
	/* Both nodes of a record in one chain: an orig tuple equal to its reply tuple. */
	{
		struct fp_tuple same = tuple(0xc6120102, 0xc6120102, 7, 7);

		c = conntable_add(&t, &same, &same);
		c->doomed = 1;
		CHECK(conntable_reap(&t, NULL, NULL) == 1, "self-paired record not reaped");
		CHECK(!conntable_find(&t, &same, NULL), "self-paired record still found");
	}
	tl_case_end();

	tl_case_begin("conntable: the bucket array shrinks after a burst, records intact");
	{
		size_t grown = t.nr_buckets, kept = 0;

		conntable_walk(&t, doom_all_but_first_16, &kept);
		conntable_reap(&t, NULL, NULL);
		CHECK(t.count == 16, "%zu records left", t.count);
		CHECK(t.nr_buckets < grown && t.nr_buckets >= t.count,
		      "%zu buckets for 16 records (was %zu)", t.nr_buckets, grown);
		missing = 0;
		for (int i = 0; i < N; i++) {
			struct fp_tuple o = tuple(0xc6120102, 0xc6130202, 1024 + i, 443);
			struct fp_conn *found = conntable_find(&t, &o, NULL);
			struct fp_tuple reply;

			if (found)
				conn_tuple(found, FP_DIR_REPLY, &reply);
			if (found &&
			    (found->gen != 16 || conntable_find(&t, &reply, NULL) != found))
				missing++;
			else if (found)
				kept--;
		}
		CHECK(missing == 0 && kept == 0, "%d records broken, %zu not found", missing, kept);
	}
	tl_case_end();

	tl_case_begin("conntable: IPv6 records keep their full tuples, both ways");
	{
		struct fp_tuple o6 = {.family = AF_INET6, .proto = IPPROTO_TCP}, r6, back;
		struct fp_conn *c6;
		int dir = -1;

		o6.src[0] = htonl(0x20010002);
		o6.src[3] = htonl(1);
		o6.dst[0] = htonl(0x20010002);
		o6.dst[1] = htonl(2);
		o6.dst[3] = htonl(2);
		o6.sport = htons(40000);
		o6.dport = htons(443);
		r6 = o6;
		memcpy(r6.src, o6.dst, 16);
		memcpy(r6.dst, o6.src, 16);
		r6.sport = o6.dport;
		r6.dport = o6.sport;
		c6 = conntable_add(&t, &o6, &r6);
		CHECK(c6 && conntable_find(&t, &r6, &dir) == c6 && dir == FP_DIR_REPLY,
		      "the reply tuple does not find the record");
		conn_tuple(c6, FP_DIR_ORIG, &back);
		CHECK(!memcmp(&back, &o6, sizeof(back)), "the original tuple changed on the way");
		conn_tuple(c6, FP_DIR_REPLY, &back);
		CHECK(!memcmp(&back, &r6, sizeof(back)), "the reply tuple changed on the way");
		o6.dst[3] = htonl(3); /* differs in the last word only */
		CHECK(!conntable_find(&t, &o6, NULL),
		      "found a tuple that differs in its last word");
	}
	conntable_free(&t);
	tl_case_end();
}
