// SPDX-License-Identifier: GPL-2.0-only
/*
 * Layer 2 below the routed interfaces, as the datapath needs it (bpf/l2.h).
 *
 * Routes and conntrack name upper devices: a bridge (br-lan), a VLAN device (eth0.7), a
 * PPPoE session's ppp device. XDP is attached to the Ethernet ports below them. From an
 * rtnetlink link dump, the bridges' FDB dumps and /proc/net/pppoe this file works out, for
 * the attached ports only:
 *
 *   bridge port P of bridge B     fp_ingress (P, untagged)  -> B
 *   (VLAN filtering off)          fp_egress  B -> the FDB's port for the next hop's MAC
 *                                 fp_fdb     (B, MAC) -> port, for every learnt address
 *   bridge port V = VLAN N on P   fp_ingress (P, N)         -> B
 *   (OpenWrt's swconfig layout)   fp_fdb     (B, MAC) -> P, push tag N
 *   VLAN device V, id N, on P     fp_ingress (P, N)         -> V
 *                                 fp_egress  V -> P, push tag N
 *   PPPoE session S with peer M   fp_ingress (P[, N], S)    -> ppp device, from M only
 *   on P (or on VLAN N on P)      fp_egress  ppp -> P, push [tag N and] session S to M
 *
 * The kernel does not say which ppp device carries which PPPoE session; with exactly one
 * session and one ppp device (a home router's WAN) they pair, otherwise PPPoE stays in the
 * kernel. A bridge with VLAN filtering, stacked VLANs and 802.1ad stay in the kernel.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <libmnl/libmnl.h>
#include <linux/if_arp.h>
#include <linux/if_bridge.h>
#include <linux/if_link.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "topology.h"
#include "xdp_features.h"

#define TOPO_BUF_SIZE	  (64 * 1024)
#define TOPO_MAX_LINKS	  1024
#define TOPO_MAX_PPPOE	  16
#define TOPO_VLAN_8021Q	  0x8100
#define TOPO_MAX_BR_VLANS 1024

struct link {
	uint32_t ifindex, master, lower; /* lower: IFLA_LINK of a VLAN */
	uint32_t mtu;
	uint16_t vlan_id;
	uint16_t type; /* ARPHRD_* */
	bool bridge, vlan, ppp, vlan_filtering;
	bool bridge_8021ad; /* a bridge whose VLANs are 802.1ad's */
	bool aggregated;    /* a port of a bond or a team (IFLA_INFO_SLAVE_KIND) */
	uint8_t mac[6];
	char name[IF_NAMESIZE];
};

struct pppoe_session {
	__be16 sid;
	uint8_t peer[6];
	char dev[IF_NAMESIZE];
};

struct ingress_entry {
	struct fp_ingress_key key;
	struct fp_ingress value;
};

struct egress_entry {
	uint32_t upper;
	struct fp_egress value;
};

struct fdb_entry {
	struct fp_fdb_key key;
	struct fp_fdb_port port;
};

struct topo_maps {
	struct ingress_entry ingress[FP_MAX_L2_IFACES];
	int nr_ingress;
	struct egress_entry egress[FP_MAX_L2_IFACES];
	int nr_egress;
	struct fdb_entry fdb[FP_MAX_FDB];
	int nr_fdb;
};

/* A VLAN of a VLAN-filtering bridge on one of its ports, or on the bridge itself ("self"). */
struct br_vlan {
	uint32_t ifindex;
	uint16_t vid;
	uint16_t flags; /* BRIDGE_VLAN_INFO_PVID, _UNTAGGED */
};

/* One sync's view of the system. */
struct topo_scan {
	struct link links[TOPO_MAX_LINKS];
	int nr_links;
	struct br_vlan br_vlans[TOPO_MAX_BR_VLANS];
	int nr_br_vlans;
	struct topo_maps next;
	const uint32_t *ports;
	int nr_ports;
};

int topology_open(struct fp_topology *t)
{
	memset(t, 0, sizeof(*t));
	t->pppoe_path = FP_PPPOE_PROC;
	t->buf = malloc(TOPO_BUF_SIZE);
	t->maps = calloc(1, sizeof(*t->maps));
	t->nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
	if (!t->buf || !t->maps || !t->nl || mnl_socket_bind(t->nl, 0, MNL_SOCKET_AUTOPID)) {
		int err = -errno;

		fp_err("cannot open an rtnetlink socket for the topology: %s", strerror(errno));
		topology_close(t);
		return err ? err : -ENOMEM;
	}
	t->seq = time(NULL);
	t->ask_ports = true;
	return 0;
}

void topology_close(struct fp_topology *t)
{
	if (t->nl)
		mnl_socket_close(t->nl);
	free(t->buf);
	free(t->maps);
	t->nl = NULL;
	t->buf = NULL;
	t->maps = NULL;
}

static bool is_port(const struct topo_scan *s, uint32_t ifindex)
{
	for (int i = 0; i < s->nr_ports; i++)
		if (s->ports[i] == ifindex)
			return true;
	return false;
}

