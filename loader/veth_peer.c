// SPDX-License-Identifier: GPL-2.0-only
/*
 * A veth's peer, read in its own network namespace.
 *
 * rtnetlink names a veth's peer by its ifindex (IFLA_LINK) in the namespace IFLA_LINK_NETNSID
 * says, an id that only this namespace's rtnetlink understands. Its features (is checksum
 * offload on?) are read by ethtool, which works by name and only in the device's namespace.
 * So the namespace is found first: the one among /run/netns (ip netns) and those of running
 * processes (containers) that RTM_GETNSID calls by that id. A socket made there, by
 * switching this thread in and back out again, asks it with SIOCGIFNAME and SIOCETHTOOL.
 * No descriptor of another namespace is kept: it would keep that namespace, and the veth,
 * alive after its owner ended it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <libmnl/libmnl.h>
#include <linux/ethtool.h>
#include <linux/if_link.h>
#include <linux/net_namespace.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>

#include "common.h"
#include "veth_peer.h"

#define NETNS_RUN_DIR "/run/netns"
#define MAX_NETNS     256 /* distinct namespaces looked at in one search */
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

struct link_reply {
	bool veth;
	int peer_ifindex;
	int nsid; /* -1: the peer is in our namespace */
};

static int link_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);
	struct link_reply *r = data;
	const struct nlattr *a, *b;

	if (nlh->nlmsg_type != RTM_NEWLINK || mnl_nlmsg_get_payload_len(nlh) < sizeof(*ifi))
		return MNL_CB_OK;
	mnl_attr_for_each(a, nlh, sizeof(*ifi))
	{
		switch (mnl_attr_get_type(a)) {
		case IFLA_LINK:
			if (mnl_attr_validate(a, MNL_TYPE_U32) >= 0)
				r->peer_ifindex = mnl_attr_get_u32(a);
			break;
		case IFLA_LINK_NETNSID:
			if (mnl_attr_validate(a, MNL_TYPE_U32) >= 0)
				r->nsid = (int32_t)mnl_attr_get_u32(a);
			break;
		case IFLA_LINKINFO:
			mnl_attr_for_each_nested(b, a)
			{
				if (mnl_attr_get_type(b) == IFLA_INFO_KIND &&
				    mnl_attr_validate(b, MNL_TYPE_NUL_STRING) >= 0)
					r->veth = !strcmp(mnl_attr_get_str(b), "veth");
			}
			break;
		}
	}
	return MNL_CB_OK;
}

static int nsid_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *a;

	if (nlh->nlmsg_type != RTM_NEWNSID ||
	    mnl_nlmsg_get_payload_len(nlh) < sizeof(struct rtgenmsg))
		return MNL_CB_OK;
	mnl_attr_for_each(a, nlh, sizeof(struct rtgenmsg))
	{
		if (mnl_attr_get_type(a) == NETNSA_NSID && mnl_attr_validate(a, MNL_TYPE_U32) >= 0)
			*(int *)data = (int32_t)mnl_attr_get_u32(a);
	}
	return MNL_CB_OK;
}

/* The id our namespace gives the namespace of fd, or -1 (none, or it is ours). */
static int nsid_of(struct mnl_socket *nl, char *buf, int fd)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct rtgenmsg *g;
	int nsid = -1;

	nlh->nlmsg_type = RTM_GETNSID;
	nlh->nlmsg_seq = time(NULL);
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->rtgen_family = AF_UNSPEC;
	mnl_attr_put_u32(nlh, NETNSA_FD, fd);
	if (fp_nl_ask(nl, nlh, buf, MNL_SOCKET_BUFFER_SIZE, nsid_cb, &nsid))
		return -1;
	return nsid;
}

struct netns_search {
	struct mnl_socket *nl;
	char *buf;
	int nsid;
	ino_t seen[MAX_NETNS];
	int nr_seen;
};

/* Opens path if it is the namespace sought: its fd, or -1. */
static int try_netns(struct netns_search *s, const char *path)
{
	struct stat st;
	int fd;

	if (stat(path, &st))
		return -1;
	for (int i = 0; i < s->nr_seen; i++)
		if (s->seen[i] == st.st_ino)
			return -1;
	if (s->nr_seen < MAX_NETNS)
		s->seen[s->nr_seen++] = st.st_ino;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (nsid_of(s->nl, s->buf, fd) == s->nsid)
		return fd;
	close(fd);
	return -1;
}

/*
 * Where the last few namespaces were found: the daemon asks about the same peers at every
 * scan, and a walk of /proc each time would grow with the number of processes.
 */
static struct {
	int nsid;
	char path[NAME_MAX + 32];
	char where[NAME_MAX + 16];
} found[8];
static unsigned int nr_found;

