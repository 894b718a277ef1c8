/* SPDX-License-Identifier: GPL-2.0-only */
/* The conntrack sync: conntrack entries in, flow map entries out (see conntrack_sync.c). */
#ifndef FP_CONNTRACK_SYNC_H
#define FP_CONNTRACK_SYNC_H

#include "common.h"
#include "conntable.h"
#include "ipsec_watch.h"
#include "ct_request.h"
#include "offload_policy.h"
#include "ports.h"

struct mnl_socket;
struct fp_route;

struct fp_ctsync {
	const struct fp_instance *inst;
	const struct fp_options *opt;
	struct fp_daemon_state *state;
	struct fp_route *route;
	struct mnl_socket *events; /* NEW, UPDATE, DESTROY subscription */
	struct mnl_socket *dump;
	uint32_t dump_seq;
	struct fp_ct_requests requests; /* be-liberal, timeouts, GETs (ct_request.h) */
	int rcvbuf;			/* bytes, doubled on every overrun */
	struct fp_conntable table;
	uint32_t dump_gen;
	struct fp_ct_timeouts timeouts; /* conntrack's own, read at each scan */
	bool resync_needed;
	bool first_dump;	 /* what it finds existed before us: no events (see .c) */
	uint32_t polled;	 /* records with polled set */
	uint32_t next_poll_slot; /* the next polled record's slot */
	uint64_t scans;
	uint64_t table_full_logged; /* state->table_full when last logged */
	uint64_t table_full_log_ns; /* when: fp_now_ns() */
	/* Scans since the last that walked the whole tables; at TABLE_WALK_SCANS the next
	 * one does (see the .c) */
	uint32_t scans_since_walk;
	struct fp_ports ports; /* the interfaces flows may be keyed by; .topo set by the caller */
	const struct fp_ipsec *ipsec; /* the IPsec policies (set by the caller; NULL: none) */
	char *buf;		      /* events and dumps */
};

int ctsync_open(struct fp_ctsync *cs, const struct fp_instance *inst, const struct fp_options *opt,
		struct fp_daemon_state *state, struct fp_route *route);
void ctsync_close(struct fp_ctsync *cs);
int ctsync_event_fd(const struct fp_ctsync *cs);
/* Reads every pending event; resyncs after an overrun. */
void ctsync_handle_events(struct fp_ctsync *cs);
/* Applies the conntrack messages in buf (what an event socket read returns). */
void ctsync_parse(struct fp_ctsync *cs, const void *buf, size_t len);
/* Dumps conntrack and keeps exactly what the dump shows offloadable. */
int ctsync_resync(struct fp_ctsync *cs);
/* Reads the attached interfaces, the topology above them and their shapers again. */
void ctsync_read_ports(struct fp_ctsync *cs);
/* Once per scan: refresh conntrack timeouts of active flows, remove closed and idle ones. */
void ctsync_scan(struct fp_ctsync *cs, uint64_t now_ns);
/* A port was attached by the daemon (reattach.c): its connections, from a dump. */
void ctsync_port_attached(struct fp_ctsync *cs);
/* Forgets every connection that enters or leaves through ifindex. */
void ctsync_drop_ifindex(struct fp_ctsync *cs, uint32_t ifindex);
/*
 * After a firewall change: every flow goes back to the kernel, and the connections known
 * now stay there until they end, since the new ruleset may reject them and conntrack
 * would still call them offloadable. Connections that start later are offloaded as usual.
 * Returns how many were fenced.
 */
uint32_t ctsync_fence_all(struct fp_ctsync *cs);
/* After the IPsec policies changed: the connections they now take return to the kernel
 * (how many: returned), and a dump offloads those they no longer take. */
uint32_t ctsync_ipsec_changed(struct fp_ctsync *cs);
/* Removes every offloaded connection (flow entries too); fenced ones stay fenced. */
void ctsync_drop_offloaded(struct fp_ctsync *cs);
/* Removes every connection, and empties the flow maps (entries left by a daemon that died
 * too), in batches: the clean stop. */
void ctsync_drop_all(struct fp_ctsync *cs);

#endif
