// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: rtnetlink messages into the route watcher (link, address, route and
 * neighbour events) and into the route lookup's reply parser. The first byte picks which;
 * the lookup's socket calls are wrapped (-Wl,--wrap) so the reply is the input, with the
 * request's sequence number and port id patched in so the parser gets past them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>

#include "fuzz.h"
#include "route_watch.h"

#define RT_INPUT_MAX (1 << 16) /* the buffer route_watch_read reads into is this big */

static struct fp_route rt;
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
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint32_t addr[4] = {0x010212c6}; /* 198.18.2.1 */
	struct fp_route_changes changes;
	int oif;

	if (size < 1 || size - 1 > RT_INPUT_MAX)
		return 0;
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
		if (changes.nr_deleted && !changes.nexthops_changed)
			fuzz_fail("a deleted link that changes no next hop");
		if (changes.nexthops_changed && rt.cache[0].family)
			fuzz_fail("a change that left the route cache in place");
		return 0;
	}
	/* The lookup: whatever the reply, it ends (no socket read after the reply), and an
	 * interface it found is remembered: asking again reads nothing. */
	reply = data + 1;
	reply_len = size - 1;
	route_cache_flush(&rt);
	oif = route_oif(&rt, AF_INET, addr, 0);
	if (oif > 0 && route_oif(&rt, AF_INET, addr, 0) != oif)
		fuzz_fail("interface %d was not cached", oif);
	return 0;
}