/* The namespace our namespace calls nsid: an fd and its name in where, or -ENOENT. */
static int find_netns(struct mnl_socket *nl, char *buf, int nsid, char *where, size_t len)
{
	struct netns_search *s = calloc(1, sizeof(*s));
	const char *dirs[] = {NETNS_RUN_DIR, "/proc"};
	char path[NAME_MAX + 32];
	int fd = -1;

	if (!s)
		return -ENOMEM;
	*s = (struct netns_search){.nl = nl, .buf = buf, .nsid = nsid};
	for (unsigned int i = 0; i < ARRAY_SIZE(found) && fd < 0; i++) {
		if (found[i].path[0] && found[i].nsid == nsid &&
		    (fd = try_netns(s, found[i].path)) >= 0)
			snprintf(where, len, "%s", found[i].where);
	}
	for (size_t d = 0; d < ARRAY_SIZE(dirs) && fd < 0; d++) {
		DIR *dir = opendir(dirs[d]);
		bool proc = d == 1;
		struct dirent *de;
		unsigned int slot;

		while (dir && fd < 0 && (de = readdir(dir))) {
			if (de->d_name[0] == '.' ||
			    (proc && (de->d_name[0] < '1' || de->d_name[0] > '9')))
				continue;
			snprintf(path, sizeof(path), proc ? "/proc/%s/ns/net" : NETNS_RUN_DIR "/%s",
				 de->d_name);
			fd = try_netns(s, path);
			if (fd < 0)
				continue;
			snprintf(where, len, proc ? "of pid %s" : "%s", de->d_name);
			slot = nr_found++ % ARRAY_SIZE(found);
			found[slot].nsid = nsid;
			snprintf(found[slot].path, sizeof(found[slot].path), "%s", path);
			snprintf(found[slot].where, sizeof(found[slot].where), "%s", where);
		}
		if (dir)
			closedir(dir);
	}
	free(s);
	return fd >= 0 ? fd : -ENOENT;
}

/*
 * An rtnetlink socket in the namespace of netns_fd. setns() moves only this thread, and
 * the daemon has one; if it cannot move back, it must not go on in the wrong namespace.
 */
static struct mnl_socket *socket_in(int netns_fd)
{
	int self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	struct mnl_socket *nl;
	int err;

	if (self < 0)
		return NULL;
	if (setns(netns_fd, CLONE_NEWNET)) {
		err = errno;
		close(self);
		errno = err;
		return NULL;
	}
	nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
	err = errno;
	if (setns(self, CLONE_NEWNET)) {
		fp_err("cannot return to our own network namespace: %s", strerror(errno));
		exit(1);
	}
	close(self);
	errno = err;
	return nl;
}

static int xdp_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *a, *b;

	if (nlh->nlmsg_type != RTM_NEWLINK ||
	    mnl_nlmsg_get_payload_len(nlh) < sizeof(struct ifinfomsg))
		return MNL_CB_OK;
	mnl_attr_for_each(a, nlh, sizeof(struct ifinfomsg))
	{
		if (mnl_attr_get_type(a) != IFLA_XDP)
			continue;
		mnl_attr_for_each_nested(b, a)
		{
			if (mnl_attr_get_type(b) == IFLA_XDP_ATTACHED &&
			    mnl_attr_validate(b, MNL_TYPE_U8) >= 0)
				*(bool *)data = mnl_attr_get_u8(b) != XDP_ATTACHED_NONE;
		}
	}
	return MNL_CB_OK;
}

/* The peer's name, features and XDP program, asked on nl (in its namespace). */
static int read_peer(struct mnl_socket *nl, char *buf, struct fp_veth_peer *peer)
{
	int sock = mnl_socket_get_fd(nl), err;
	struct ifreq ifr = {.ifr_ifindex = peer->ifindex};
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ifinfomsg *ifi;
	uint32_t flags;

	if (ioctl(sock, SIOCGIFNAME, &ifr))
		return -errno;
	snprintf(peer->name, sizeof(peer->name), "%s", ifr.ifr_name);
	err = fp_ethtool_get(sock, peer->name, ETHTOOL_GTXCSUM, &peer->tx_checksum)
		      ?: fp_ethtool_get(sock, peer->name, ETHTOOL_GGRO, &peer->gro)
		      ?: fp_ethtool_value(sock, peer->name, ETHTOOL_GFLAGS, &flags);
	if (err)
		return err;
	peer->tx_vlan = flags & ETH_FLAG_TXVLAN;
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID))
		return -errno;
	nlh->nlmsg_type = RTM_GETLINK;
	nlh->nlmsg_seq = time(NULL);
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = peer->ifindex;
	return fp_nl_ask(nl, nlh, buf, MNL_SOCKET_BUFFER_SIZE, xdp_cb, &peer->xdp);
}

int fp_veth_peer(int ifindex, struct fp_veth_peer *peer)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct mnl_socket *nl = NULL, *peer_nl = NULL;
	struct link_reply r = {.nsid = -1};
	int err, netns = -1;

	memset(peer, 0, sizeof(*peer));
	err = fp_rtnl_get_link(ifindex, link_cb, &r);
	if (err || !r.veth)
		return err;
	if (!r.peer_ifindex)
		return -ENOENT; /* a veth whose peer is gone, being deleted */
	peer->ifindex = r.peer_ifindex;
	if (r.nsid >= 0) {
		nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
		if (!nl || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID)) {
			err = -errno;
			goto out;
		}
		netns = find_netns(nl, buf, r.nsid, peer->netns, sizeof(peer->netns));
		if (netns < 0) {
			err = netns;
			goto out;
		}
		peer_nl = socket_in(netns);
	} else {
		peer_nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
	}
	if (!peer_nl) {
		err = -errno;
		goto out;
	}
	err = read_peer(peer_nl, buf, peer) ?: 1;
out:
	if (peer_nl)
		mnl_socket_close(peer_nl);
	if (netns >= 0)
		close(netns);
	if (nl)
		mnl_socket_close(nl);
	return err;
}

void fp_veth_peer_ethtool(const struct fp_veth_peer *peer, const char *setting, char *buf,
			  size_t len)
{
	int pid;

	if (sscanf(peer->netns, "of pid %d", &pid) == 1)
		snprintf(buf, len, "nsenter -t %d -n ethtool -K %s %s", pid, peer->name, setting);
	else if (peer->netns[0])
		snprintf(buf, len, "ip netns exec %s ethtool -K %s %s", peer->netns, peer->name,
			 setting);
	else
		snprintf(buf, len, "ethtool -K %s %s", peer->name, setting);
}
