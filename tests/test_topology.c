// SPDX-License-Identifier: GPL-2.0-only
/*
 * The daemon's layer-2 topology (loader/topology.c) from crafted rtnetlink link messages
 * and a crafted /proc/net/pppoe: this kernel can make neither VLAN nor ppp devices. The maps
 * it writes are checked field by field, then a frame goes through the datapath with them.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <libmnl/libmnl.h>
#include <linux/if_arp.h>
#include <linux/if_bridge.h>
#include <linux/if_link.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <bpf/bpf.h>

#include "fixture.h"
#include "packet.h"
#include "route_watch.h"
#include "testlib.h"
#include "tests.h"
#include "topology.h"

#define VLAN_IFINDEX   9001 /* fp_port.7: no such device here, only in the crafted dump */
#define BRIDGE_IFINDEX 9003
#define SID	       0x1234

struct fake_link {
	uint32_t ifindex;
	uint16_t type; /* ARPHRD_* */
	const char *name, *kind;
	uint32_t mtu, lower, master;
	uint16_t vlan_id;
	int vlan_filtering;
	const uint8_t *mac;	/* NULL: the fixture port's */
	uint16_t vlan_protocol; /* a bridge's; 0: 802.1Q */
};

static size_t put_link(char *buf, const struct fake_link *l)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ifinfomsg *ifi;
	struct nlattr *info, *data;

	nlh->nlmsg_type = RTM_NEWLINK;
	nlh->nlmsg_flags = NLM_F_MULTI;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_index = l->ifindex;
	ifi->ifi_type = l->type;
	mnl_attr_put_strz(nlh, IFLA_IFNAME, l->name);
	mnl_attr_put_u32(nlh, IFLA_MTU, l->mtu);
	if (l->type == ARPHRD_ETHER)
		mnl_attr_put(nlh, IFLA_ADDRESS, 6, l->mac ? l->mac : fx_port_mac);
	if (l->lower)
		mnl_attr_put_u32(nlh, IFLA_LINK, l->lower);
	if (l->master)
		mnl_attr_put_u32(nlh, IFLA_MASTER, l->master);
	if (l->kind) {
		info = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
		mnl_attr_put_strz(nlh, IFLA_INFO_KIND, l->kind);
		data = mnl_attr_nest_start(nlh, IFLA_INFO_DATA);
		if (!strcmp(l->kind, "vlan")) {
			mnl_attr_put_u16(nlh, IFLA_VLAN_ID, l->vlan_id);
			mnl_attr_put_u16(nlh, IFLA_VLAN_PROTOCOL, htons(0x8100));
		} else if (!strcmp(l->kind, "bridge")) {
			mnl_attr_put_u8(nlh, IFLA_BR_VLAN_FILTERING, l->vlan_filtering);
			mnl_attr_put_u16(nlh, IFLA_BR_VLAN_PROTOCOL,
					 htons(l->vlan_protocol ? l->vlan_protocol : 0x8100));
		}
		mnl_attr_nest_end(nlh, data);
		mnl_attr_nest_end(nlh, info);
	}
	return nlh->nlmsg_len;
}

static size_t put_links(char *buf, const struct fake_link *links, int n)
{
	size_t len = 0;

	for (int i = 0; i < n; i++)
		len += put_link(buf + len, &links[i]);
	return len;
}

/* /proc/net/pppoe as the kernel prints it: the id from its network-order bytes. */
static void write_pppoe(const char *path, const char *dev)
{
	FILE *f = fopen(path, "w");

	if (!f)
		DIE("cannot write %s", path);
	fprintf(f, "Id       Address              Device\n");
	fprintf(f, "%08X %02x:%02x:%02x:%02x:%02x:%02x %8s\n", (uint16_t)htons(SID), fx_peer_mac[0],
		fx_peer_mac[1], fx_peer_mac[2], fx_peer_mac[3], fx_peer_mac[4], fx_peer_mac[5],
		dev);
	fclose(f);
}

