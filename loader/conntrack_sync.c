// SPDX-License-Identifier: GPL-2.0-only
/*
 * The conntrack sync: keeps the flow maps equal to the set of offloadable conntrack entries.
 *
 * - Subscribes to conntrack events first, then dumps, so no entry falls between the two.
 * - Offloads what offload_policy.c allows: TCP once ESTABLISHED and ASSURED, UDP once a
 *   reply was seen.
 * - Each direction's ingress interface comes from a route lookup of that direction's source;
 *   a direction arriving on an interface the fastpath is not attached to stays in the kernel,
 *   and a connection with a source on the router (its own traffic, or traffic to it: DNS,
 *   a VPN server, its web page) is not offloaded at all.
 * - Offloaded TCP entries are made "be liberal" in both directions: the fastpath does not
 *   update conntrack's window tracking, and when a flow returns to the kernel (FIN, daemon
 *   gone, detach) its next segment must not be called invalid (nf_flow_table does the same).
 * - An overrun (ENOBUFS) means events were lost: grow the socket buffer and dump again;
 *   records the dump did not see (older generation) are removed.
 * - Each scan refreshes the conntrack timeout of connections the fastpath carried, removes
 *   those the datapath marked closing, and those idle past conntrack's own timeout. The
 *   tables are sized for --flows (8 MiB of slots each at the default), and a router
 *   mostly holds far fewer: while at most 1/TABLE_SPARSE of a table's slots are taken,
 *   a scan reads each record's entries where their keys' hashes put them rather than
 *   walk the table (a cache miss each, where the walk streams it: cheaper only while
 *   they are few, as docs/bench/2026-12-05-scan measured). Both tables are walked all
 *   the same at the first scan, after a resync or a change of ports (another process may
 *   have deleted entries: flush, detach), and every TABLE_WALK_SCANS scans: that walk
 *   alone removes entries no record names (a daemon that died left them), reclaims slots
 *   a process that died left DELETED, and recounts the entries.
 * - The kernel gives a conntrack entry its event extension only if a listener existed when
 *   the entry was created (nf_conntrack_events=2, the default): entries older than the daemon
 *   never report their end. Those found by the first dump are "polled": conntrack is asked
 *   for them (a GET each) and those gone or no longer offloadable are dropped. At most
 *   POLL_BUDGET are asked per scan, in turn, so a daemon started on a busy router does not
 *   flood conntrack: a polled entry's end is seen within polled/POLL_BUDGET + 1 scans.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack_tcp.h>
#include <bpf/bpf.h>

#include "conntrack_sync.h"
#include "ct_request.h"
#include "ctnetlink.h"
#include "offload_policy.h"
#include "qdisc.h"
#include "flowmap.h"
#include "options.h"
#include "route_watch.h"
#include "slottable.h"

#define EVENT_RCVBUF_MAX (FP_MAX_EVENT_BUFFER_MIB << 20)
#define DUMP_RCVBUF	 (4 << 20)
#define RECV_BUF_SIZE	 (MNL_SOCKET_BUFFER_SIZE * 16)
#define REFRESH_MAX_S	 60   /* refresh an active entry at least this often */
#define POLL_BUDGET	 1024 /* conntrack GETs per scan for polled entries */
#define TABLE_WALK_SCANS 64   /* scans between two walks of the whole tables, at most */
#define TABLE_SPARSE	 64   /* entries in at most 1/this of the slots: read by record */
#define TABLE_FULL_LOG_NS (60 * 1000000000ull) /* a full table is logged at most this often */

static struct mnl_socket *ct_socket(unsigned int groups)
{
	struct mnl_socket *nl = mnl_socket_open2(NETLINK_NETFILTER, SOCK_CLOEXEC);

	if (!nl)
		return NULL;
	if (mnl_socket_bind(nl, groups, MNL_SOCKET_AUTOPID)) {
		mnl_socket_close(nl);
		return NULL;
	}
	return nl;
}

static int set_rcvbuf(struct mnl_socket *nl, int bytes)
{
	/* FORCE: above net.core.rmem_max, which is small by default; we are root. */
	return setsockopt(mnl_socket_get_fd(nl), SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof(bytes));
}