static struct link *find_link(struct topo_scan *s, uint32_t ifindex)
{
	for (int i = 0; i < s->nr_links; i++)
		if (s->links[i].ifindex == ifindex)
			return &s->links[i];
	return NULL;
}

static struct link *find_link_by_name(struct topo_scan *s, const char *name)
{
	for (int i = 0; i < s->nr_links; i++)
		if (!strcmp(s->links[i].name, name))
			return &s->links[i];
	return NULL;
}

/* Runs one dump request and feeds every answer to cb; tests give the answers instead. */
static int dump(struct fp_topology *t, struct nlmsghdr *req, mnl_cb_t cb, void *data)
{
	if (t->link_dump) {
		if (!fp_nlmsg_stream_ok(t->link_dump, t->link_dump_len))
			return -EBADMSG;
		mnl_cb_run(t->link_dump, t->link_dump_len, 0, 0, cb, data);
		return 0;
	}
	req->nlmsg_seq = ++t->seq;
	return fp_nl_dump(t->nl, req, t->buf, TOPO_BUF_SIZE, cb, data);
}

static void parse_info_data(const struct nlattr *data, const char *kind, struct link *l)
{
	const struct nlattr *a;

	mnl_attr_for_each_nested(a, data)
	{
		if (!strcmp(kind, "vlan")) {
			if (mnl_attr_get_type(a) == IFLA_VLAN_ID &&
			    mnl_attr_validate(a, MNL_TYPE_U16) >= 0)
				l->vlan_id = mnl_attr_get_u16(a);
			/* 802.1ad devices stay in the kernel: only 802.1Q is parsed */
			if (mnl_attr_get_type(a) == IFLA_VLAN_PROTOCOL &&
			    mnl_attr_validate(a, MNL_TYPE_U16) >= 0 &&
			    ntohs(mnl_attr_get_u16(a)) != TOPO_VLAN_8021Q)
				l->vlan = false;
		} else if (!strcmp(kind, "bridge")) {
			if (mnl_attr_get_type(a) == IFLA_BR_VLAN_FILTERING &&
			    mnl_attr_validate(a, MNL_TYPE_U8) >= 0)
				l->vlan_filtering = mnl_attr_get_u8(a);
			if (mnl_attr_get_type(a) == IFLA_BR_VLAN_PROTOCOL &&
			    mnl_attr_validate(a, MNL_TYPE_U16) >= 0)
				l->bridge_8021ad = ntohs(mnl_attr_get_u16(a)) != TOPO_VLAN_8021Q;
		}
	}
}

static void parse_linkinfo(const struct nlattr *info, struct link *l)
{
	const struct nlattr *a, *data = NULL;
	const char *kind = NULL;

	mnl_attr_for_each_nested(a, info)
	{
		if (mnl_attr_get_type(a) == IFLA_INFO_KIND &&
		    mnl_attr_validate(a, MNL_TYPE_NUL_STRING) >= 0)
			kind = mnl_attr_get_str(a);
		else if (mnl_attr_get_type(a) == IFLA_INFO_DATA)
			data = a;
		else if (mnl_attr_get_type(a) == IFLA_INFO_SLAVE_KIND &&
			 mnl_attr_validate(a, MNL_TYPE_NUL_STRING) >= 0)
			l->aggregated = !strcmp(mnl_attr_get_str(a), "bond") ||
					!strcmp(mnl_attr_get_str(a), "team");
	}
	if (!kind)
		return;
	l->bridge = !strcmp(kind, "bridge");
	l->vlan = !strcmp(kind, "vlan");
	if (data && (l->bridge || l->vlan))
		parse_info_data(data, kind, l);
}

static int link_cb(const struct nlmsghdr *nlh, void *data)
{
	struct topo_scan *s = data;
	const struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *a;
	struct link *l;

	if (nlh->nlmsg_type != RTM_NEWLINK || mnl_nlmsg_get_payload_len(nlh) < sizeof(*ifi) ||
	    ifi->ifi_family == AF_BRIDGE)
		return MNL_CB_OK;
	/* A link changed during the dump can come twice: the later message wins. */
	l = find_link(s, ifi->ifi_index);
	if (!l) {
		if (s->nr_links == TOPO_MAX_LINKS)
			return MNL_CB_OK;
		l = &s->links[s->nr_links++];
	}
	memset(l, 0, sizeof(*l));
	l->ifindex = ifi->ifi_index;
	l->ppp = ifi->ifi_type == ARPHRD_PPP;
	mnl_attr_for_each(a, nlh, sizeof(*ifi))
	{
		switch (mnl_attr_get_type(a)) {
		case IFLA_IFNAME:
			if (mnl_attr_validate(a, MNL_TYPE_NUL_STRING) >= 0)
				snprintf(l->name, sizeof(l->name), "%s", mnl_attr_get_str(a));
			break;
		case IFLA_MTU:
			if (mnl_attr_validate(a, MNL_TYPE_U32) >= 0)
				l->mtu = mnl_attr_get_u32(a);
			break;
		case IFLA_MASTER:
			if (mnl_attr_validate(a, MNL_TYPE_U32) >= 0)
				l->master = mnl_attr_get_u32(a);
			break;
		case IFLA_LINK:
			if (mnl_attr_validate(a, MNL_TYPE_U32) >= 0)
				l->lower = mnl_attr_get_u32(a);
			break;
		case IFLA_ADDRESS:
			if (mnl_attr_get_payload_len(a) == 6)
				memcpy(l->mac, mnl_attr_get_payload(a), 6);
			break;
		case IFLA_LINKINFO:
			parse_linkinfo(a, l);
			break;
		}
	}
	return MNL_CB_OK;
}