static struct fp_instance fake_instance(void)
{
	return (struct fp_instance){
		.ingress_fd = bpf_map__fd(fx.skel->maps.fp_ingress),
		.egress_fd = bpf_map__fd(fx.skel->maps.fp_egress),
		.fdb_fd = bpf_map__fd(fx.skel->maps.fp_fdb),
	};
}

/* A topology reading the links in dump and one PPPoE session on pppoe_dev; maps reset. */
static void fake_topology(struct fp_topology *t, const char *pppoe_path, const char *pppoe_dev,
			  const char *dump, size_t len)
{
	fx_reset();
	write_pppoe(pppoe_path, pppoe_dev);
	if (topology_open(t))
		DIE("topology_open");
	t->pppoe_path = pppoe_path;
	t->ask_ports = false; /* test_steer and test_cli_errors cover the ports' features */
	t->link_dump = dump;
	t->link_dump_len = len;
}

static int count_entries(int fd)
{
	uint8_t key[16], next[16];
	void *prev = NULL;
	int n = 0;

	while (bpf_map_get_next_key(fd, prev, next) == 0) {
		memcpy(key, next, sizeof(key));
		prev = key;
		n++;
	}
	return n;
}

static bool served(const struct fp_topology *t, uint32_t ifindex)
{
	for (int i = 0; i < t->nr_served; i++)
		if (t->served[i] == ifindex)
			return true;
	return false;
}