int ctsync_open(struct fp_ctsync *cs, const struct fp_instance *inst, const struct fp_options *opt,
		struct fp_daemon_state *state, struct fp_route *route)
{
	memset(cs, 0, sizeof(*cs));
	cs->inst = inst;
	cs->opt = opt;
	cs->state = state;
	cs->route = route;
	cs->ports.inst = inst;
	cs->ports.allow_shaping = opt->allow_shaping;
	cs->ports.errors = &state->errors;
	cs->ports.reads = &state->port_reads;
	cs->rcvbuf = opt->event_buffer;
	cs->scans_since_walk = TABLE_WALK_SCANS;
	fp_ct_timeouts_init(&cs->timeouts);
	cs->buf = malloc(RECV_BUF_SIZE);
	if (!cs->buf || conntable_init(&cs->table))
		return -ENOMEM;
	cs->events = ct_socket(NF_NETLINK_CONNTRACK_NEW | NF_NETLINK_CONNTRACK_UPDATE |
			       NF_NETLINK_CONNTRACK_DESTROY);
	if (!cs->events) {
		fp_err("cannot subscribe to conntrack events: %s (is nf_conntrack_netlink there?)",
		       strerror(errno));
		return -errno;
	}
	set_rcvbuf(cs->events, cs->rcvbuf);
	fcntl(mnl_socket_get_fd(cs->events), F_SETFL, O_NONBLOCK);
	cs->dump = ct_socket(0);
	if (!cs->dump || ct_requests_open(&cs->requests)) {
		fp_err("cannot open a conntrack netlink socket: %s", strerror(errno));
		return -errno;
	}
	set_rcvbuf(cs->dump, DUMP_RCVBUF);
	return 0;
}

void ctsync_close(struct fp_ctsync *cs)
{
	if (cs->events)
		mnl_socket_close(cs->events);
	if (cs->dump)
		mnl_socket_close(cs->dump);
	ct_requests_close(&cs->requests);
	fp_ct_timeouts_close(&cs->timeouts);
	conntable_free(&cs->table);
	free(cs->buf);
	cs->events = cs->dump = NULL;
	cs->buf = NULL;
}

int ctsync_event_fd(const struct fp_ctsync *cs)
{
	return mnl_socket_get_fd(cs->events);
}

/* Whether @e may be offloaded: the policy's word (offload_policy.c), and no IPsec policy
 * may take it (ipsec_watch.c). */
static bool offloadable(const struct fp_ctsync *cs, const struct fp_ct_entry *e, bool *unknown)
{
	const struct fp_tuple *orig = &e->tuple[FP_DIR_ORIG];
	uint32_t addrs[4 * 4];

	if (!fp_offloadable(e, cs->opt, unknown))
		return false;
	if (!cs->ipsec || !cs->ipsec->nr)
		return true;
	/* Without a reply tuple, the original's addresses stand for it: the same ones. */
	conntable_pack_addrs(addrs, orig,
			     e->has_tuple[FP_DIR_REPLY] ? &e->tuple[FP_DIR_REPLY] : orig);
	return !ipsec_covers(cs->ipsec, orig->family, addrs, 4, e->has_mark ? e->mark : 0);
}

/* Asks conntrack whether the entry still exists and may stay offloaded. */
static bool ct_still_offloadable(struct fp_ctsync *cs, const struct fp_tuple *orig)
{
	struct fp_ct_entry e;
	bool unknown;
	int err = ct_get(&cs->requests, orig, &e);

	if (err && err != -ENOENT) {
		cs->state->errors++;
		return true; /* unsure: keep it, ask again next scan */
	}
	return !err && offloadable(cs, &e, &unknown);
}

/* The flow key of direction dir: its tuple, arriving on its ingress interface. */
static void conn_key(const struct fp_conn *c, int dir, union fp_flow_key *key)
{
	struct fp_tuple in;

	conn_tuple(c, dir, &in);
	fp_tuple_to_key(&in, c->ingress[dir], key);
}