static int read_links(struct fp_topology *t, struct topo_scan *s)
{
	char req[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(req);
	struct ifinfomsg *ifi;

	nlh->nlmsg_type = RTM_GETLINK;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	return dump(t, nlh, link_cb, s);
}

static int br_vlan_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);
	struct topo_scan *s = data;
	const struct nlattr *a, *b;

	if (nlh->nlmsg_type != RTM_NEWLINK || mnl_nlmsg_get_payload_len(nlh) < sizeof(*ifi) ||
	    ifi->ifi_family != AF_BRIDGE)
		return MNL_CB_OK;
	mnl_attr_for_each(a, nlh, sizeof(*ifi))
	{
		if (mnl_attr_get_type(a) != IFLA_AF_SPEC)
			continue;
		mnl_attr_for_each_nested(b, a)
		{
			const struct bridge_vlan_info *info = mnl_attr_get_payload(b);
			struct br_vlan *v;

			if (mnl_attr_get_type(b) != IFLA_BRIDGE_VLAN_INFO ||
			    mnl_attr_get_payload_len(b) < sizeof(*info) || !info->vid ||
			    info->vid >= 4095 || s->nr_br_vlans == TOPO_MAX_BR_VLANS)
				continue;
			v = &s->br_vlans[s->nr_br_vlans++];
			v->ifindex = ifi->ifi_index;
			v->vid = info->vid;
			v->flags = info->flags;
		}
	}
	return MNL_CB_OK;
}

/* The 802.1Q VLAN-filtering bridge whose port l is, or NULL (the datapath parses 802.1Q
 * tags only: an 802.1ad bridge stays in the kernel). */
static struct link *filtering_bridge_of(struct topo_scan *s, const struct link *l)
{
	struct link *br = l && l->master ? find_link(s, l->master) : NULL;

	return br && br->bridge && br->vlan_filtering && !br->bridge_8021ad ? br : NULL;
}

