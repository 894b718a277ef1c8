// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: conntrack messages into the daemon's sync (ctsync_parse), the path every
 * conntrack event and dump reply takes. The flow maps are real BPF hash maps (root), the
 * route lookups fake (fake_instance.c); requests the sync sends (be-liberal updates) are
 * answered with an ACK by wrapping libmnl's socket calls (-Wl,--wrap).
 *
 * After each input the maps must mirror the daemon's table exactly: one entry per
 * offloaded direction of each record, no entry without a record; after dropping everything
 * both are empty. Any other outcome aborts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <bpf/bpf.h>

#include "conntrack_sync.h"
#include "flowmap.h"
#include "fuzz.h"
#include "slottable.h"

static struct fp_instance inst;
static struct fp_options opt = {.skip_mark = 0x10, .skip_mask = 0xf0};
static struct fp_daemon_state state;
static struct fp_ctsync cs;

/* The sync's requests: sent nowhere, each acknowledged. */
static uint32_t last_seq;
static bool ack_pending;

ssize_t __wrap_mnl_socket_sendto(const struct mnl_socket *nl, const void *req, size_t len)
{
	const struct nlmsghdr *nlh = req;

	(void)nl;
	last_seq = nlh->nlmsg_seq;
	ack_pending = true;
	return len;
}

ssize_t __wrap_mnl_socket_recvfrom(const struct mnl_socket *nl, void *buf, size_t len)
{
	struct nlmsghdr *nlh;
	struct nlmsgerr *err;

	if (!ack_pending || len < (size_t)MNL_SOCKET_BUFFER_SIZE) {
		errno = EAGAIN;
		return -1;
	}
	ack_pending = false;
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = NLMSG_ERROR;
	nlh->nlmsg_seq = last_seq;
	nlh->nlmsg_pid = mnl_socket_get_portid(nl);
	err = mnl_nlmsg_put_extra_header(nlh, sizeof(*err));
	err->error = 0;
	return nlh->nlmsg_len;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_quiet();
	fuzz_flow_maps(&inst);
	if (conntable_init(&cs.table))
		abort();
	cs.inst = &inst;
	cs.ports.inst = &inst;
	cs.opt = &opt;
	cs.state = &state;
	cs.route = NULL; /* route_oif is fake_instance.c's */
	cs.timeouts = (struct fp_ct_timeouts){.tcp = 120, .udp = 120};
	/* A real socket, bound, for its port id; nothing is sent on it. */
	if (ct_requests_open(&cs.requests))
		abort();
	return 0;
}

struct mirror {
	size_t directions;
	size_t marked; /* directions of connections with a mark */
};

/* The reply tuple the input last gave each original tuple: a record must have it. */
#define LAST_REPLIES 512
static struct {
	struct fp_tuple orig, reply;
} last_reply[LAST_REPLIES];
static size_t nr_last_replies;

static int note_reply(const struct nlmsghdr *nlh, void *data)
{
	struct fp_ct_entry e;
	size_t i;

	(void)data;
	if (nlh->nlmsg_type != (NFNL_SUBSYS_CTNETLINK << 8 | IPCTNL_MSG_CT_NEW) ||
	    fp_ct_parse(nlh, &e) || !e.has_tuple[FP_DIR_ORIG] || !e.has_tuple[FP_DIR_REPLY])
		return MNL_CB_OK;
	for (i = 0; i < nr_last_replies; i++)
		if (!memcmp(&last_reply[i].orig, &e.tuple[FP_DIR_ORIG], sizeof(e.tuple[0])))
			break;
	if (i == LAST_REPLIES)
		return MNL_CB_OK;
	if (i == nr_last_replies)
		nr_last_replies++;
	last_reply[i].orig = e.tuple[FP_DIR_ORIG];
	last_reply[i].reply = e.tuple[FP_DIR_REPLY];
	return MNL_CB_OK;
}