/* The flow entry of direction dir: its tuple in, the other direction's tuple reversed out. */
static void conn_flow(const struct fp_conn *c, int dir, union fp_flow_key *key,
		      union fp_flow_value *value)
{
	struct fp_tuple in, other;
	uint8_t flags = 0;

	conn_tuple(c, dir, &in);
	conn_tuple(c, !dir, &other);

	memset(key, 0, sizeof(*key));
	memset(value, 0, sizeof(*value));
	fp_tuple_to_key(&in, c->ingress[dir], key);
	/* Translated: source = other's destination, destination = other's source. */
	if (memcmp(in.src, other.dst, sizeof(in.src)) || in.sport != other.dport)
		flags |= FP_FLOW_SNAT;
	if (memcmp(in.dst, other.src, sizeof(in.dst)) || in.dport != other.sport)
		flags |= FP_FLOW_DNAT;
	if (c->mark)
		flags |= FP_FLOW_MARK;
	if (in.family == AF_INET) {
		value->v4.meta.flags = flags;
		value->v4.nat_saddr = other.dst[0];
		value->v4.nat_sport = other.dport;
		value->v4.nat_daddr = other.src[0];
		value->v4.nat_dport = other.sport;
	} else {
		value->v6.meta.flags = flags;
		memcpy(value->v6.nat_saddr, other.dst, 16);
		value->v6.nat_sport = other.dport;
		memcpy(value->v6.nat_daddr, other.src, 16);
		value->v6.nat_dport = other.sport;
	}
}

/* At debug level: what became of a record, with its interfaces each way (0: the kernel's). */
static void conn_log(const struct fp_conn *c, const char *what)
{
	char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN];
	struct fp_tuple orig;

	if (fp_log_level < LOG_DEBUG)
		return;
	conn_tuple(c, FP_DIR_ORIG, &orig);
	inet_ntop(orig.family, orig.src, s, sizeof(s));
	inet_ntop(orig.family, orig.dst, d, sizeof(d));
	fp_log(LOG_DEBUG, "%s %s %s:%u -> %s:%u (in %u / %u)", what,
	       orig.proto == IPPROTO_TCP ? "tcp" : "udp", s, ntohs(orig.sport), d,
	       ntohs(orig.dport), c->ingress[0], c->ingress[1]);
}

/* Deletes the record's flow entries; it keeps its ingress interfaces. */
static void conn_delete_flows(struct fp_ctsync *cs, const struct fp_conn *c)
{
	for (int dir = 0; dir < 2; dir++) {
		union fp_flow_key key;

		if (!c->ingress[dir])
			continue;
		conn_key(c, dir, &key);
		fp_flow_delete(cs->inst, c->family, &key, c->mark);
	}
}

/* A record's leaving, in the daemon's counters; its flow entries are gone or going. */
static void conn_forget(struct fp_conn *c, void *arg)
{
	struct fp_ctsync *cs = arg;

	if (c->polled)
		cs->polled--;
	if (c->fenced)
		cs->state->fenced--;
	cs->state->remove_total++;
}

static void conn_unoffload(struct fp_ctsync *cs, struct fp_conn *c)
{
	conn_log(c, "withdraw");
	conn_delete_flows(cs, c);
	conn_forget(c, cs);
}

static void conn_remove(struct fp_ctsync *cs, struct fp_conn *c)
{
	conn_unoffload(cs, c);
	conntable_remove(&cs->table, c);
}

void ctsync_read_ports(struct fp_ctsync *cs)
{
	ports_read(&cs->ports);
	/* Connections a hold kept in the kernel are offloaded from a dump. */
	if (ports_take_released(&cs->ports))
		cs->resync_needed = true;
}

/* The daemon's "offloaded" counter: the records not fenced. */
static void count_offloaded(struct fp_ctsync *cs)
{
	cs->state->offloaded = cs->table.count - cs->state->fenced;
}

