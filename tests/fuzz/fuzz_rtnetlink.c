// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: rtnetlink messages into the route watcher (link, address, route and
 * neighbour events), into the route lookup's reply parser, and into the topology (a link
 * dump, and the same messages as the bridges' FDB dump, into real BPF maps). The first
 * byte picks which: odd the watcher, 2 the topology, else the lookup. Socket calls are
 * wrapped (-Wl,--wrap) so the reply is the input, with the request's sequence number and
 * port id patched in so the parser gets past them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>

#include <stdio.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "fuzz.h"
#include "route_watch.h"
#include "topology.h"

#define RT_INPUT_MAX (1 << 16) /* the buffer route_watch_read reads into is this big */

static struct fp_route rt;
static struct fp_topology topo;
static struct fp_instance topo_inst;
static const uint8_t *reply;
static size_t reply_len;
static uint32_t request_seq;

ssize_t __wrap_mnl_socket_sendto(const struct mnl_socket *nl, const void *req, size_t len)
{
	(void)nl;
	request_seq = ((const struct nlmsghdr *)req)->nlmsg_seq;
	return len;
}

ssize_t __wrap_mnl_socket_recvfrom(const struct mnl_socket *nl, void *buf, size_t len)
{
	size_t n = reply_len < len ? reply_len : len;
	struct nlmsghdr *nlh = buf;
	int left = n;

	if (!reply) {
		errno = EAGAIN;
		return -1;
	}
	memcpy(buf, reply, n);
	reply = NULL;
	if (!fp_nlmsg_stream_ok(buf, n))
		return n; /* as it is: the parser must refuse it */
	for (; mnl_nlmsg_ok(nlh, left); nlh = mnl_nlmsg_next(nlh, &left)) {
		nlh->nlmsg_seq = request_seq;
		nlh->nlmsg_pid = mnl_socket_get_portid(nl);
	}
	return n;
}

/* The topology's maps, as the datapath's, and one PPPoE session on "wan.7", in a file
 * removed at once and read through the descriptor kept open: none is left behind, however
 * the run ends. */
static void topology_init(void)
{
	static char pppoe[32];
	char path[] = "/tmp/fp-fuzz-pppoe.XXXXXX";
	int fd = mkstemp(path);

	if (fd < 0 || unlink(path) ||
	    dprintf(fd, "Id       Address              Device\n"
			"00003412 02:00:00:00:03:02    wan.7\n") < 0)
		abort();
	snprintf(pppoe, sizeof(pppoe), "/proc/self/fd/%d", fd);
	if (topology_open(&topo))
		abort();
	topo.pppoe_path = pppoe;
	topo.ask_ports = false; /* the ports are made up: nothing to ask the kernel */
	topo_inst.ingress_fd =
		bpf_map_create(BPF_MAP_TYPE_HASH, "fuzz_ingress", sizeof(struct fp_ingress_key),
			       sizeof(struct fp_ingress), FP_MAX_L2_IFACES, NULL);
	topo_inst.egress_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "fuzz_egress", sizeof(uint32_t),
					     sizeof(struct fp_egress), FP_MAX_L2_IFACES, NULL);
	topo_inst.fdb_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "fuzz_fdb", sizeof(struct fp_fdb_key),
					  sizeof(struct fp_fdb_port), FP_MAX_FDB, NULL);
	if (topo_inst.ingress_fd < 0 || topo_inst.egress_fd < 0 || topo_inst.fdb_fd < 0)
		fuzz_fail("cannot create the topology maps (root?)");
}

static bool topo_serves(uint32_t ifindex)
{
	for (int i = 0; i < topo.nr_served; i++)
		if (topo.served[i] == ifindex)
			return true;
	return false;
}

/* After a sync the maps describe what it serves: an fp_egress entry for each upper device
 * it serves and no other, and fp_ingress leads only to those. */