/* The WAN as many DSL lines have it: PPPoE on VLAN 7 of an Ethernet port. */
static void test_pppoe_on_vlan(const char *pppoe_path)
{
	const struct fake_link links[] = {
		{fx.port_ifindex, ARPHRD_ETHER, "fp_port", NULL, 1500},
		{VLAN_IFINDEX, ARPHRD_ETHER, "fp_port.7", "vlan", 1500, fx.port_ifindex, 0, 7},
		{fx.wan_ifindex, ARPHRD_PPP, "pppoe-wan", NULL, 1492},
	};
	uint32_t ports[] = {fx.lan_ifindex, fx.port_ifindex};
	struct fp_instance inst = fake_instance();
	struct fp_ingress_key vlan_key = {fx.port_ifindex, 7, 0},
			      pppoe_key = {fx.port_ifindex, 7, htons(SID)};
	struct fp_ingress got_in, want_vlan_in = {VLAN_IFINDEX}, want_pppoe_in = {fx.wan_ifindex};
	struct fp_egress got_eg, want_vlan_eg = {fx.port_ifindex, 1500, FP_EGRESS_VLAN, htons(7)};
	struct fp_egress want_pppoe_eg = {fx.port_ifindex, 1500, FP_EGRESS_VLAN | FP_EGRESS_PPPOE,
					  htons(7), htons(SID)};
	static char dump[8192];
	struct fp_topology t;
	uint32_t key = VLAN_IFINDEX;

	memcpy(want_vlan_in.mac, fx_port_mac, 6);
	memcpy(want_pppoe_in.mac, fx_port_mac, 6);
	memcpy(want_pppoe_in.peer, fx_peer_mac, 6);
	memcpy(want_pppoe_eg.smac, fx_port_mac, 6);
	memcpy(want_pppoe_eg.dmac, fx_peer_mac, 6);

	tl_case_begin("topology: pppoe on a vlan of an attached port");
	fake_topology(&t, pppoe_path, "fp_port.7", dump, put_links(dump, links, 3));

	CHECK(topology_sync(&t, &inst, ports, 2) == 1, "the first sync changes the maps");
	CHECK(served(&t, VLAN_IFINDEX) && served(&t, fx.wan_ifindex) && t.nr_served == 2,
	      "serves the vlan and the ppp device, and nothing else (%d)", t.nr_served);
	CHECK(!t.bridge_ports, "no bridge port");
	CHECK(count_entries(inst.ingress_fd) == 2 && count_entries(inst.egress_fd) == 2,
	      "two ingress and two egress entries");
	CHECK(!bpf_map_lookup_elem(inst.ingress_fd, &vlan_key, &got_in) &&
		      !memcmp(&got_in, &want_vlan_in, sizeof(got_in)),
	      "vlan 7 on the port belongs to fp_port.7");
	CHECK(!bpf_map_lookup_elem(inst.ingress_fd, &pppoe_key, &got_in) &&
		      !memcmp(&got_in, &want_pppoe_in, sizeof(got_in)),
	      "the session on vlan 7 belongs to the ppp device, from the peer only");
	CHECK(!bpf_map_lookup_elem(inst.egress_fd, &key, &got_eg) &&
		      !memcmp(&got_eg, &want_vlan_eg, sizeof(got_eg)),
	      "fp_port.7 leaves by the port with tag 7");
	key = fx.wan_ifindex;
	CHECK(!bpf_map_lookup_elem(inst.egress_fd, &key, &got_eg) &&
		      !memcmp(&got_eg, &want_pppoe_eg, sizeof(got_eg)),
	      "the ppp device leaves by the port with tag 7 and the session, to the peer");
	CHECK(topology_sync(&t, &inst, ports, 2) == 0, "the same topology again changes nothing");

	/* The daemon's maps, used by the datapath: a LAN frame leaves tagged and in session. */
	{
		struct pkt_spec in_spec = {FROM_LAN, CLI4, .proto = IPPROTO_UDP, .payload_len = 50};
		struct pkt_spec out_spec = {.dmac = MAC_PEER,
					    .smac = MAC_PORT,
					    .vlan_id = 7,
					    .pppoe_sid = SID,
					    CLI4_SNAT_OUT,
					    .proto = IPPROTO_UDP,
					    .ttl = 63,
					    .payload_len = 50};
		struct fp_flow_key4 k = {.ifindex = fx.lan_ifindex,
					 .proto = IPPROTO_UDP,
					 .sport = htons(40000),
					 .dport = htons(443)};
		struct fp_flow4 flow = {.meta.flags = FP_FLOW_SNAT, .nat_sport = htons(61000)};
		static uint8_t in[PKT_MAX], out[PKT_MAX], want[PKT_MAX];
		size_t in_len, want_len;
		uint32_t out_len;

		inet_pton(AF_INET, "198.18.1.2", &k.saddr);
		inet_pton(AF_INET, "198.19.2.2", &k.daddr);
		inet_pton(AF_INET, "198.19.2.1", &flow.nat_saddr);
		fx_add_flow4(&k, &flow);
		in_len = pkt_build(&in_spec, in);
		want_len = pkt_build(&out_spec, want);
		CHECK(fx_run(in, in_len, fx.lan_ifindex, out, &out_len) == XDP_REDIRECT,
		      "the frame is redirected");
		CHECK(out_len == want_len && !memcmp(out, want, want_len),
		      "it leaves with the tag and session the daemon found");
	}

	/* The VLAN goes away: so do its entries, and the session on it. */
	t.link_dump_len = put_links(dump, links, 1);
	CHECK(topology_sync(&t, &inst, ports, 2) == 1, "losing the vlan changes the maps");
	CHECK(count_entries(inst.ingress_fd) == 0 && count_entries(inst.egress_fd) == 0 &&
		      t.nr_served == 0,
	      "and empties them");
	topology_close(&t);
	tl_case_end();
}