/* Inserts the flow entry of direction dir, arriving on ingress; false if it is not in. */
static bool conn_insert_flow(struct fp_ctsync *cs, struct fp_conn *c, int dir, uint32_t ingress)
{
	union fp_flow_key key;
	union fp_flow_value value;
	int err;

	c->ingress[dir] = ingress;
	conn_flow(c, dir, &key, &value);
	err = fp_flow_insert(cs->inst, c->family, &key, &value, c->mark);
	if (err == -E2BIG || err == -ENOMEM) {
		cs->state->table_full++;
	} else if (err && err != -EEXIST) {
		cs->state->errors++;
	} else {
		return true; /* EEXIST: left by an earlier daemon; adopted as it is */
	}
	c->ingress[dir] = 0;
	return false;
}

static void conn_offload(struct fp_ctsync *cs, const struct fp_tuple *orig,
			 const struct fp_tuple *reply, uint32_t mark)
{
	uint32_t ingress[2] = {0, 0};
	struct fp_conn *c;
	int offloaded = 0;
	uint64_t now = fp_now_ns();

	for (int dir = 0; dir < 2; dir++) {
		const struct fp_tuple *t = dir == FP_DIR_ORIG ? orig : reply;
		int oif = route_oif(cs->route, t->family, t->src, mark);

		/* An end on the router itself: the kernel delivers, nothing is forwarded. */
		if (oif == 0)
			return;
		/* Either way through a held interface: the other way would leave through it. */
		if (oif > 0 && ports_held(&cs->ports, oif))
			return;
		if (oif > 0 && ports_keyed_now(&cs->ports, oif))
			ingress[dir] = oif;
	}
	if (!ingress[0] && !ingress[1])
		return;

	c = conntable_add(&cs->table, orig, reply);
	if (!c) {
		cs->state->errors++;
		return;
	}
	c->gen = cs->dump_gen;
	c->mark = mark;
	c->last_active_s = c->last_refresh_s = now / NSEC;
	if (orig->proto == IPPROTO_TCP && ct_set_liberal(&cs->requests, orig)) {
		/* Without it a flow returning to the kernel may be dropped as invalid. */
		cs->state->errors++;
		conntable_remove(&cs->table, c);
		return;
	}
	for (int dir = 0; dir < 2; dir++)
		if (ingress[dir])
			offloaded += conn_insert_flow(cs, c, dir, ingress[dir]);
	if (!offloaded) {
		conntable_remove(&cs->table, c);
		return;
	}
	cs->state->offload_total++;
	if (cs->first_dump) {
		c->polled = 1;
		c->poll_slot = cs->next_poll_slot++;
		cs->polled++;
	}
	conn_log(c, "offload");
}

static void ct_apply(struct fp_ctsync *cs, int type, const struct fp_ct_entry *e)
{
	const struct fp_tuple *orig = &e->tuple[FP_DIR_ORIG];
	struct fp_conn *c;
	bool unknown;
	int dir;

	if (!e->has_tuple[FP_DIR_ORIG])
		return;
	c = conntable_find(&cs->table, orig, &dir);
	if (c && dir != FP_DIR_ORIG)
		c = NULL;
	if (type == NFCT_T_DESTROY) {
		if (c)
			conn_remove(cs, c);
		return;
	}
	/* Another connection with the same original tuple, translated otherwise: the end of
	 * the one we have and the start of this one went by unseen (lost events). The entries
	 * of the one we have would send its packets to the old translation. */
	if (c && e->has_tuple[FP_DIR_REPLY] &&
	    !conn_has_tuple(c, FP_DIR_REPLY, &e->tuple[FP_DIR_REPLY])) {
		conn_remove(cs, c);
		c = NULL;
	}
	if (!offloadable(cs, e, &unknown)) {
		if (c && !unknown)
			conn_remove(cs, c);
		else if (c)
			c->gen = cs->dump_gen;
		return;
	}
	if (c && (!e->has_mark || e->mark == c->mark)) {
		c->gen = cs->dump_gen;
		return;
	}
	if (c) /* a new mark may route it elsewhere (multi-WAN): offload it afresh */
		conn_remove(cs, c);
	/* Not offloaded: both ways one flow key; a protocol that changes on the way (the
	 * kernel never reports one, and a record keeps one protocol for both tuples). */
	if (!e->has_tuple[FP_DIR_REPLY] || !memcmp(orig, &e->tuple[FP_DIR_REPLY], sizeof(*orig)) ||
	    orig->proto != e->tuple[FP_DIR_REPLY].proto)
		return;
	/* Conntrack's tuples are unique: a record holding either is one whose end we missed. */
	for (dir = 0; dir < 2; dir++)
		while ((c = conntable_find(&cs->table, &e->tuple[dir], &(int){0})))
			conn_remove(cs, c);
	conn_offload(cs, orig, &e->tuple[FP_DIR_REPLY], e->has_mark ? e->mark : 0);
}

