// SPDX-License-Identifier: GPL-2.0-only
/*
 * What a device's frames and redirects are at XDP.
 *
 * Its XDP features, from the "netdev" generic netlink family (Linux 6.3). Every
 * attached interface is also a redirect target: without ndo_xdp_xmit in its driver
 * (NETDEV_XDP_ACT_NDO_XMIT) frames redirected to it are dropped. A veth has it only while
 * its peer has GRO or an XDP program.
 *
 * libbpf 1.2 reads the same through bpf_xdp_query(); Debian 12 has 1.1, and its kernel
 * headers predate linux/netdev.h, so the few constants are here.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <libmnl/libmnl.h>
#include <linux/ethtool.h>
#include <linux/genetlink.h>
#include <linux/sockios.h>

#include "common.h"
#include "veth_peer.h"
#include "xdp_features.h"

#define NETDEV_FAMILY_NAME	  "netdev"
#define NETDEV_CMD_DEV_GET	  1
#define NETDEV_A_DEV_IFINDEX	  1
#define NETDEV_A_DEV_XDP_FEATURES 3

struct genl_reply {
	uint16_t family;
	uint64_t features;
	bool have_features;
};

static int family_attr_cb(const struct nlattr *attr, void *data)
{
	struct genl_reply *r = data;

	if (mnl_attr_get_type(attr) == CTRL_ATTR_FAMILY_ID &&
	    mnl_attr_validate(attr, MNL_TYPE_U16) >= 0)
		r->family = mnl_attr_get_u16(attr);
	return MNL_CB_OK;
}

static int dev_attr_cb(const struct nlattr *attr, void *data)
{
	struct genl_reply *r = data;

	if (mnl_attr_get_type(attr) == NETDEV_A_DEV_XDP_FEATURES &&
	    mnl_attr_validate(attr, MNL_TYPE_U64) >= 0) {
		r->features = mnl_attr_get_u64(attr);
		r->have_features = true;
	}
	return MNL_CB_OK;
}

static int reply_cb(const struct nlmsghdr *nlh, void *data)
{
	mnl_attr_cb_t cb = ((struct genl_reply *)data)->family ? dev_attr_cb : family_attr_cb;

	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(struct genlmsghdr))
		return MNL_CB_OK;
	mnl_attr_parse(nlh, sizeof(struct genlmsghdr), cb, data);
	return MNL_CB_OK;
}

static struct nlmsghdr *genl_request(char *buf, uint16_t type, uint8_t cmd, uint32_t seq)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *genl;

	nlh->nlmsg_type = type;
	nlh->nlmsg_seq = seq;
	genl = mnl_nlmsg_put_extra_header(nlh, sizeof(*genl));
	genl->cmd = cmd;
	genl->version = 1;
	return nlh;
}

/*
 * The family's id, asked once per process: a kernel that lacks the family (before 6.3)
 * answers a lookup by name only after trying to load a module for it, which spawns
 * modprobe. The daemon checks its ports at every scan: that was a modprobe a second per
 * port on every 5.10 to 6.1 router (and a quarter of a second per port in an emulated
 * guest). The family is built in, never a module, so its absence lasts.
 */
static int netdev_family; /* 0: not asked yet; -EOPNOTSUPP: the kernel has none */

static int ask_netdev_family(struct mnl_socket *nl, char *buf, size_t len, uint32_t seq)
{
	struct genl_reply r = {0};
	struct nlmsghdr *nlh;
	int err;

	nlh = genl_request(buf, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, seq);
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, NETDEV_FAMILY_NAME);
	err = fp_nl_ask(nl, nlh, buf, len, reply_cb, &r);
	if (err == -ENOENT || (!err && !r.family))
		netdev_family = -EOPNOTSUPP;
	else if (!err)
		netdev_family = r.family;
	return err && err != -ENOENT ? err : netdev_family;
}

int fp_xdp_features(int ifindex, uint64_t *features)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct genl_reply r = {0};
	struct mnl_socket *nl;
	struct nlmsghdr *nlh;
	uint32_t seq = time(NULL);
	int err, family;

	if (netdev_family < 0)
		return netdev_family;
	nl = mnl_socket_open2(NETLINK_GENERIC, SOCK_CLOEXEC);
	if (!nl || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID)) {
		err = -errno;
		goto out;
	}
	family = netdev_family ?: ask_netdev_family(nl, buf, sizeof(buf), seq);
	if (family < 0) {
		err = family;
		goto out;
	}
	nlh = genl_request(buf, family, NETDEV_CMD_DEV_GET, seq + 1);
	r.family = family; /* the reply is the device's, not the family's */
	mnl_attr_put_u32(nlh, NETDEV_A_DEV_IFINDEX, ifindex);
	err = fp_nl_ask(nl, nlh, buf, sizeof(buf), reply_cb, &r);
	if (!err && !r.have_features)
		err = -EOPNOTSUPP;
	if (!err)
		*features = r.features;