/* The VLANs of the ports of VLAN-filtering bridges, and of the bridges themselves. */
static int read_br_vlans(struct fp_topology *t, struct topo_scan *s)
{
	char req[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(req);
	struct ifinfomsg *ifi;
	bool filtering = false;

	for (int i = 0; i < s->nr_ports && !filtering; i++)
		filtering = filtering_bridge_of(s, find_link(s, s->ports[i])) != NULL;
	if (!filtering)
		return 0;
	nlh->nlmsg_type = RTM_GETLINK;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_BRIDGE;
	mnl_attr_put_u32(nlh, IFLA_EXT_MASK, RTEXT_FILTER_BRVLAN);
	return dump(t, nlh, br_vlan_cb, s);
}

static const struct br_vlan *br_vlan(const struct topo_scan *s, uint32_t ifindex, uint16_t vid)
{
	for (int i = 0; i < s->nr_br_vlans; i++)
		if (s->br_vlans[i].ifindex == ifindex && s->br_vlans[i].vid == vid)
			return &s->br_vlans[i];
	return NULL;
}

/*
 * The device that routes VLAN vid of VLAN-filtering bridge br: the bridge itself if it
 * takes the VLAN's frames untagged and sends its own in it (its PVID), or an 802.1Q device
 * on the bridge if it takes them tagged. NULL if neither.
 */
static struct link *br_vlan_upper(struct topo_scan *s, const struct link *br, uint16_t vid)
{
	const uint16_t own = BRIDGE_VLAN_INFO_PVID | BRIDGE_VLAN_INFO_UNTAGGED;
	const struct br_vlan *self = br_vlan(s, br->ifindex, vid);

	if (!self)
		return NULL;
	if ((self->flags & own) == own)
		return find_link(s, br->ifindex);
	if (self->flags & BRIDGE_VLAN_INFO_UNTAGGED)
		return NULL;
	for (int i = 0; i < s->nr_links; i++)
		if (s->links[i].vlan && s->links[i].vlan_id == vid &&
		    s->links[i].lower == br->ifindex)
			return &s->links[i];
	return NULL;
}

static struct fp_egress *egress_of(struct topo_scan *s, uint32_t upper)
{
	for (int i = 0; i < s->next.nr_egress; i++)
		if (s->next.egress[i].upper == upper)
			return &s->next.egress[i].value;
	return NULL;
}

static bool served(struct topo_scan *s, uint32_t upper)
{
	return egress_of(s, upper) != NULL;
}

static void add_ingress(struct topo_scan *s, uint32_t port, uint16_t vlan_id, __be16 sid,
			uint32_t upper, const uint8_t *mac, const uint8_t *peer)
{
	struct ingress_entry *e;

	for (int i = 0; i < s->next.nr_ingress; i++) {
		const struct fp_ingress_key *k = &s->next.ingress[i].key;

		if (k->ifindex == port && k->vlan_id == vlan_id && k->pppoe_sid == sid)
			return; /* the first device to claim these frames keeps them */
	}
	if (s->next.nr_ingress == FP_MAX_L2_IFACES)
		return;
	e = &s->next.ingress[s->next.nr_ingress++];
	memset(e, 0, sizeof(*e));
	e->key.ifindex = port;
	e->key.vlan_id = vlan_id;
	e->key.pppoe_sid = sid;
	e->value.ifindex = upper;
	memcpy(e->value.mac, mac, 6);
	if (peer)
		memcpy(e->value.peer, peer, 6);
}

static struct fp_egress *add_egress(struct topo_scan *s, uint32_t upper)
{
	struct egress_entry *e;

	if (served(s, upper) || s->next.nr_egress == FP_MAX_L2_IFACES)
		return NULL; /* one way out per device: the first description stands */
	e = &s->next.egress[s->next.nr_egress++];
	memset(e, 0, sizeof(*e));
	e->upper = upper;
	return &e->value;
}

/*
 * An attached port of a VLAN-filtering bridge: each of its VLANs that a device routes
 * (br_vlan_upper) maps the port's frames tagged with it, and untagged ones for its PVID,
 * to that device, which reaches hosts through the bridge's FDB for the VLAN (fdb_cb).
 */
static void add_filtering_bridge_port(struct topo_scan *s, const struct link *port,
				      const struct link *br)
{
	for (int i = 0; i < s->nr_br_vlans; i++) {
		const struct br_vlan *v = &s->br_vlans[i];
		struct link *upper;
		struct fp_egress *eg;

		if (v->ifindex != port->ifindex || !(upper = br_vlan_upper(s, br, v->vid)))
			continue;
		eg = egress_of(s, upper->ifindex);
		if (!eg && (eg = add_egress(s, upper->ifindex)))
			eg->flags = FP_EGRESS_BRIDGE;
		if (!eg || eg->flags != FP_EGRESS_BRIDGE)
			continue;
		add_ingress(s, port->ifindex, v->vid, 0, upper->ifindex, upper->mac, NULL);
		if (v->flags & BRIDGE_VLAN_INFO_PVID)
			add_ingress(s, port->ifindex, 0, 0, upper->ifindex, upper->mac, NULL);
	}
}

static void add_bridges_and_vlans(struct topo_scan *s)
{
	for (int i = 0; i < s->nr_links; i++) {
		struct link *l = &s->links[i], *up;
		struct fp_egress *eg;

		bool vlan_on_port = l->vlan && l->vlan_id && is_port(s, l->lower);

		if (is_port(s, l->ifindex) && (up = filtering_bridge_of(s, l))) {
			add_filtering_bridge_port(s, l, up);
			continue;
		}
		/* Each upper device is described once, by its way out; frames are only mapped
		 * to a device that has one. A bridge port is an attached port, or a VLAN on one:
		 * its frames belong to the bridge. */
		if ((is_port(s, l->ifindex) || vlan_on_port) && l->master &&
		    (up = find_link(s, l->master)) && up->bridge && !up->vlan_filtering) {
			eg = egress_of(s, up->ifindex);
			if (!eg && (eg = add_egress(s, up->ifindex)))
				eg->flags = FP_EGRESS_BRIDGE;
			if (eg && eg->flags == FP_EGRESS_BRIDGE && vlan_on_port)
				add_ingress(s, l->lower, l->vlan_id, 0, up->ifindex, up->mac, NULL);
			else if (eg && eg->flags == FP_EGRESS_BRIDGE)
				add_ingress(s, l->ifindex, 0, 0, up->ifindex, up->mac, NULL);
			continue;
		}
		if (vlan_on_port && !served(s, l->ifindex)) {
			struct link *port = find_link(s, l->lower);

			eg = add_egress(s, l->ifindex);
			if (!eg)
				continue;
			eg->ifindex = l->lower;
			eg->mtu = port && port->mtu < 0xffff ? port->mtu : 0;
			eg->flags = FP_EGRESS_VLAN;
			eg->vlan_tci = htons(l->vlan_id);
			add_ingress(s, l->lower, l->vlan_id, 0, l->ifindex, l->mac, NULL);
		}
	}
}

/* /proc/net/pppoe: "Id       Address              Device", then "%08X %pM %8s" per session,
 * the id printed from its network-order bytes as a host-order number. */
static int read_pppoe(const char *path, struct pppoe_session *sessions, int max)
{
	FILE *f = fopen(path, "re");
	char line[128];
	int n = 0;

	if (!f)
		return 0; /* no PPPoE in this kernel */
	while (fgets(line, sizeof(line), f) && n < max) {
		unsigned int id, m[6];
		char dev[IF_NAMESIZE + 1];

		if (sscanf(line, "%8x %2x:%2x:%2x:%2x:%2x:%2x %16s", &id, &m[0], &m[1], &m[2],
			   &m[3], &m[4], &m[5], dev) != 8 ||
		    id > 0xffff || id == 0 || strlen(dev) >= IF_NAMESIZE)
			continue; /* the header, or nothing we can use */
		sessions[n].sid = (__be16)id;
		for (int i = 0; i < 6; i++)
			sessions[n].peer[i] = m[i];
		snprintf(sessions[n].dev, sizeof(sessions[n].dev), "%s", dev);
		n++;
	}
	fclose(f);
	return n;
}

static void add_pppoe(struct fp_topology *t, struct topo_scan *s)
{
	struct pppoe_session sessions[TOPO_MAX_PPPOE];
	int nr = read_pppoe(t->pppoe_path, sessions, TOPO_MAX_PPPOE), nr_ppp = 0;
	struct link *ppp = NULL, *dev, *port;
	struct fp_egress *eg;
	uint16_t vlan_id = 0;

	for (int i = 0; i < s->nr_links; i++)
		if (s->links[i].ppp) {
			ppp = &s->links[i];
			nr_ppp++;
		}
	if (!nr || !nr_ppp)
		return; /* no session, or its ppp device is not up yet */
	if (nr != 1 || nr_ppp != 1) {
		if (!t->pppoe_ambiguous_logged)
			fp_log(LOG_NOTICE,
			       "%d PPPoE sessions and %d ppp devices: which is which is not known, "
			       "so PPPoE stays in the kernel",
			       nr, nr_ppp);
		t->pppoe_ambiguous_logged = true;
		return;
	}
	dev = find_link_by_name(s, sessions[0].dev);
	if (!dev)
		return;
	port = dev;
	if (dev->vlan && dev->vlan_id) {
		vlan_id = dev->vlan_id;
		port = find_link(s, dev->lower);
	}
	if (!port || !is_port(s, port->ifindex) || served(s, ppp->ifindex))
		return;
	eg = add_egress(s, ppp->ifindex);
	if (!eg)
		return;
	add_ingress(s, port->ifindex, vlan_id, sessions[0].sid, ppp->ifindex, dev->mac,
		    sessions[0].peer);
	eg->ifindex = port->ifindex;
	eg->mtu = dev->mtu < 0xffff ? dev->mtu : 0;
	eg->flags = FP_EGRESS_PPPOE | (vlan_id ? FP_EGRESS_VLAN : 0);
	eg->vlan_tci = htons(vlan_id);
	eg->pppoe_sid = sessions[0].sid;
	memcpy(eg->smac, dev->mac, 6);
	memcpy(eg->dmac, sessions[0].peer, 6);
}

/*
 * Attached ports that cannot take redirected XDP frames now (attach checked them, but a
 * veth's peer can lose GRO later; before 6.3 most are guessed: fp_port_takes_redirects):
 * an fp_egress entry each, so that flows leaving by them go to the kernel instead of
 * being dropped by the redirect. Only natively attached ports redirect XDP frames;
 * generic ones redirect skbs, which any device takes.
 */
static void add_unable_ports(struct fp_topology *t, struct topo_scan *s)
{
	bool native[FP_MAX_TX_PORTS] = {false}, any_native = false;
	int nr_ports = s->nr_ports < FP_MAX_TX_PORTS ? s->nr_ports : FP_MAX_TX_PORTS;

	if (!t->ask_ports)
		return;
	for (int i = 0; i < nr_ports; i++) {
		LIBBPF_OPTS(bpf_xdp_query_opts, q);

		native[i] = !bpf_xdp_query(s->ports[i], 0, &q) && q.attach_mode == XDP_ATTACHED_DRV;
		any_native |= native[i];
	}
	for (int i = 0; any_native && i < nr_ports; i++) {
		uint32_t port = s->ports[i];
		char name[IF_NAMESIZE], why[192];
		struct fp_egress *eg;
		bool was = false;

		if (fp_port_takes_redirects(port, native[i], why, sizeof(why)) != 0)
			continue;
		eg = add_egress(s, port);
		if (!eg)
			continue;
		eg->flags = FP_EGRESS_NO_XMIT;
		for (int j = 0; j < t->maps->nr_egress; j++)
			was |= t->maps->egress[j].upper == port;
		if (!was) {
			fp_ifname(port, name);
			fp_log(LOG_WARNING,
			       "%s cannot take redirected XDP frames now (%s): flows from "
			       "native XDP ports leaving by it stay in the kernel",
			       name, why[0] ? why : "the kernel says so");
		}
	}
}

/* A host learnt in VLAN vid on port of VLAN-filtering bridge br: reached through the VLAN's
 * device, on the port, tagged unless the port sends the VLAN untagged. */
static int add_filtering_fdb(struct topo_scan *s, const struct link *br, uint32_t port,
			     uint16_t vid, const uint8_t *mac)
{
	const struct br_vlan *member = br_vlan(s, port, vid);
	struct link *upper = vid ? br_vlan_upper(s, br, vid) : NULL;
	struct fdb_entry *e;

	if (!upper || !member || !is_port(s, port) || !served(s, upper->ifindex))
		return MNL_CB_OK;
	e = &s->next.fdb[s->next.nr_fdb++];
	memset(e, 0, sizeof(*e));
	e->key.bridge = upper->ifindex;
	memcpy(e->key.mac, mac, 6);
	e->port.ifindex = port;
	if (!(member->flags & BRIDGE_VLAN_INFO_UNTAGGED))
		e->port.vlan_tci = htons(vid);
	return MNL_CB_OK;
}

static int fdb_cb(const struct nlmsghdr *nlh, void *data)
{
	struct topo_scan *s = data;
	const struct ndmsg *ndm = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *a;
	const uint8_t *mac = NULL;
	uint32_t bridge = 0;
	uint16_t vlan = 0;
	struct fdb_entry *e;
	struct link *port, *br;

	if (nlh->nlmsg_type != RTM_NEWNEIGH || mnl_nlmsg_get_payload_len(nlh) < sizeof(*ndm) ||
	    ndm->ndm_family != AF_BRIDGE)
		return MNL_CB_OK;
	/* The bridge's own addresses: never a next hop's. */
	if (ndm->ndm_state & NUD_PERMANENT)
		return MNL_CB_OK;
	mnl_attr_for_each(a, nlh, sizeof(*ndm))
	{
		switch (mnl_attr_get_type(a)) {
		case NDA_LLADDR:
			if (mnl_attr_get_payload_len(a) == 6)
				mac = mnl_attr_get_payload(a);
			break;
		case NDA_MASTER:
			if (mnl_attr_validate(a, MNL_TYPE_U32) >= 0)
				bridge = mnl_attr_get_u32(a);
			break;
		case NDA_VLAN:
			if (mnl_attr_validate(a, MNL_TYPE_U16) >= 0)
				vlan = mnl_attr_get_u16(a);
			break;
		}
	}
	if (!mac || !bridge || (uint32_t)ndm->ndm_ifindex == bridge || s->next.nr_fdb == FP_MAX_FDB)
		return MNL_CB_OK;
	br = find_link(s, bridge);
	if (br && br->bridge && br->vlan_filtering)
		return add_filtering_fdb(s, br, ndm->ndm_ifindex, vlan, mac);
	if (vlan || !served(s, bridge))
		return MNL_CB_OK;
	e = &s->next.fdb[s->next.nr_fdb++];
	memset(e, 0, sizeof(*e));
	e->key.bridge = bridge;
	memcpy(e->key.mac, mac, 6);
	e->port.ifindex = ndm->ndm_ifindex;
	/* Learnt on a VLAN device: sent on the port below it, tagged. */
	port = find_link(s, ndm->ndm_ifindex);
	if (port && port->vlan && port->vlan_id && is_port(s, port->lower)) {
		e->port.ifindex = port->lower;
		e->port.vlan_tci = htons(port->vlan_id);
	}
	return MNL_CB_OK;
}

static int read_fdb(struct fp_topology *t, struct topo_scan *s)
{
	char req[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(req);
	struct ndmsg *ndm;
	bool bridges = false;

	for (int i = 0; i < s->next.nr_egress; i++)
		bridges |= s->next.egress[i].value.flags & FP_EGRESS_BRIDGE;
	if (!bridges)
		return 0;
	nlh->nlmsg_type = RTM_GETNEIGH;
	ndm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ndm));
	ndm->ndm_family = AF_BRIDGE;
	return dump(t, nlh, fdb_cb, s);
}