static int ct_message_cb(const struct nlmsghdr *nlh, void *data)
{
	struct fp_ctsync *cs = data;
	struct fp_ct_entry e;
	int type;

	if (nlh->nlmsg_type >> 8 != NFNL_SUBSYS_CTNETLINK)
		return MNL_CB_OK;
	switch (nlh->nlmsg_type & 0xff) {
	case IPCTNL_MSG_CT_NEW:
		type = nlh->nlmsg_flags & (NLM_F_CREATE | NLM_F_EXCL) ? NFCT_T_NEW : NFCT_T_UPDATE;
		break;
	case IPCTNL_MSG_CT_DELETE:
		type = NFCT_T_DESTROY;
		break;
	default:
		return MNL_CB_OK;
	}
	if (fp_ct_parse(nlh, &e) == 0)
		ct_apply(cs, type, &e);
	else
		cs->state->errors++;
	cs->state->events++;
	return MNL_CB_OK;
}

static void mark_old_generation(struct fp_conn *c, void *arg)
{
	const struct fp_ctsync *cs = arg;

	if (c->gen != cs->dump_gen)
		c->doomed = 1;
}

/* conntable_reap's callback for each doomed record: its flows leave the maps. */
static void withdraw_doomed(struct fp_conn *c, void *arg)
{
	conn_unoffload(arg, c);
}

int ctsync_resync(struct fp_ctsync *cs)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	/* AF_UNSPEC: IPv4 and IPv6 */
	struct nlmsghdr *nlh = fp_ct_msg_start(buf, IPCTNL_MSG_CT_GET, NLM_F_REQUEST | NLM_F_DUMP,
					       AF_UNSPEC, ++cs->dump_seq);
	int err;

	cs->first_dump = cs->dump_gen == 0;
	cs->dump_gen++;
	ctsync_read_ports(cs);
	cs->resync_needed = false;
	/* After a flush, say: its deletes are not counted here. */
	cs->scans_since_walk = TABLE_WALK_SCANS;
	/* Until NLMSG_DONE; a dump cut short must not reap what it did not get to. */
	err = fp_nl_request(cs->dump, nlh, cs->buf, RECV_BUF_SIZE, ct_message_cb, cs);
	if (err) {
		fp_err("conntrack dump failed: %s", strerror(-err));
		cs->resync_needed = true;
		return err;
	}

	cs->first_dump = false;
	conntable_walk(&cs->table, mark_old_generation, cs);
	conntable_reap(&cs->table, withdraw_doomed, cs);
	count_offloaded(cs);
	return 0;
}

void ctsync_parse(struct fp_ctsync *cs, const void *buf, size_t len)
{
	if (!fp_nlmsg_stream_ok(buf, len)) {
		cs->state->errors++;
		cs->resync_needed = true; /* what it said is lost: ask again */
		return;
	}
	mnl_cb_run(buf, len, 0, 0, ct_message_cb, cs);
}

/* After lost events, or when connections the kernel kept may be offloaded now. */
static void resync_if_needed(struct fp_ctsync *cs)
{
	if (cs->resync_needed) {
		cs->state->resyncs++;
		ctsync_resync(cs);
	}
}

