/* SPDX-License-Identifier: GPL-2.0-only */
/* The conntrack sync: conntrack entries in, flow map entries out (see conntrack_sync.c). */
#ifndef FP_CONNTRACK_SYNC_H
#define FP_CONNTRACK_SYNC_H

#include "common.h"
#include "conntable.h"
#include "topology.h"

#define FP_MAX_IFACES (FP_MAX_TX_PORTS + FP_MAX_L2_IFACES)

struct mnl_socket;
struct fp_route;

struct fp_ctsync {
	const struct fp_instance *inst;
	const struct fp_options *opt;
	struct fp_daemon_state *state;
	struct fp_route *route;
	struct mnl_socket *events; /* NEW, UPDATE, DESTROY subscription */
	/*
	 * Requests made while a dump or an event read is being parsed (be-liberal updates, GETs)
	 * get a socket and a buffer of their own: on the dump's socket their answer would queue
	 * behind the dump, and in the shared buffer it would overwrite the messages being parsed.
	 */
	struct mnl_socket *request; /* updates and GETs, one at a time */
	struct mnl_socket *dump;
	uint32_t request_seq;
	int rcvbuf; /* bytes, doubled on every overrun */
	struct fp_conntable table;
	uint32_t dump_gen;
	uint32_t timeout_s[2]; /* established TCP, UDP stream: conntrack's own */
	bool resync_needed;
	bool first_dump;	 /* what it finds existed before us: no events (see .c) */
	uint32_t polled;	 /* records with polled set */
	uint32_t next_poll_slot; /* the next polled record's slot */
	uint64_t scans;
	/* The interfaces flows may be keyed by, as last read: the attached ones, then the
	 * upper devices above them (bridges, VLANs, PPPoE) the topology serves. */
	uint32_t ports[FP_MAX_IFACES];
	int nr_ports;
	uint64_t ports_read_ns;
	bool ports_changed; /* since the last scan, which completes half-offloaded records */
	int nr_attached;    /* ports[0..nr_attached-1] are attached, the rest upper devices */
	/* Interfaces whose connections stay in the kernel, as of the scan, and why (HELD_*). */
	uint32_t held[FP_MAX_IFACES];
	uint8_t held_why[FP_MAX_IFACES];
	int nr_held;
	struct fp_topology *topo; /* NULL: plain ports only */
	bool topology_changed;	  /* the L2 maps changed: cached next hops are stale */
	char *buf;		  /* events and dumps */
	char *request_buf;	  /* answers to requests */
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
/* Forgets every connection that enters or leaves through ifindex. */
void ctsync_drop_ifindex(struct fp_ctsync *cs, uint32_t ifindex);
/*
 * After a firewall change: every flow goes back to the kernel, and the connections known
 * now stay there until they end, since the new ruleset may reject them and conntrack
 * would still call them offloadable. Connections that start later are offloaded as usual.
 * Returns how many were fenced.
 */
uint32_t ctsync_fence_all(struct fp_ctsync *cs);
/* Removes every offloaded connection (flow entries too); fenced ones stay fenced. */
void ctsync_drop_offloaded(struct fp_ctsync *cs);
/* Removes every connection (flow entries too). */
void ctsync_drop_all(struct fp_ctsync *cs);

#endif