static const struct fp_tuple *reply_of(const struct fp_tuple *orig)
{
	for (size_t i = 0; i < nr_last_replies; i++)
		if (!memcmp(&last_reply[i].orig, orig, sizeof(*orig)))
			return &last_reply[i].reply;
	return NULL;
}

/* Whether direction @dir's entry translates to the other direction's tuple, reversed. */
static bool translates_as(const struct fp_conn *c, int dir, const union fp_flow_value *value)
{
	struct fp_tuple other;

	conn_tuple(c, !dir, &other);
	if (c->family == AF_INET)
		return value->v4.nat_saddr == other.dst[0] && value->v4.nat_sport == other.dport &&
		       value->v4.nat_daddr == other.src[0] && value->v4.nat_dport == other.sport;
	return !memcmp(value->v6.nat_saddr, other.dst, 16) && value->v6.nat_sport == other.dport &&
	       !memcmp(value->v6.nat_daddr, other.src, 16) && value->v6.nat_dport == other.sport;
}

static void check_record(struct fp_conn *c, void *arg)
{
	struct mirror *m = arg;
	const struct fp_tuple *reply;
	struct fp_tuple orig;

	conn_tuple(c, FP_DIR_ORIG, &orig);
	reply = reply_of(&orig);
	if (reply && !conn_has_tuple(c, FP_DIR_REPLY, reply))
		fuzz_fail("a record keeps a reply tuple its connection no longer has");

	for (int dir = 0; dir < 2; dir++) {
		union fp_flow_key key, slot_key;
		union fp_flow_value value;
		int family = c->family;
		struct fp_tuple tuple;
		uint8_t flags;

		if (!c->ingress[dir])
			continue;
		m->directions++;
		conn_tuple(c, dir, &tuple);
		fp_tuple_to_key(&tuple, c->ingress[dir], &key);
		slot_key = key; /* which the read gives the slot's state */
		if (fp_flow_read(&inst, family, &slot_key, &value))
			fuzz_fail("a record's direction %d has no flow entry", dir);
		if (!translates_as(c, dir, &value))
			fuzz_fail("a record's direction %d has an entry translating otherwise",
				  dir);
		flags = family == AF_INET ? value.v4.meta.flags : value.v6.meta.flags;
		if (!c->mark != !(flags & FP_FLOW_MARK))
			fuzz_fail("mark %#x, and the flow entry's flag says otherwise", c->mark);
		if (c->mark) {
			uint32_t mark = 0;

			m->marked++;
			if (bpf_map_lookup_elem(family == AF_INET ? inst.marks4_fd : inst.marks6_fd,
						&key, &mark) ||
			    mark != c->mark)
				fuzz_fail("mark %#x, in the side map %#x", c->mark, mark);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mirror m = {0};

	/* Two dump generations in one input: records of an older one are reaped by resync. */
	cs.dump_gen = 1;
	cs.first_dump = size && (data[0] & 1);
	ctsync_parse(&cs, data, size);
	/* As the daemon does after each read: the entries inserted go live (no program reads
	 * these tables: no grace period). */
	fp_flows_sync(&inst);
	nr_last_replies = 0;
	if (fp_nlmsg_stream_ok(data, size))
		mnl_cb_run(data, size, 0, 0, note_reply, NULL);
	conntable_walk(&cs.table, check_record, &m);
	if (fuzz_flow_entries(&inst) != m.directions)
		fuzz_fail("%zu flow entries for %zu offloaded directions", fuzz_flow_entries(&inst),
			  m.directions);
	if (fuzz_mark_entries(&inst) != m.marked)
		fuzz_fail("%zu marks for %zu marked directions", fuzz_mark_entries(&inst),
			  m.marked);
	ctsync_drop_all(&cs);
	if (cs.table.count || fuzz_flow_entries(&inst) || fuzz_mark_entries(&inst))
		fuzz_fail("drop_all left %zu records, %zu entries and %zu marks", cs.table.count,
			  fuzz_flow_entries(&inst), fuzz_mark_entries(&inst));
	cs.polled = 0;
	cs.next_poll_slot = 0;
	return 0;
}