void ctsync_handle_events(struct fp_ctsync *cs)
{
	for (;;) {
		ssize_t n = mnl_socket_recvfrom(cs->events, cs->buf, RECV_BUF_SIZE);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ENOBUFS) {
				/* Events were lost: a bigger buffer, and the truth from a dump. */
				cs->state->overruns++;
				if (cs->rcvbuf < EVENT_RCVBUF_MAX) {
					cs->rcvbuf *= 2;
					set_rcvbuf(cs->events, cs->rcvbuf);
				}
				fp_log(LOG_WARNING,
				       "conntrack events were lost (buffer now %d KiB): resyncing",
				       cs->rcvbuf >> 10);
				cs->resync_needed = true;
				continue;
			}
			break; /* EAGAIN: drained */
		}
		ctsync_parse(cs, cs->buf, n);
	}
	resync_if_needed(cs);
	count_offloaded(cs);
}

/* Scan */

struct scan_ctx {
	struct fp_ctsync *cs;
	uint64_t now;
	bool by_record[2];    /* scan_flows_of() reads the records' IPv4, IPv6 entries */
	uint32_t poll_stride; /* this scan polls the records whose slot matches, modulo this */
	bool complete;	      /* the ports changed: complete records offloaded one way */
};

/*
 * A record offloaded one way only, because the other way's interface was not attached
 * then (attach had just added it, and the daemon's copy of the ports did not know it yet):
 * once the ports change, the other way is offloaded too if its interface is attached now.
 * Its packets until then went through the kernel, which keeps conntrack up to date.
 */
static void conn_complete(struct fp_ctsync *cs, struct fp_conn *c)
{
	for (int dir = 0; dir < 2; dir++) {
		struct fp_tuple t;
		int oif;

		if (c->ingress[dir])
			continue;
		conn_tuple(c, dir, &t);
		oif = route_oif(cs->route, t.family, t.src, c->mark);
		if (oif <= 0)
			continue;
		if (ports_held(&cs->ports,
			       oif)) { /* as conn_offload(): held either way, not at all */
			c->doomed = 1;
			return;
		}
		if (ports_keyed(&cs->ports, oif) && conn_insert_flow(cs, c, dir, oif))
			conn_log(c, "complete");
	}
}

/* What a scan learns from a flow entry of record @c's direction @dir. */
static void scan_entry(struct scan_ctx *sc, struct fp_conn *c, int dir, int family,
		       const union fp_flow_key *key, const union fp_flow_value *value)
{
	const struct fp_flow_meta *meta = family == AF_INET ? &value->v4.meta : &value->v6.meta;

	if (fp_flow_closing(family, key))
		c->doomed = 1;
	/* A new stamp since the last scan: a packet, as old as the stamp says. Only then,
	 * as a stamp left alone wraps round to look new every 274 s. */
	if (meta->last_seen != c->seen_stamp[dir]) {
		uint64_t age_ns = fp_stamp_age_ns(sc->now, meta->last_seen);
		uint32_t last_s = sc->now > age_ns ? (sc->now - age_ns) / NSEC : 0;

		c->seen_stamp[dir] = meta->last_seen;
		if (last_s > c->last_active_s)
			c->last_active_s = last_s;
	}
}

/* A walk's entry: the record it belongs to, if any. */
static int scan_flow(int family, const union fp_flow_key *key, const union fp_flow_value *value,
		     void *arg)
{
	struct scan_ctx *sc = arg;
	const struct fp_flow_meta *meta = family == AF_INET ? &value->v4.meta : &value->v6.meta;
	struct fp_tuple tuple;
	struct fp_conn *c;
	uint32_t ingress;
	int dir;

	fp_key_to_tuple(family, key, &tuple, &ingress);
	c = conntable_find(&sc->cs->table, &tuple, &dir);
	if (!c || c->ingress[dir] != ingress) {
		/* Not ours: left by a daemon that died, for a connection that is gone. */
		fp_flow_delete(sc->cs->inst, family, key, meta->flags & FP_FLOW_MARK);
		return 0;
	}
	scan_entry(sc, c, dir, family, key, value);
	return 0;
}

