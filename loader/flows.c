// SPDX-License-Identifier: GPL-2.0-only
/* The flows and flush commands: the flow maps as operators see them (flowmap.c). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <bpf/bpf.h>

#include "commands.h"
#include "daemon.h"
#include "flowmap.h"
#include "instance.h"

struct print_ctx {
	bool json;
	int printed;
	uint64_t now;
};

static void format_endpoint(int family, const void *addr, uint16_t port_be, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];

	inet_ntop(family, addr, a, sizeof(a));
	snprintf(buf, len, family == AF_INET6 ? "[%s]:%u" : "%s:%u", a, ntohs(port_be));
}

static int print_flow(int family, const union fp_flow_key *key, const union fp_flow_value *value,
		      void *arg)
{
	struct print_ctx *pc = arg;
	const struct fp_flow_meta *meta = family == AF_INET ? &value->v4.meta : &value->v6.meta;
	char src[64], dst[64], nsrc[64], ndst[64], in[IF_NAMESIZE], out[IF_NAMESIZE + 16] = "-";
	struct fp_tuple t;
	uint32_t ingress;
	const void *nat_saddr, *nat_daddr;
	uint16_t nat_sport, nat_dport;
	unsigned long long packets = family == AF_INET ? value->v4.packets : value->v6.packets;
	unsigned long long bytes = family == AF_INET ? value->v4.bytes : value->v6.bytes;
	bool closing = fp_flow_closing(family, key);
	/* To the stamp's precision, about a second. */
	double idle_s = packets ? (double)fp_stamp_age_ns(pc->now, meta->last_seen) / 1e9 : -1;

	fp_key_to_tuple(family, key, &t, &ingress);
	if (family == AF_INET) {
		nat_saddr = &value->v4.nat_saddr;
		nat_daddr = &value->v4.nat_daddr;
		nat_sport = value->v4.nat_sport;
		nat_dport = value->v4.nat_dport;
	} else {
		nat_saddr = value->v6.nat_saddr;
		nat_daddr = value->v6.nat_daddr;
		nat_sport = value->v6.nat_sport;
		nat_dport = value->v6.nat_dport;
	}
	/* The translated tuple: what leaves the router. */
	format_endpoint(family, t.src, t.sport, src, sizeof(src));
	format_endpoint(family, t.dst, t.dport, dst, sizeof(dst));
	format_endpoint(family, meta->flags & FP_FLOW_SNAT ? nat_saddr : (const void *)t.src,
			meta->flags & FP_FLOW_SNAT ? nat_sport : t.sport, nsrc, sizeof(nsrc));
	format_endpoint(family, meta->flags & FP_FLOW_DNAT ? nat_daddr : (const void *)t.dst,
			meta->flags & FP_FLOW_DNAT ? nat_dport : t.dport, ndst, sizeof(ndst));
	fp_ifname(ingress, in);
	if (meta->nh_gen)
		fp_ifname(meta->oif, out);
	/* What the datapath pushes on the port: a VLAN tag, a PPPoE session. */
	unsigned int out_vlan =
		meta->nh_gen && (meta->flags & FP_ENCAP_VLAN) ? ntohs(meta->vlan_tci) & 0xfff : 0;
	unsigned int out_session =
		meta->nh_gen && (meta->flags & FP_ENCAP_PPPOE) ? ntohs(meta->pppoe_sid) : 0;

	if (pc->json) {
		printf("%s\n    {\"proto\": \"%s\", \"in\": \"%s\", \"src\": \"%s\", \"dst\": "
		       "\"%s\", "
		       "\"out\": \"%s\", \"nat_src\": \"%s\", \"nat_dst\": \"%s\", \"snat\": %s, "
		       "\"dnat\": %s, \"packets\": %llu, \"bytes\": %llu, \"idle_s\": %.0f, "
		       "\"closing\": %s, \"out_vlan\": %u, \"out_pppoe_session\": %u}",
		       pc->printed ? "," : "", t.proto == IPPROTO_TCP ? "tcp" : "udp", in, src, dst,
		       out, nsrc, ndst, meta->flags & FP_FLOW_SNAT ? "true" : "false",
		       meta->flags & FP_FLOW_DNAT ? "true" : "false", packets, bytes, idle_s,
		       closing ? "true" : "false", out_vlan, out_session);
	} else {
		char idle[32] = "never";

		if (idle_s >= 0)
			snprintf(idle, sizeof(idle), "%.0fs", idle_s);
		if (out_vlan || out_session) {
			size_t n = strlen(out);

			if (out_vlan)
				n += snprintf(out + n, sizeof(out) - n, ".%u", out_vlan);
			if (out_session)
				snprintf(out + n, sizeof(out) - n, "+pppoe");
		}
		printf("%-3s %-8s %s -> %s  =>  %-8s %s -> %s  %llu pkts %llu bytes idle %s%s\n",
		       t.proto == IPPROTO_TCP ? "tcp" : "udp", in, src, dst, out, nsrc, ndst,
		       packets, bytes, idle, closing ? " closing" : "");
	}
	pc->printed++;
	return 0;
}

int cmd_flows(int argc, char **argv, struct fp_options *opt)
{
	struct print_ctx pc = {.json = opt->json, .now = fp_now_ns()};
	struct fp_instance inst;
	int err;

	(void)argv;
	err = fp_command_open("flows", argc, opt, &inst);
	if (err)
		return err;
	if (pc.json)
		printf("[");
	else
		printf("%-3s %-8s %s  =>  %-8s %s\n", "", "in", "tuple in", "out", "tuple out");
	fp_flows_walk(&inst, AF_INET, print_flow, &pc);
	fp_flows_walk(&inst, AF_INET6, print_flow, &pc);
	if (pc.json)
		printf("%s]\n", pc.printed ? "\n" : "");
	fp_instance_close(&inst);
	return 0;
}

/* Empties the flow maps; the daemon, told by SIGHUP, offloads again from a fresh dump. */
int cmd_flush(int argc, char **argv, struct fp_options *opt)
{
	struct fp_instance inst;
	uint32_t deleted;
	int pid, err;

	(void)argv;
	err = fp_command_open("flush", argc, opt, &inst);
	if (err)
		return err;
	pid = fp_daemon_pid(&inst);
	deleted = fp_flows_delete_all(&inst);
	if (pid > 0)
		kill(pid, SIGHUP);
	printf("flushed %u flow entries\n", deleted);
	fp_instance_close(&inst);
	return 0;
}