/* A bridge entry: mac learnt on port of bridge (in VLAN vid of a filtering one, or 0). */
static size_t put_fdb(char *buf, uint32_t bridge, uint32_t port, const uint8_t *mac, uint16_t vid)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ndmsg *ndm;

	nlh->nlmsg_type = RTM_NEWNEIGH;
	nlh->nlmsg_flags = NLM_F_MULTI;
	ndm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ndm));
	ndm->ndm_family = AF_BRIDGE;
	ndm->ndm_ifindex = port;
	ndm->ndm_state = NUD_REACHABLE;
	mnl_attr_put(nlh, NDA_LLADDR, 6, mac);
	mnl_attr_put_u32(nlh, NDA_MASTER, bridge);
	if (vid)
		mnl_attr_put_u16(nlh, NDA_VLAN, vid);
	return nlh->nlmsg_len;
}

/* The VLANs of a port of a filtering bridge, or of the bridge itself, as an AF_BRIDGE link
 * dump with RTEXT_FILTER_BRVLAN gives them. */
static size_t put_br_vlans(char *buf, uint32_t ifindex, const struct bridge_vlan_info *vlans, int n)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ifinfomsg *ifi;
	struct nlattr *spec;

	nlh->nlmsg_type = RTM_NEWLINK;
	nlh->nlmsg_flags = NLM_F_MULTI;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_BRIDGE;
	ifi->ifi_index = ifindex;
	mnl_attr_put_u32(nlh, IFLA_MASTER, BRIDGE_IFINDEX);
	spec = mnl_attr_nest_start(nlh, IFLA_AF_SPEC);
	for (int i = 0; i < n; i++)
		mnl_attr_put(nlh, IFLA_BRIDGE_VLAN_INFO, sizeof(vlans[i]), &vlans[i]);
	mnl_attr_nest_end(nlh, spec);
	return nlh->nlmsg_len;
}

/* One frame through the datapath: want_spec on egress, byte for byte. */
static void check_frame(const char *what, const struct pkt_spec *in_spec, int ingress,
			const struct pkt_spec *want_spec)
{
	static uint8_t in[PKT_MAX], out[PKT_MAX], want[PKT_MAX];
	size_t in_len = pkt_build(in_spec, in), want_len = pkt_build(want_spec, want);
	uint32_t out_len;
	int verdict = fx_run(in, in_len, ingress, out, &out_len);

	CHECK(verdict == XDP_REDIRECT && out_len == want_len && !memcmp(out, want, want_len),
	      "%s: verdict %d, or not the expected frame", what, verdict);
}

/*
 * A connection of the LAN host (198.18.1.2, the fixture's LAN host MAC) with the WAN, its
 * frames tagged vid on the port: the reply leaves by the port with the tag, and the host's
 * tagged frame, keyed by LAN, leaves by WAN.
 */
static void check_lan_host_frames(const char *what, uint16_t vid)
{
	struct pkt_spec reply = {
		FROM_WAN,     .family = 4,    .saddr = "198.19.2.2", .daddr = "198.19.2.1",
		.sport = 443, .dport = 61000, .proto = IPPROTO_TCP,  .payload_len = 20};
	struct pkt_spec reply_out = {TO_LAN,
				     .vlan_id = vid,
				     .family = 4,
				     .saddr = "198.19.2.2",
				     .daddr = "198.18.1.2",
				     .sport = 443,
				     .dport = 40000,
				     .proto = IPPROTO_TCP,
				     .ttl = 63,
				     .payload_len = 20};
	struct pkt_spec orig = {FROM_LAN, .vlan_id = vid, CLI4, .proto = IPPROTO_UDP,
				.payload_len = 20};
	struct pkt_spec orig_out = {TO_WAN, CLI4_SNAT_OUT, .proto = IPPROTO_UDP, .ttl = 63,
				    .payload_len = 20};
	struct fp_flow_key4 k = {.ifindex = fx.wan_ifindex,
				 .proto = IPPROTO_TCP,
				 .sport = htons(443),
				 .dport = htons(61000)};
	struct fp_flow4 flow = {.meta.flags = FP_FLOW_DNAT, .nat_dport = htons(40000)};
	char line[96];

	inet_pton(AF_INET, "198.19.2.2", &k.saddr);
	inet_pton(AF_INET, "198.19.2.1", &k.daddr);
	inet_pton(AF_INET, "198.18.1.2", &flow.nat_daddr);
	fx_add_flow4(&k, &flow);
	snprintf(line, sizeof(line), "wan -> %s", what);
	check_frame(line, &reply, fx.wan_ifindex, &reply_out);

	k = (struct fp_flow_key4){.ifindex = fx.lan_ifindex,
				  .proto = IPPROTO_UDP,
				  .sport = htons(40000),
				  .dport = htons(443)};
	flow = (struct fp_flow4){.meta.flags = FP_FLOW_SNAT, .nat_sport = htons(61000)};
	inet_pton(AF_INET, "198.18.1.2", &k.saddr);
	inet_pton(AF_INET, "198.19.2.2", &k.daddr);
	inet_pton(AF_INET, "198.19.2.1", &flow.nat_saddr);
	fx_add_flow4(&k, &flow);
	snprintf(line, sizeof(line), "%s's frame tagged %u -> wan", what, vid);
	check_frame(line, &orig, fx.port_ifindex, &orig_out);
}

