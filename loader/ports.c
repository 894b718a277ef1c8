// SPDX-License-Identifier: GPL-2.0-only
/*
 * The interfaces the daemon offloads through. Flows are keyed by the interface a packet
 * arrives on: an attached port, or an upper device above one (a bridge, a VLAN, a PPPoE
 * session's ppp device) that the topology serves. Some of them keep their connections in
 * the kernel for a while: one with a shaping qdisc, which offloaded flows would bypass,
 * and a veth whose peer transmits with checksum offload, whose packets a redirect would
 * forward with partial checksums (veth_peer.h). Both can start and end at any time.
 */
#include <string.h>
#include <syslog.h>

#include "hooks.h"
#include "instance.h"
#include "ports.h"
#include "qdisc.h"
#include "veth_peer.h"

#define REREAD_NS 100000000ull /* see ports_keyed_now() */
/*
 * Events say when links, FDBs, qdiscs and veth peers change (route_watch.c), and the
 * configuration is read then. Reading it at every scan as well cost an idle daemon more
 * than all else it did (a netlink dump of links, one of FDBs, one of qdiscs, XDP and
 * ethtool queries of each port); it is read this often anyway, for what no event tells
 * (another program's XDP attachment by a BPF link, say).
 */
#define PORTS_RECHECK_NS (10 * NSEC)

static bool listed(const uint32_t *ifindexes, int n, uint32_t ifindex)
{
	for (int i = 0; i < n; i++)
		if (ifindexes[i] == ifindex)
			return true;
	return false;
}

bool ports_keyed(const struct fp_ports *p, uint32_t ifindex)
{
	return listed(p->keyed, p->nr_keyed, ifindex);
}

uint8_t ports_held(const struct fp_ports *p, uint32_t ifindex)
{
	for (int i = 0; i < p->nr_held; i++)
		if (p->held[i] == ifindex)
			return p->held_why[i];
	return 0;
}

/* The attached ports, then the upper devices served above them (synced first if
 * sync_topology, else as of the last sync). */
static void list_keyed(struct fp_ports *p, bool sync_topology)
{
	struct fp_topology *t = p->topo;
	uint32_t was[FP_MAX_IFACES];
	int nr_was = p->nr_keyed, err;
	bool same;

	memcpy(was, p->keyed, nr_was * sizeof(was[0]));
	p->nr_keyed = fp_tx_ports(p->inst, p->keyed, FP_MAX_TX_PORTS);
	p->nr_attached = p->nr_keyed;
	p->read_ns = fp_now_ns();
	if (t && sync_topology) {
		err = topology_sync(t, p->inst, p->keyed, p->nr_keyed);
		if (err < 0 && p->errors)
			(*p->errors)++;
		/* A failed sync may have written some of the maps: look next hops up again. */
		if (err)
			p->topology_changed = true;
	}
	/* An upper device whose ifindex no flow key holds keeps its connections. */
	for (int i = 0; t && i < t->nr_served && p->nr_keyed < FP_MAX_IFACES; i++)
		if (t->served[i] <= FP_MAX_FLOW_IFINDEX &&
		    !listed(p->keyed, p->nr_keyed, t->served[i]))
			p->keyed[p->nr_keyed++] = t->served[i];
	same = nr_was == p->nr_keyed;
	for (int i = 0; same && i < nr_was; i++)
		same = listed(p->keyed, p->nr_keyed, was[i]);
	if (!same)
		p->changed = true;
}

/*
 * Reading the list for each direction of each new connection cost two syscalls per
 * connection, so it is a copy of the devmap's keys. It is read again when it does not know
 * an interface that the devmap has (attach just added it: one lookup), or that it has not
 * looked for in REREAD_NS (an upper device the topology serves now), and at every scan (so
 * a detached one is forgotten within a scan; the scan also returns its connections to the
 * kernel). An interface the copy missed all the same leaves its connections offloaded one
 * way until the scan after, which completes them.
 */
bool ports_keyed_now(struct fp_ports *p, uint32_t ifindex)
{
	if (ports_keyed(p, ifindex))
		return true;
	if (!fp_tx_port_attached(p->inst, ifindex) &&
	    fp_elapsed_ns(fp_now_ns(), p->read_ns) < REREAD_NS)
		return false;
	list_keyed(p, false);
	return ports_keyed(p, ifindex);
}

