// SPDX-License-Identifier: GPL-2.0-only
/*
 * Writes seed inputs for the fuzz targets: real conntrack messages (built with
 * libnetfilter_conntrack, as the kernel would send them) and rtnetlink messages, so the
 * fuzzer starts from the shapes the daemon sees instead of from noise.
 *
 * Usage: fp-fuzz-seeds ct|rt|cli DIR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <linux/if_arp.h>
#include <linux/if_link.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack_tcp.h>

#include "../ctmsg.h"

static char stream[1 << 16];
static size_t stream_len;

static void put_seed(const char *dir, const char *name)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f || fwrite(stream, 1, stream_len, f) != stream_len || fclose(f)) {
		perror(path);
		exit(1);
	}
	stream_len = 0;
}

/* One ctnetlink message: a connection lan:sport -> wan:dport, masqueraded to the router. */
static void put_ct(int msg_type, uint16_t flags, int family, int proto, uint32_t status,
		   int tcp_state, uint16_t sport)
{
	uint32_t lan4 = inet_addr("198.18.1.2"), wan4 = inet_addr("198.19.2.2"),
		 router4 = inet_addr("198.19.2.1");
	struct in6_addr lan6, wan6;
	struct ct_msg m = {
		.family = family,
		.proto = proto,
		.sport = sport,
		.dport = 5001,
		.reply_dport = sport + 1000,
		.status = status,
		.timeout = 120,
		.mark = sport & 0xff,
		.tcp_state = tcp_state,
	};
	size_t len;

	inet_pton(AF_INET6, "2001:2:0:1::2", &lan6);
	inet_pton(AF_INET6, "2001:2:0:2::2", &wan6);
	m.src = family == AF_INET ? (const void *)&lan4 : &lan6;
	m.dst = family == AF_INET ? (const void *)&wan4 : &wan6;
	/* IPv4 is masqueraded to the router; IPv6 is routed, the reply goes to the client */
	m.reply_dst = family == AF_INET ? (const void *)&router4 : &lan6;
	len = ct_msg_put(stream + stream_len, msg_type, flags, 0, &m);
	if (!len) {
		fprintf(stderr, "cannot build a conntrack message\n");
		exit(1);
	}
	stream_len += len;
}

#define OFFLOADABLE (IPS_CONFIRMED | IPS_SEEN_REPLY | IPS_ASSURED | IPS_SRC_NAT)

static void ct_seeds(const char *dir)
{
	put_ct(IPCTNL_MSG_CT_NEW, NLM_F_CREATE | NLM_F_EXCL, AF_INET, IPPROTO_UDP,
	       IPS_CONFIRMED | IPS_SRC_NAT, -1, 40000);
	put_ct(IPCTNL_MSG_CT_NEW, 0, AF_INET, IPPROTO_UDP, OFFLOADABLE, -1, 40000);
	put_seed(dir, "udp-new-update");
	put_ct(IPCTNL_MSG_CT_NEW, 0, AF_INET, IPPROTO_TCP, OFFLOADABLE, TCP_CONNTRACK_ESTABLISHED,
	       40001);
	put_ct(IPCTNL_MSG_CT_NEW, 0, AF_INET, IPPROTO_TCP, OFFLOADABLE, -1, 40001);
	put_ct(IPCTNL_MSG_CT_NEW, 0, AF_INET, IPPROTO_TCP, OFFLOADABLE, TCP_CONNTRACK_FIN_WAIT,
	       40001);
	put_seed(dir, "tcp-established-fin");
	put_ct(IPCTNL_MSG_CT_NEW, 0, AF_INET6, IPPROTO_TCP, OFFLOADABLE & ~IPS_SRC_NAT,
	       TCP_CONNTRACK_ESTABLISHED, 40002);
	put_ct(IPCTNL_MSG_CT_DELETE, 0, AF_INET6, IPPROTO_TCP, OFFLOADABLE & ~IPS_SRC_NAT,
	       TCP_CONNTRACK_CLOSE, 40002);
	put_seed(dir, "tcp6-established-destroy");
	for (int i = 0; i < 40; i++)
		put_ct(IPCTNL_MSG_CT_NEW, 0, AF_INET, i & 1 ? IPPROTO_TCP : IPPROTO_UDP,
		       OFFLOADABLE | (i % 7 == 0 ? IPS_DYING : 0), TCP_CONNTRACK_ESTABLISHED,
		       41000 + i);
	put_seed(dir, "many");
}

static void put_rt(uint16_t type, size_t payload, uint16_t attr, uint32_t value)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(stream + stream_len);
	char *p = mnl_nlmsg_put_extra_header(nlh, payload);

	nlh->nlmsg_type = type;
	if (type == RTM_NEWLINK || type == RTM_DELLINK)
		((struct ifinfomsg *)p)->ifi_index = value;
	if (attr)
		mnl_attr_put_u32(nlh, attr, value);
	stream_len += nlh->nlmsg_len;
}

/* The answer for an address of the router's own: a local route through loopback. */
static void put_local_route(void)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(stream + stream_len);
	struct rtmsg *rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));

	nlh->nlmsg_type = RTM_NEWROUTE;
	rtm->rtm_type = RTN_LOCAL;
	mnl_attr_put_u32(nlh, RTA_OIF, 1);
	stream_len += nlh->nlmsg_len;
}