out:
	if (nl)
		mnl_socket_close(nl);
	return err;
}

/* Linux 5.13 ("veth: allow enabling NAPI even without XDP") or later. */
bool fp_veth_napi_with_gro(void)
{
	struct utsname u;
	int major, minor;

	if (uname(&u) || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return true;
	return major > 5 || (major == 5 && minor >= 13);
}

int fp_takes_redirects(int ifindex, char *why, size_t len)
{
	struct fp_veth_peer peer;
	uint64_t features;
	char fix[128];
	int takes = -EOPNOTSUPP, err = fp_xdp_features(ifindex, &features);

	if (why && len)
		why[0] = '\0';
	if (!err && (features & FP_XDP_ACT_NDO_XMIT))
		return 1;
	if (!err)
		takes = 0;
	else if (err != -EOPNOTSUPP)
		return err;
	/*
	 * A veth is the device whose answer changes: it takes redirected frames only into its
	 * peer's NAPI, which an XDP program on the peer turns on, and from 5.13 GRO too. Before
	 * 6.3 the kernel cannot say, so the peer is asked; after, it says why not.
	 */
	err = fp_veth_peer(ifindex, &peer);
	if (err <= 0)
		return takes;
	if (takes < 0)
		takes = peer.xdp || (peer.gro && fp_veth_napi_with_gro());
	if (takes || !why)
		return takes;
	if (fp_veth_napi_with_gro()) {
		fp_veth_peer_ethtool(&peer, "gro on", fix, sizeof(fix));
		snprintf(why, len, "its veth peer %s has neither GRO nor an XDP program: %s",
			 peer.name, fix);
	} else {
		snprintf(why, len,
			 "its veth peer %s runs no XDP program, which before Linux 5.13 it needs",
			 peer.name);
	}
	return 0;
}

int fp_port_takes_redirects(int ifindex, bool native, char *why, size_t len)
{
	char driver[FP_DRIVER_LEN];
	int takes = fp_takes_redirects(ifindex, why, len);

	if (takes != -EOPNOTSUPP)
		return takes;
	/*
	 * Before 6.3 the kernel cannot say. A driver with no native XDP has no ndo_xdp_xmit,
	 * and most that have one (ixgbe, i40e, mvneta, virtio_net...) take frames only while
	 * an XDP program of theirs runs in native mode, as from 6.3 their features say: a
	 * port at the tc hook or in generic mode takes none, unless it is a tun, which takes
	 * them always. Wrong only for a driver that could take them: its flows from native
	 * ports then go through the kernel, where a redirect would have dropped them.
	 */
	if (native)
		return 1;
	fp_port_driver(ifindex, driver);
	if (!strcmp(driver, "tun"))
		return 1;
	if (why && len)
		snprintf(why, len,
			 "no XDP program runs on it in native mode, which most drivers need, and "
			 "before Linux 6.3 the kernel cannot say more");
	return 0;
}

void fp_port_driver(int ifindex, char driver[FP_DRIVER_LEN])
{
	struct ethtool_drvinfo info = {.cmd = ETHTOOL_GDRVINFO};
	struct ifreq ifr = {.ifr_data = (void *)&info};
	int sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	driver[0] = '\0';
	if (sock < 0)
		return;
	if (if_indextoname(ifindex, ifr.ifr_name) && !ioctl(sock, SIOCETHTOOL, &ifr))
		snprintf(driver, FP_DRIVER_LEN, "%.*s", (int)sizeof(info.driver), info.driver);
	close(sock);
}

bool fp_strips_vlan_tags(int ifindex, char *fix, size_t len)
{
	struct fp_veth_peer peer;
	char name[IF_NAMESIZE];
	uint32_t flags = 0;
	int sock;

	/* A veth receives the skbs its peer sent: a tag stays where the peer put it. */
	if (fp_veth_peer(ifindex, &peer) == 1) {
		if (peer.tx_vlan)
			fp_veth_peer_ethtool(&peer, "txvlan off", fix, len);
		return peer.tx_vlan;
	}
	sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (sock < 0)
		return false;
	if (!if_indextoname(ifindex, name) || fp_ethtool_value(sock, name, ETHTOOL_GFLAGS, &flags))
		flags = 0;
	close(sock);
	if (flags & ETH_FLAG_RXVLAN)
		snprintf(fix, len, "ethtool -K %s rxvlan off", name);
	return flags & ETH_FLAG_RXVLAN;
}