/* A record's entries, if its family's table is not walked: read by their keys. */
static void scan_flows_of(struct fp_conn *c, void *arg)
{
	struct scan_ctx *sc = arg;

	if (!sc->by_record[c->family == AF_INET6])
		return;
	for (int dir = 0; dir < 2; dir++) {
		union fp_flow_key key;
		union fp_flow_value value;

		if (!c->ingress[dir])
			continue;
		conn_key(c, dir, &key);
		if (fp_flow_read(sc->cs->inst, c->family, &key, &value) == 0)
			scan_entry(sc, c, dir, c->family, &key, &value);
	}
}

static void scan_conn(struct fp_conn *c, void *arg)
{
	struct scan_ctx *sc = arg;
	struct fp_ctsync *cs = sc->cs;
	uint32_t now_s = sc->now / NSEC, timeout_s = fp_ct_timeout_s(&cs->timeouts, c->proto);
	uint32_t refresh_s = timeout_s / 4;
	struct fp_tuple orig;

	if (c->doomed)
		return;
	for (int dir = 0; dir < 2; dir++) {
		/* Its interface was detached, or is held now: back to the kernel. */
		if (c->ingress[dir] && (!ports_keyed(&cs->ports, c->ingress[dir]) ||
					ports_held(&cs->ports, c->ingress[dir]))) {
			c->doomed = 1;
			return;
		}
	}
	if (sc->complete && !c->fenced && !(c->ingress[0] && c->ingress[1])) {
		conn_complete(cs, c);
		if (c->doomed)
			return;
	}
	conn_tuple(c, FP_DIR_ORIG, &orig);
	if (c->polled && c->poll_slot % sc->poll_stride == cs->scans % sc->poll_stride &&
	    !ct_still_offloadable(cs, &orig)) {
		c->doomed = 1;
		return;
	}
	if (c->fenced)
		return; /* no flow entries: nothing to refresh, kept until conntrack ends it */
	if (refresh_s > REFRESH_MAX_S)
		refresh_s = REFRESH_MAX_S;
	if (now_s > c->last_active_s && now_s - c->last_active_s > timeout_s) {
		c->doomed = 1; /* idle: conntrack lets it expire, so do we */
		return;
	}
	if (c->last_active_s > c->last_refresh_s && now_s - c->last_refresh_s >= refresh_s) {
		int err = ct_set_timeout(&cs->requests, &orig, timeout_s);

		if (err == -ENOENT) {
			c->doomed = 1; /* conntrack forgot it and we missed the event */
			return;
		}
		if (err)
			cs->state->errors++;
		else
			cs->state->refresh_total++;
		c->last_refresh_s = now_s;
	}
}

/* Whether so few slots are taken that reading each record's entries costs less than a
 * walk of the table. */
static bool table_sparse(const struct fp_slots *t)
{
	return t && (uint64_t)t->used * TABLE_SPARSE <= (uint64_t)t->mask + 1;
}

/*
 * Connections a full table refused stay with the kernel, slower but intact: only the log
 * and the table_full counter tell. The table's size is fixed when the program is loaded.
 */
static void log_table_full(struct fp_ctsync *cs, uint64_t now_ns)
{
	uint64_t refused = cs->state->table_full - cs->table_full_logged;

	if (!refused || (cs->table_full_log_ns &&
			 fp_elapsed_ns(now_ns, cs->table_full_log_ns) < TABLE_FULL_LOG_NS))
		return;
	fp_log(LOG_WARNING,
	       "flow table full (%u entries a family): %llu entries refused, their "
	       "connections left to the kernel; "
	       "%s, then detach every interface and attach again to resize it",
	       cs->inst->slots4->capacity, (unsigned long long)refused,
	       cs->opt->flows ? "raise --flows" : "raise nf_conntrack_max or give --flows");
	cs->table_full_logged = cs->state->table_full;
	cs->table_full_log_ns = now_ns;
}