/*
 * The veths attached at an XDP hook whose peer transmits with checksum offload now (attach
 * refuses them; the peer may turn it on later), into bad[]: how many.
 */
static int peer_checksum_ports(const struct fp_ports *p, uint32_t *bad)
{
	int nr = 0;

	for (int i = 0; i < p->nr_attached; i++) {
		struct fp_veth_peer peer;
		char fix[128];

		if (fp_veth_peer(p->keyed[i], &peer) != 1 || !peer.tx_checksum)
			continue;
		/* The tc hook keeps partial checksums right. */
		if (fp_hook_of(p->inst, p->keyed[i]) == FP_HOOK_TC)
			continue;
		bad[nr++] = p->keyed[i];
		if (ports_held(p, p->keyed[i]) & FP_HELD_PEER_CHECKSUM)
			continue;
		fp_veth_peer_ethtool(&peer, "tx off", fix, sizeof(fix));
		fp_log(LOG_WARNING,
		       "interface %u: its veth peer %s transmits with checksum offload now: its "
		       "connections stay in the kernel until that is off (%s)",
		       p->keyed[i], peer.name, fix);
	}
	return nr;
}

/* Whether ifindex is port, or an upper device (bridge, VLAN, PPPoE) above it. */
static bool on_port(const struct fp_ports *p, uint32_t ifindex, uint32_t port)
{
	return ifindex == port || (p->topo && topology_upper_on_port(p->topo, ifindex, port));
}

/* Which of the interfaces hold their connections in the kernel now, and why. */
static void refresh_held(struct fp_ports *p)
{
	char kinds[FP_MAX_IFACES][FP_QDISC_KIND_LEN];
	uint32_t held[FP_MAX_IFACES], bad[FP_MAX_TX_PORTS];
	uint8_t why[FP_MAX_IFACES];
	bool shapers = !p->allow_shaping && !fp_shaping_qdiscs(p->keyed, p->nr_keyed, kinds);
	int nr = 0, nr_bad = peer_checksum_ports(p, bad);

	for (int i = 0; i < p->nr_keyed; i++) {
		uint32_t ifindex = p->keyed[i];
		uint8_t was = ports_held(p, ifindex), is = 0;

		if (shapers && kinds[i][0]) {
			is |= FP_HELD_SHAPER;
			if (!(was & FP_HELD_SHAPER))
				fp_log(LOG_NOTICE,
				       "interface %u has a shaping qdisc (%s): its connections "
				       "stay "
				       "in the kernel",
				       ifindex, kinds[i]);
		}
		for (int j = 0; j < nr_bad; j++)
			if (on_port(p, ifindex, bad[j]))
				is |= FP_HELD_PEER_CHECKSUM;
		if ((was & FP_HELD_PEER_CHECKSUM) && !(is & FP_HELD_PEER_CHECKSUM) &&
		    i < p->nr_attached)
			fp_log(LOG_NOTICE,
			       "interface %u: its veth peer's checksum offload is off: its "
			       "connections are offloaded again",
			       ifindex);
		if (was && !is)
			p->released = true;
		if (!is)
			continue;
		held[nr] = ifindex;
		why[nr++] = is;
	}
	memcpy(p->held, held, nr * sizeof(held[0]));
	memcpy(p->held_why, why, nr * sizeof(why[0]));
	p->nr_held = nr;
}

void ports_read(struct fp_ports *p)
{
	list_keyed(p, true);
	refresh_held(p);
	p->full_read_ns = p->read_ns;
	p->stale = false;
	if (p->reads)
		(*p->reads)++;
}

bool ports_due(struct fp_ports *p, uint64_t now_ns)
{
	list_keyed(p, false);
	return p->changed || p->stale || !p->full_read_ns ||
	       fp_elapsed_ns(now_ns, p->full_read_ns) >= PORTS_RECHECK_NS;
}

static bool take(bool *flag)
{
	bool was = *flag;

	*flag = false;
	return was;
}

bool ports_take_changed(struct fp_ports *p)
{
	return take(&p->changed);
}

bool ports_take_topology_changed(struct fp_ports *p)
{
	return take(&p->topology_changed);
}

bool ports_take_released(struct fp_ports *p)
{
	return take(&p->released);
}