/*
 * OpenWrt's swconfig layout: br-lan's port is eth0.1, VLAN 1 on the switch's CPU port.
 * Here LAN plays br-lan, and fp_port.1 (VLAN 1 on PORT) is its port, where the LAN host
 * was learnt: the bridge is served from PORT, tagged frames belong to it, and frames to
 * the host leave by PORT with tag 1.
 */
static void test_bridge_on_vlan(const char *pppoe_path)
{
	const struct fake_link links[] = {
		{fx.lan_ifindex, ARPHRD_ETHER, "br-lan", "bridge", 1500, .mac = fx_lan_mac},
		{fx.port_ifindex, ARPHRD_ETHER, "fp_port", NULL, 1500},
		{VLAN_IFINDEX, ARPHRD_ETHER, "fp_port.1", "vlan", 1500, fx.port_ifindex,
		 fx.lan_ifindex, 1},
	};
	uint32_t ports[] = {fx.port_ifindex, fx.wan_ifindex};
	struct fp_instance inst = fake_instance();
	struct fp_ingress_key in_key = {fx.port_ifindex, 1, 0};
	struct fp_ingress got_in, want_in = {fx.lan_ifindex};
	struct fp_fdb_key fdb_key = {fx.lan_ifindex};
	struct fp_fdb_port got_port, want_port = {fx.port_ifindex, htons(1)};
	struct fp_egress got_eg;
	uint32_t key = fx.lan_ifindex;
	static char dump[8192];
	struct fp_topology t;
	size_t len;

	memcpy(want_in.mac, fx_lan_mac, 6);
	memcpy(fdb_key.mac, fx_lan_host_mac, 6);
	tl_case_begin("topology: a bridge whose port is a vlan of an attached port");
	len = put_links(dump, links, 3);
	len += put_fdb(dump + len, fx.lan_ifindex, VLAN_IFINDEX, fx_lan_host_mac, 0);
	fake_topology(&t, pppoe_path, "none", dump, len);
	CHECK(topology_sync(&t, &inst, ports, 2) == 1, "the first sync changes the maps");
	CHECK(served(&t, fx.lan_ifindex) && t.nr_served == 1, "serves the bridge only");
	CHECK(!bpf_map_lookup_elem(inst.ingress_fd, &in_key, &got_in) &&
		      !memcmp(&got_in, &want_in, sizeof(got_in)),
	      "vlan 1 on the port belongs to the bridge");
	CHECK(!bpf_map_lookup_elem(inst.egress_fd, &key, &got_eg) &&
		      got_eg.flags == FP_EGRESS_BRIDGE,
	      "the bridge leaves by its fdb");
	CHECK(!bpf_map_lookup_elem(inst.fdb_fd, &fdb_key, &got_port) &&
		      !memcmp(&got_port, &want_port, sizeof(got_port)),
	      "the host learnt on fp_port.1 is reached on the port with tag 1");

	check_lan_host_frames("the host behind fp_port.1", 1);
	topology_close(&t);
	tl_case_end();
}