/* Makes map fd hold exactly the n entries (key, value) in entries, each stride bytes. */
static int write_map(int fd, const void *entries, int n, size_t stride, size_t key_size,
		     const void *old, int nr_old)
{
	const char *e = entries, *o = old;
	int err = 0;

	/* Stale keys first: a full map must have room for the new ones. */
	for (int i = 0; i < nr_old; i++) {
		bool keep = false;

		for (int j = 0; j < n && !keep; j++)
			keep = !memcmp(o + i * stride, e + j * stride, key_size);
		if (!keep && bpf_map_delete_elem(fd, o + i * stride) && errno != ENOENT)
			err = -errno;
	}
	for (int i = 0; i < n; i++)
		if (bpf_map_update_elem(fd, e + i * stride, e + i * stride + key_size, BPF_ANY))
			err = -errno;
	return err;
}

/*
 * VLANs on ports at XDP (native, generic or split) whose tags are taken out of the frames
 * before XDP runs (fp_strips_vlan_tags): their incoming frames look untagged, find no flow
 * and pass, so that direction stays in the kernel. attach's auto puts such a port on the
 * tc hook, which reads the tags; a VLAN that appears later, or one under --mode, is warned
 * about once.
 */
static void warn_hidden_tags(struct fp_topology *t, struct topo_scan *s)
{
	uint64_t hidden[FP_MAX_L2_IFACES];
	int nr_hidden = 0;

	if (!t->ask_ports)
		return;
	for (int p = 0; p < s->nr_ports; p++) {
		const struct link *port = find_link(s, s->ports[p]);
		LIBBPF_OPTS(bpf_xdp_query_opts, q);
		char fix[160];

		if (!port || bpf_xdp_query(port->ifindex, 0, &q) ||
		    q.attach_mode == XDP_ATTACHED_NONE ||
		    !fp_strips_vlan_tags(port->ifindex, fix, sizeof(fix)))
			continue;
		for (int i = 0; i < s->next.nr_ingress; i++) {
			const struct fp_ingress_key *k = &s->next.ingress[i].key;
			uint64_t vlan = (uint64_t)k->ifindex << 16 | k->vlan_id;
			bool warned = false;

			if (k->ifindex != port->ifindex || !k->vlan_id)
				continue;
			hidden[nr_hidden++] = vlan;
			for (int j = 0; j < t->nr_hidden_tags; j++)
				warned |= t->hidden_tags[j] == vlan;
			if (!warned)
				fp_log(LOG_WARNING,
				       "%s: %s: VLAN %u's incoming packets stay in the kernel "
				       "('%s', or attach %s with --mode tc)",
				       port->name,
				       "VLAN offload takes the tags out of its frames before XDP",
				       k->vlan_id, fix, port->name);
		}
	}
	memcpy(t->hidden_tags, hidden, nr_hidden * sizeof(hidden[0]));
	t->nr_hidden_tags = nr_hidden;
}