static void topology_one(const uint8_t *data, size_t size)
{
	static const uint32_t ports[] = {FUZZ_LAN_IFINDEX, FUZZ_WAN_IFINDEX};
	struct fp_ingress_key ikey, *iprev = NULL;
	struct fp_ingress upper;
	struct fp_egress eg;
	uint32_t key, *prev = NULL;
	int n = 0;

	memcpy(rt.buf, data, size);
	topo.link_dump = rt.buf;
	topo.link_dump_len = size;
	reply = data; /* the FDB dump, if a bridge is served, reads the same messages */
	reply_len = size;
	if (topology_sync(&topo, &topo_inst, ports, 2) < 0)
		return;
	if (topo.nr_served < 0 || topo.nr_served > FP_MAX_L2_IFACES)
		fuzz_fail("%d served", topo.nr_served);
	for (int i = 0; i < topo.nr_served; i++)
		if (bpf_map_lookup_elem(topo_inst.egress_fd, &topo.served[i], &eg))
			fuzz_fail("served %u has no fp_egress entry", topo.served[i]);
	while (bpf_map_get_next_key(topo_inst.egress_fd, prev, &key) == 0) {
		if (!topo_serves(key))
			fuzz_fail("fp_egress has %u, which is not served", key);
		prev = &key;
		n++;
	}
	if (n != topo.nr_served)
		fuzz_fail("%d fp_egress entries for %d served", n, topo.nr_served);
	while (bpf_map_get_next_key(topo_inst.ingress_fd, iprev, &ikey) == 0) {
		if (bpf_map_lookup_elem(topo_inst.ingress_fd, &ikey, &upper) ||
		    !topo_serves(upper.ifindex))
			fuzz_fail("fp_ingress leads to %u, which is not served", upper.ifindex);
		if (ikey.ifindex != FUZZ_LAN_IFINDEX && ikey.ifindex != FUZZ_WAN_IFINDEX)
			fuzz_fail("fp_ingress for %u, which is not attached", ikey.ifindex);
		iprev = &ikey;
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_quiet();
	rt.buf = malloc(RT_INPUT_MAX);
	rt.cache = calloc(FP_ROUTE_CACHE_SIZE, sizeof(*rt.cache));
	rt.lookup = mnl_socket_open(NETLINK_ROUTE);
	if (!rt.buf || !rt.cache || !rt.lookup || mnl_socket_bind(rt.lookup, 0, MNL_SOCKET_AUTOPID))
		abort();
	topology_init();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint32_t addr[4] = {0x010212c6}; /* 198.18.2.1 */
	struct fp_route_changes changes;
	int oif;

	if (size < 1 || size - 1 > RT_INPUT_MAX)
		return 0;
	if (data[0] == 2) {
		topology_one(data + 1, size - 1);
		return 0;
	}
	if (data[0] & 1) {
		/* The watcher; a cached lookup must not survive a change it reports. A socket
		 * read fills an aligned buffer: so does the test. */
		memset(&changes, 0, sizeof(changes));
		memcpy(rt.buf, data + 1, size - 1);
		rt.cache[0] = (struct fp_route_cached){.family = AF_INET, .oif = 7};
		route_watch_parse(&rt, rt.buf, size - 1, &changes);
		if (changes.nr_deleted < 0 ||
		    changes.nr_deleted >
			    (int)(sizeof(changes.deleted) / sizeof(changes.deleted[0])))
			fuzz_fail("nr_deleted %d", changes.nr_deleted);
		for (int i = 0; i < changes.nr_deleted; i++)
			if (strnlen(changes.deleted_names[i], FP_LINK_NAME_LEN) == FP_LINK_NAME_LEN)
				fuzz_fail("a deleted link's name is not terminated");
		if (changes.l2_changed && !changes.nexthops_changed)
			fuzz_fail("a layer-2 change that changes no next hop");
		if (changes.nr_deleted && !changes.l2_changed)
			fuzz_fail("a deleted link that is no layer-2 change");
		if (changes.nr_deleted && !changes.nexthops_changed)
			fuzz_fail("a deleted link that changes no next hop");
		if (changes.nexthops_changed && rt.cache[0].family)
			fuzz_fail("a change that left the route cache in place");
		return 0;
	}
	/* The lookup: whatever the reply, it ends (no socket read after the reply), and an
	 * interface it found, or a local route, is remembered: asking again reads nothing. */
	reply = data + 1;
	reply_len = size - 1;
	route_cache_flush(&rt);
	oif = route_oif(&rt, AF_INET, addr, 0);
	if (oif >= 0 && route_oif(&rt, AF_INET, addr, 0) != oif)
		fuzz_fail("interface %d was not cached", oif);
	return 0;
}