/*
 * OpenWrt's DSA layout with bridge VLAN filtering: br-lan's port is the attached port, a
 * member of VLAN 1 (untagged, its PVID) and VLAN 3 (tagged). The bridge takes VLAN 1 as its
 * own (PVID, untagged) and VLAN 3 tagged, for br-lan.3, which LAN plays here (a device the
 * route lookup knows). Untagged frames and frames tagged 1 belong to br-lan, frames tagged 3
 * to br-lan.3; hosts learnt in VLAN 3 are reached on the port with tag 3, those learnt in
 * VLAN 1 untagged. A VLAN the bridge does not take (5) is not served.
 */
static void test_filtering_bridge(const char *pppoe_path)
{
	static const uint8_t host1_mac[6] = {0x02, 0, 0, 0, 0x11, 0x01};
	const struct fake_link links[] = {
		{BRIDGE_IFINDEX, ARPHRD_ETHER, "br-lan", "bridge", 1500, 0, 0, 0, 1, fx_lan_mac},
		{fx.port_ifindex, ARPHRD_ETHER, "fp_port", NULL, 1500, 0, BRIDGE_IFINDEX},
		{fx.lan_ifindex, ARPHRD_ETHER, "br-lan.3", "vlan", 1500, BRIDGE_IFINDEX, 0, 3,
		 .mac = fx_lan_mac},
	};
	const struct bridge_vlan_info port_vlans[] = {
		{BRIDGE_VLAN_INFO_PVID | BRIDGE_VLAN_INFO_UNTAGGED, 1}, {0, 3}, {0, 5}};
	const struct bridge_vlan_info self_vlans[] = {
		{BRIDGE_VLAN_INFO_PVID | BRIDGE_VLAN_INFO_UNTAGGED, 1}, {0, 3}};
	uint32_t ports[] = {fx.port_ifindex, fx.wan_ifindex};
	struct fp_instance inst = fake_instance();
	struct fp_ingress_key untagged = {fx.port_ifindex, 0, 0}, tag1 = {fx.port_ifindex, 1, 0},
			      tag3 = {fx.port_ifindex, 3, 0}, tag5 = {fx.port_ifindex, 5, 0};
	struct fp_ingress got_in;
	struct fp_fdb_key host3 = {fx.lan_ifindex}, host1 = {BRIDGE_IFINDEX};
	struct fp_fdb_port got_port, want3 = {fx.port_ifindex, htons(3)},
				     want1 = {fx.port_ifindex, 0};
	struct fp_egress got_eg;
	uint32_t key;
	static char dump[8192];
	struct fp_topology t;
	size_t len;

	memcpy(host3.mac, fx_lan_host_mac, 6);
	memcpy(host1.mac, host1_mac, 6);
	tl_case_begin("topology: a vlan-filtering bridge, its own vlan and one on a vlan device");
	len = put_links(dump, links, 3);
	len += put_br_vlans(dump + len, fx.port_ifindex, port_vlans, 3);
	len += put_br_vlans(dump + len, BRIDGE_IFINDEX, self_vlans, 2);
	len += put_fdb(dump + len, BRIDGE_IFINDEX, fx.port_ifindex, fx_lan_host_mac, 3);
	len += put_fdb(dump + len, BRIDGE_IFINDEX, fx.port_ifindex, host1_mac, 1);
	fake_topology(&t, pppoe_path, "none", dump, len);
	CHECK(topology_sync(&t, &inst, ports, 2) == 1, "the first sync changes the maps");
	CHECK(served(&t, BRIDGE_IFINDEX) && served(&t, fx.lan_ifindex) && t.nr_served == 2,
	      "serves the bridge and br-lan.3 (%d)", t.nr_served);
	CHECK(t.bridge_ports, "untagged frames look up fp_ingress");
	CHECK(!bpf_map_lookup_elem(inst.ingress_fd, &untagged, &got_in) &&
		      got_in.ifindex == BRIDGE_IFINDEX && !memcmp(got_in.mac, fx_lan_mac, 6),
	      "untagged frames (the port's PVID, 1) belong to the bridge");
	CHECK(!bpf_map_lookup_elem(inst.ingress_fd, &tag1, &got_in) &&
		      got_in.ifindex == BRIDGE_IFINDEX,
	      "so do frames tagged 1");
	CHECK(!bpf_map_lookup_elem(inst.ingress_fd, &tag3, &got_in) &&
		      got_in.ifindex == (uint32_t)fx.lan_ifindex,
	      "frames tagged 3 belong to br-lan.3");
	CHECK(bpf_map_lookup_elem(inst.ingress_fd, &tag5, &got_in),
	      "frames tagged 5 (no device takes VLAN 5) belong to no one");
	key = fx.lan_ifindex;
	CHECK(!bpf_map_lookup_elem(inst.egress_fd, &key, &got_eg) &&
		      got_eg.flags == FP_EGRESS_BRIDGE,
	      "br-lan.3 leaves by the bridge's fdb");
	CHECK(!bpf_map_lookup_elem(inst.fdb_fd, &host3, &got_port) &&
		      !memcmp(&got_port, &want3, sizeof(got_port)),
	      "the host learnt in vlan 3 is reached on the port with tag 3");
	CHECK(!bpf_map_lookup_elem(inst.fdb_fd, &host1, &got_port) &&
		      !memcmp(&got_port, &want1, sizeof(got_port)),
	      "the host learnt in vlan 1 is reached on the port untagged");
	CHECK(count_entries(inst.fdb_fd) == 2, "and no other");

	check_lan_host_frames("the host in vlan 3", 3);

	/* The port leaves VLAN 3: its frames and its hosts there are no longer served. */
	len = put_links(dump, links, 3);
	len += put_br_vlans(dump + len, fx.port_ifindex, port_vlans, 1);
	len += put_br_vlans(dump + len, BRIDGE_IFINDEX, self_vlans, 2);
	len += put_fdb(dump + len, BRIDGE_IFINDEX, fx.port_ifindex, fx_lan_host_mac, 3);
	t.link_dump_len = len;
	CHECK(topology_sync(&t, &inst, ports, 2) == 1, "leaving vlan 3 changes the maps");
	CHECK(bpf_map_lookup_elem(inst.ingress_fd, &tag3, &got_in) &&
		      bpf_map_lookup_elem(inst.fdb_fd, &host3, &got_port),
	      "frames tagged 3 and the host in vlan 3 are not served");
	CHECK(!served(&t, fx.lan_ifindex), "nor is br-lan.3");
	topology_close(&t);
	tl_case_end();
}