int topology_sync(struct fp_topology *t, const struct fp_instance *inst, const uint32_t *ports,
		  int nr_ports)
{
	struct topo_scan *s = calloc(1, sizeof(*s));
	struct topo_maps *old = t->maps, *next;
	int err, changed;

	if (!s || !t->maps)
		return -ENOMEM;
	s->ports = ports;
	s->nr_ports = nr_ports;
	next = &s->next;
	err = read_links(t, s);
	if (!err)
		err = read_br_vlans(t, s);
	if (!err) {
		add_bridges_and_vlans(s);
		add_pppoe(t, s);
		add_unable_ports(t, s);
		warn_hidden_tags(t, s);
		err = read_fdb(t, s);
	}
	if (err) {
		free(s);
		return err;
	}
	changed =
		next->nr_ingress != old->nr_ingress || next->nr_egress != old->nr_egress ||
		next->nr_fdb != old->nr_fdb ||
		memcmp(next->ingress, old->ingress, next->nr_ingress * sizeof(next->ingress[0])) ||
		memcmp(next->egress, old->egress, next->nr_egress * sizeof(next->egress[0])) ||
		memcmp(next->fdb, old->fdb, next->nr_fdb * sizeof(next->fdb[0]));
	changed |= t->rewrite;
	if (changed) {
		err = write_map(inst->ingress_fd, next->ingress, next->nr_ingress,
				sizeof(next->ingress[0]), sizeof(next->ingress[0].key),
				old->ingress, old->nr_ingress);
		err = write_map(inst->egress_fd, next->egress, next->nr_egress,
				sizeof(next->egress[0]), sizeof(next->egress[0].upper), old->egress,
				old->nr_egress)
			      ?: err;
		err = write_map(inst->fdb_fd, next->fdb, next->nr_fdb, sizeof(next->fdb[0]),
				sizeof(next->fdb[0].key), old->fdb, old->nr_fdb)
			      ?: err;
		*old = *next;
		t->rewrite = err != 0; /* try again at the next sync */
	}
	t->nr_served = 0;
	t->bridge_ports = false;
	for (int i = 0; i < next->nr_egress; i++)
		if (!(next->egress[i].value.flags & FP_EGRESS_NO_XMIT))
			t->served[t->nr_served++] = next->egress[i].upper;
	for (int i = 0; i < next->nr_ingress; i++)
		t->bridge_ports |= !next->ingress[i].key.vlan_id && !next->ingress[i].key.pppoe_sid;
	free(s);
	return err ? err : changed;
}