static void topology_seeds(const char *dir);

static void rt_seeds(const char *dir)
{
	/* The first byte picks the parser: odd the watcher, 2 the topology, else the lookup. */
	stream[stream_len++] = 1;
	put_rt(RTM_DELLINK, sizeof(struct ifinfomsg), IFLA_MTU, 5);
	put_rt(RTM_NEWNEIGH, sizeof(struct ndmsg), NDA_IFINDEX, 3);
	put_rt(RTM_NEWROUTE, sizeof(struct rtmsg), RTA_OIF, 2);
	put_seed(dir, "watch");
	stream[stream_len++] = 0;
	put_rt(RTM_NEWROUTE, sizeof(struct rtmsg), RTA_OIF, 3);
	put_seed(dir, "lookup");
	stream[stream_len++] = 0;
	put_rt(NLMSG_ERROR, sizeof(struct nlmsgerr), 0, 0);
	put_seed(dir, "lookup-error");
	stream[stream_len++] = 0;
	put_local_route();
	put_seed(dir, "lookup-local");
	topology_seeds(dir);
}

/* A link for the topology: KIND "bridge" or "vlan" (with LOWER and the VLAN id) or none. */
static void put_link(uint32_t ifindex, uint16_t type, const char *name, const char *kind,
		     uint32_t master, uint32_t lower)
{
	static const uint8_t mac[6] = {2, 0, 0, 0, 0, 1};
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(stream + stream_len);
	struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	struct nlattr *info, *data;

	nlh->nlmsg_type = RTM_NEWLINK;
	ifi->ifi_index = ifindex;
	ifi->ifi_type = type;
	mnl_attr_put_strz(nlh, IFLA_IFNAME, name);
	mnl_attr_put_u32(nlh, IFLA_MTU, 1500);
	mnl_attr_put(nlh, IFLA_ADDRESS, sizeof(mac), mac);
	if (master)
		mnl_attr_put_u32(nlh, IFLA_MASTER, master);
	if (lower)
		mnl_attr_put_u32(nlh, IFLA_LINK, lower);
	if (kind) {
		info = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
		mnl_attr_put_strz(nlh, IFLA_INFO_KIND, kind);
		data = mnl_attr_nest_start(nlh, IFLA_INFO_DATA);
		if (!strcmp(kind, "vlan"))
			mnl_attr_put_u16(nlh, IFLA_VLAN_ID, 7);
		else
			mnl_attr_put_u8(nlh, IFLA_BR_VLAN_FILTERING, 0);
		mnl_attr_nest_end(nlh, data);
		mnl_attr_nest_end(nlh, info);
	}
	stream_len += nlh->nlmsg_len;
}

/* The topology (first byte 2): a bridge on the LAN port with a learnt host, PPPoE on VLAN
 * 7 of the WAN port ("wan.7", the session the fuzz target's /proc/net/pppoe names). */
static void topology_seeds(const char *dir)
{
	static const uint8_t host[6] = {2, 0, 0, 0, 0, 5};
	struct nlmsghdr *nlh;
	struct ndmsg *ndm;

	stream[stream_len++] = 2;
	put_link(10, ARPHRD_ETHER, "br0", "bridge", 0, 0);
	put_link(2, ARPHRD_ETHER, "lan0", NULL, 10, 0);
	put_link(3, ARPHRD_ETHER, "wan", NULL, 0, 0);
	put_link(11, ARPHRD_ETHER, "wan.7", "vlan", 0, 3);
	put_link(12, ARPHRD_PPP, "ppp0", NULL, 0, 0);
	nlh = mnl_nlmsg_put_header(stream + stream_len);
	nlh->nlmsg_type = RTM_NEWNEIGH;
	ndm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ndm));
	ndm->ndm_family = AF_BRIDGE;
	ndm->ndm_ifindex = 2;
	ndm->ndm_state = NUD_REACHABLE;
	mnl_attr_put(nlh, NDA_LLADDR, sizeof(host), host);
	mnl_attr_put_u32(nlh, NDA_MASTER, 10);
	stream_len += nlh->nlmsg_len;
	put_seed(dir, "topology");
}

static void cli_seed(const char *dir, const char *name, const char *const *args)
{
	for (; *args; args++) {
		size_t n = strlen(*args) + 1;

		memcpy(stream + stream_len, *args, n);
		stream_len += n;
	}
	put_seed(dir, name);
}

static void cli_seeds(const char *dir)
{
	static const char *const attach[] = {"attach",	    "eth0",	    "--mode",  "native",
					     "--flows",	    "1048576",	    "--lease", "5",
					     "--skip-mark", "0x100/0xff00", NULL};
	static const char *const stats[] = {
		"-j",	     "-w",  "--pin-dir",      "/sys/fs/bpf/x", "stats", "-vv",
		"--scan-ms", "250", "--event-buffer", "65536",	       NULL};
	cli_seed(dir, "attach", attach);
	cli_seed(dir, "stats", stats);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: fp-fuzz-seeds ct|rt|cli DIR\n");
		return 2;
	}
	if (!strcmp(argv[1], "ct"))
		ct_seeds(argv[2]);
	else if (!strcmp(argv[1], "rt"))
		rt_seeds(argv[2]);
	else
		cli_seeds(argv[2]);
	return 0;
}