/* What stays in the kernel: an ambiguous session, an 802.1ad VLAN-filtering bridge, a VLAN on
 * a port the fastpath is not attached to. */
static void test_not_served(const char *pppoe_path)
{
	const struct fake_link links[] = {
		{BRIDGE_IFINDEX, ARPHRD_ETHER, "br-lan", "bridge", 1500, 0, 0, 0, 1,
		 .vlan_protocol = 0x88a8},
		{fx.port_ifindex, ARPHRD_ETHER, "fp_port", NULL, 1500, 0, BRIDGE_IFINDEX},
		{VLAN_IFINDEX, ARPHRD_ETHER, "fp_lan.7", "vlan", 1500, fx.lan_ifindex, 0, 7},
		{fx.wan_ifindex, ARPHRD_PPP, "pppoe-wan", NULL, 1492},
		{fx.lan_ifindex, ARPHRD_PPP, "pppoe-wan2", NULL, 1492},
	};
	uint32_t ports[] = {fx.port_ifindex, fx.wan_ifindex};
	struct fp_instance inst = fake_instance();
	static char dump[8192];
	struct fp_topology t;

	const struct bridge_vlan_info own = {BRIDGE_VLAN_INFO_PVID | BRIDGE_VLAN_INFO_UNTAGGED, 1};
	size_t len;

	tl_case_begin("topology: ambiguous pppoe, 802.1ad vlan-filtering bridge, unattached vlan");
	/* Its port and itself in VLAN 1, which an 802.1Q bridge would serve. */
	len = put_links(dump, links, 5);
	len += put_br_vlans(dump + len, fx.port_ifindex, &own, 1);
	len += put_br_vlans(dump + len, BRIDGE_IFINDEX, &own, 1);
	fake_topology(&t, pppoe_path, "fp_port", dump, len);
	CHECK(topology_sync(&t, &inst, ports, 2) == 0, "nothing to write");
	CHECK(t.nr_served == 0 && !t.bridge_ports, "nothing served");
	CHECK(count_entries(inst.ingress_fd) == 0 && count_entries(inst.egress_fd) == 0,
	      "the maps stay empty");
	topology_close(&t);
	tl_case_end();
}