/* A tagged VLAN of port in its VLAN-filtering bridge, named by the device that takes it. */
static int filtering_vlan_on(struct fp_topology *t, struct topo_scan *s, uint32_t port, char *name)
{
	const struct link *br = filtering_bridge_of(s, find_link(s, port)), *upper;
	int err;

	if (!br)
		return 0;
	s->ports = &port;
	s->nr_ports = 1;
	err = read_br_vlans(t, s);
	for (int i = 0; !err && i < s->nr_br_vlans; i++) {
		const struct br_vlan *v = &s->br_vlans[i];

		if (v->ifindex != port || (v->flags & BRIDGE_VLAN_INFO_UNTAGGED) ||
		    !(upper = br_vlan_upper(s, br, v->vid)))
			continue;
		snprintf(name, IF_NAMESIZE, "%s", upper->name);
		return 1;
	}
	return err;
}

int topology_vlan_on(int port, char *name)
{
	struct topo_scan *s = calloc(1, sizeof(*s));
	struct fp_topology t;
	int err = s ? topology_open(&t) : -ENOMEM;

	if (err) {
		free(s);
		return err;
	}
	err = read_links(&t, s);
	for (int i = 0; !err && i < s->nr_links; i++) {
		const struct link *l = &s->links[i];

		if (l->vlan && l->vlan_id && l->lower == (uint32_t)port) {
			snprintf(name, IF_NAMESIZE, "%s", l->name);
			err = 1;
		}
	}
	if (!err)
		err = filtering_vlan_on(&t, s, port, name);
	topology_close(&t);
	free(s);
	return err;
}