void ctsync_scan(struct fp_ctsync *cs, uint64_t now_ns)
{
	struct scan_ctx sc = {.cs = cs, .now = now_ns};
	bool walk_due;

	if (ports_due(&cs->ports, now_ns))
		ctsync_read_ports(cs);
	sc.complete = ports_take_changed(&cs->ports);
	sc.poll_stride = cs->polled / POLL_BUDGET + 1;
	cs->scans++;
	fp_ct_timeouts_read(&cs->timeouts);
	walk_due = sc.complete || ++cs->scans_since_walk >= TABLE_WALK_SCANS;
	if (walk_due)
		cs->scans_since_walk = 0;
	/* Each table walked whole, or its records' entries read: both in one pass. */
	sc.by_record[0] = !walk_due && table_sparse(cs->inst->slots4);
	sc.by_record[1] = !walk_due && table_sparse(cs->inst->slots6);
	if (!sc.by_record[0])
		fp_flows_walk(cs->inst, AF_INET, scan_flow, &sc);
	if (!sc.by_record[1])
		fp_flows_walk(cs->inst, AF_INET6, scan_flow, &sc);
	if (sc.by_record[0] || sc.by_record[1])
		conntable_walk(&cs->table, scan_flows_of, &sc);
	sc.now = fp_now_ns(); /* after the walk: no last-seen time read in it is later */
	conntable_walk(&cs->table, scan_conn, &sc);
	conntable_reap(&cs->table, withdraw_doomed, cs);
	resync_if_needed(cs);
	count_offloaded(cs);
	log_table_full(cs, sc.now);
}

static void doom_ifindex(struct fp_conn *c, void *arg)
{
	uint32_t ifindex = *(uint32_t *)arg;

	if (c->ingress[0] == ifindex || c->ingress[1] == ifindex)
		c->doomed = 1;
}

void ctsync_port_attached(struct fp_ctsync *cs)
{
	cs->state->resyncs++;
	ctsync_resync(cs);
}

void ctsync_drop_ifindex(struct fp_ctsync *cs, uint32_t ifindex)
{
	conntable_walk(&cs->table, doom_ifindex, &ifindex);
	conntable_reap(&cs->table, withdraw_doomed, cs);
	fp_flows_delete_ifindex(cs->inst, ifindex);
	count_offloaded(cs);
}

static void fence(struct fp_conn *c, void *arg)
{
	struct fp_ctsync *cs = arg;

	conn_delete_flows(cs, c);
	c->ingress[0] = c->ingress[1] = 0;
	if (!c->fenced) {
		c->fenced = 1;
		cs->state->fenced++;
	}
}

uint32_t ctsync_fence_all(struct fp_ctsync *cs)
{
	uint64_t before = cs->state->fenced;

	conntable_walk(&cs->table, fence, cs);
	count_offloaded(cs);
	return cs->state->fenced - before;
}

static void doom_ipsec(struct fp_conn *c, void *arg)
{
	const struct fp_ctsync *cs = arg;

	if (!c->fenced && ipsec_covers(cs->ipsec, c->family, c->addr, 4, c->mark))
		c->doomed = 1;
}

uint32_t ctsync_ipsec_changed(struct fp_ctsync *cs)
{
	size_t n;

	conntable_walk(&cs->table, doom_ipsec, cs);
	n = conntable_reap(&cs->table, withdraw_doomed, cs);
	/* What the policies no longer take is offloaded from a dump. */
	cs->resync_needed = true;
	count_offloaded(cs);
	return n;
}

static void doom_all(struct fp_conn *c, void *arg)
{
	(void)arg;
	c->doomed = 1;
}

static void doom_offloaded(struct fp_conn *c, void *arg)
{
	(void)arg;
	if (!c->fenced)
		c->doomed = 1;
}

void ctsync_drop_offloaded(struct fp_ctsync *cs)
{
	conntable_walk(&cs->table, doom_offloaded, NULL);
	conntable_reap(&cs->table, withdraw_doomed, cs);
	count_offloaded(cs);
}

void ctsync_drop_all(struct fp_ctsync *cs)
{
	/* The maps emptied in batches first, then the records without a syscall each. */
	fp_flows_delete_all(cs->inst);
	conntable_walk(&cs->table, doom_all, NULL);
	conntable_reap(&cs->table, conn_forget, cs);
	count_offloaded(cs);
}