/* The daemon awaits a deleted port by the name its RTM_DELLINK gives (reattach.c). */
static void test_deleted_link_names(void)
{
	const struct fake_link links[] = {
		{.ifindex = 41, .type = ARPHRD_ETHER, .name = "usb0", .mtu = 1500},
		{.ifindex = 42, .type = ARPHRD_ETHER, .name = "wan-longest-nam", .mtu = 1500},
	};
	char *buf = calloc(1, 8192);
	struct fp_route_cached cache[FP_ROUTE_CACHE_SIZE];
	struct fp_route rt = {.cache = cache};
	struct fp_route_changes changes = {0};
	struct ifinfomsg *ifi;
	struct nlmsghdr *nlh;
	size_t len = 0;

	if (!buf)
		DIE("calloc");
	tl_case_begin("a deleted link's ifindex and name are read from its RTM_DELLINK");
	for (int i = 0; i < 2; i++) {
		nlh = (struct nlmsghdr *)(buf + len);
		len += put_link(buf + len, &links[i]);
		nlh->nlmsg_type = RTM_DELLINK;
	}
	/* One without IFLA_IFNAME: deleted, name unknown. */
	nlh = mnl_nlmsg_put_header(buf + len);
	nlh->nlmsg_type = RTM_DELLINK;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_index = 43;
	len += nlh->nlmsg_len;
	route_watch_parse(&rt, buf, len, &changes);
	CHECK_EQ(changes.nr_deleted, 3, "deleted links");
	CHECK(changes.deleted[0] == 41 && !strcmp(changes.deleted_names[0], "usb0"),
	      "first: %u '%s'", changes.deleted[0], changes.deleted_names[0]);
	CHECK(changes.deleted[1] == 42 && !strcmp(changes.deleted_names[1], "wan-longest-nam"),
	      "second: %u '%s'", changes.deleted[1], changes.deleted_names[1]);
	CHECK(changes.deleted[2] == 43 && !changes.deleted_names[2][0], "third: %u '%s'",
	      changes.deleted[2], changes.deleted_names[2]);
	CHECK(changes.l2_changed && changes.nexthops_changed, "not a change of links");
	tl_case_end();
	free(buf);
}

void test_topology(void)
{
	char path[] = "/tmp/fp-test-pppoe.XXXXXX";
	int fd = mkstemp(path);

	if (fd < 0)
		DIE("mkstemp");
	close(fd);
	test_pppoe_on_vlan(path);
	test_bridge_on_vlan(path);
	test_filtering_bridge(path);
	test_not_served(path);
	test_deleted_link_names();
	unlink(path);
	fx_reset();
}