bool topology_upper_on_port(const struct fp_topology *t, uint32_t upper, uint32_t port)
{
	for (int i = 0; t->maps && i < t->maps->nr_ingress; i++)
		if (t->maps->ingress[i].key.ifindex == port &&
		    t->maps->ingress[i].value.ifindex == upper)
			return true;
	return false;
}

static int kind_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *a;
	struct link *l = data;

	if (nlh->nlmsg_type != RTM_NEWLINK || mnl_nlmsg_get_payload_len(nlh) < sizeof(*ifi))
		return MNL_CB_OK;
	l->type = ifi->ifi_type;
	l->ppp = ifi->ifi_type == ARPHRD_PPP;
	mnl_attr_for_each(a, nlh, sizeof(*ifi))
	{
		if (mnl_attr_get_type(a) == IFLA_LINKINFO)
			parse_linkinfo(a, l);
		else if (mnl_attr_get_type(a) == IFLA_LINK &&
			 mnl_attr_validate(a, MNL_TYPE_U32) >= 0)
			l->lower = mnl_attr_get_u32(a);
		else if (mnl_attr_get_type(a) == IFLA_MASTER &&
			 mnl_attr_validate(a, MNL_TYPE_U32) >= 0)
			l->master = mnl_attr_get_u32(a);
	}
	return MNL_CB_OK;
}

bool topology_pppoe_above(int port, bool vlans)
{
	struct pppoe_session sessions[TOPO_MAX_PPPOE];
	int nr = read_pppoe(FP_PPPOE_PROC, sessions, TOPO_MAX_PPPOE);

	for (int i = 0; i < nr; i++) {
		int dev = if_nametoindex(sessions[i].dev);
		struct link l = {0};

		if (dev == port)
			return true;
		if (vlans && dev && !fp_rtnl_get_link(dev, kind_cb, &l) && l.vlan &&
		    l.lower == (uint32_t)port)
			return true;
	}
	return false;
}

bool topology_dsa_conduit(const char *sysfs_net, int ifindex)
{
	char name[IF_NAMESIZE], path[PATH_MAX];

	if (!if_indextoname(ifindex, name))
		return false;
	/* The sysfs of another network namespace (mounted before a setns) names its own
	 * devices: only one whose ifindex matches is this one. */
	snprintf(path, sizeof(path), "%s/%s/ifindex", sysfs_net, name);
	if (fp_read_u32_file(path, 0) != (uint32_t)ifindex)
		return false;
	snprintf(path, sizeof(path), "%s/%s/dsa/tagging", sysfs_net, name);
	return access(path, F_OK) == 0;
}

int topology_not_a_port(int ifindex, const char **why)
{
	static char aggregated[64 + IF_NAMESIZE];
	struct link l = {.type = ARPHRD_ETHER};
	int ret = fp_rtnl_get_link(ifindex, kind_cb, &l);
	char master[IF_NAMESIZE];

	*why = NULL;
	/*
	 * A bond's or a team's ports hand their frames to it, and the daemon offloads its
	 * connections as its own: on a port, the datapath would find none of them.
	 */
	if (l.aggregated) {
		fp_ifname(l.master, master);
		snprintf(aggregated, sizeof(aggregated), "a port of %s: attach to %s instead",
			 master, master);
		*why = aggregated;
	} else if (l.bridge)
		*why = "a bridge: attach to its ports instead";
	else if (l.vlan)
		*why = "a VLAN device: attach to the port it is on instead";
	else if (l.ppp)
		*why = "a PPP device: attach to the Ethernet port of its PPPoE session instead";
	/*
	 * A layer-3 link's packets start at the IP header, and what is sent through it must
	 * too: the datapath would read its packets as Ethernet frames and hand it frames.
	 */
	else if (l.type == ARPHRD_NONE || l.type == ARPHRD_RAWIP)
		*why = "a layer-3 link (a tun, WireGuard, a modem in raw IP mode), not an Ethernet "
		       "port: its connections stay with the kernel";
	else if (l.type == ARPHRD_LOOPBACK)
		*why = "the loopback device, not an Ethernet port";
	else if (l.type != ARPHRD_ETHER)
		*why = "not an Ethernet port (an IP tunnel or another link without Ethernet "
		       "headers): its connections stay with the kernel";
	/*
	 * A DSA switch's conduit (eth0 of an MT7621 or most other switched routers) carries
	 * every port's frames with the switch's tag in them, which the datapath does not
	 * parse: it would run on every frame and forward none.
	 */
	else if (!ret && topology_dsa_conduit(FP_SYSFS_NET, ifindex))
		*why = "a DSA switch's conduit, whose frames carry the switch's tags: attach to "
		       "the switch's ports instead (those 'ip link' shows as name@conduit)";
	return ret;
}
