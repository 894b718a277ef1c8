// SPDX-License-Identifier: GPL-2.0-only
/* The flow maps from userspace, and the flows and flush commands. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <bpf/bpf.h>

#include "flows.h"

#define WALK_CHUNK 1024

static int map_fd(const struct fp_instance *inst, int family)
{
	return family == AF_INET ? inst->flows4_fd : inst->flows6_fd;
}

void fp_tuple_to_key(const struct fp_tuple *t, uint32_t ingress, union fp_flow_key *key)
{
	memset(key, 0, sizeof(*key));
	if (t->family == AF_INET) {
		key->v4.ifindex = ingress;
		key->v4.saddr = t->src[0];
		key->v4.daddr = t->dst[0];
		key->v4.sport = t->sport;
		key->v4.dport = t->dport;
		key->v4.proto = t->proto;
	} else {
		key->v6.ifindex = ingress;
		memcpy(key->v6.saddr, t->src, 16);
		memcpy(key->v6.daddr, t->dst, 16);
		key->v6.sport = t->sport;
		key->v6.dport = t->dport;
		key->v6.proto = t->proto;
	}
}

void fp_key_to_tuple(int family, const union fp_flow_key *key, struct fp_tuple *t,
		     uint32_t *ingress)
{
	memset(t, 0, sizeof(*t));
	t->family = family;
	if (family == AF_INET) {
		*ingress = key->v4.ifindex;
		t->proto = key->v4.proto;
		t->src[0] = key->v4.saddr;
		t->dst[0] = key->v4.daddr;
		t->sport = key->v4.sport;
		t->dport = key->v4.dport;
	} else {
		*ingress = key->v6.ifindex;
		t->proto = key->v6.proto;
		memcpy(t->src, key->v6.saddr, 16);
		memcpy(t->dst, key->v6.daddr, 16);
		t->sport = key->v6.sport;
		t->dport = key->v6.dport;
	}
}

int fp_flow_insert(const struct fp_instance *inst, int family, const union fp_flow_key *key,
		   const union fp_flow_value *value)
{
	return bpf_map_update_elem(map_fd(inst, family), key, value, BPF_NOEXIST) ? -errno : 0;
}

int fp_flow_delete(const struct fp_instance *inst, int family, const union fp_flow_key *key)
{
	return bpf_map_delete_elem(map_fd(inst, family), key) ? -errno : 0;
}

/* Entry by entry, for kernels or maps without batch lookups. */
static int walk_by_key(int fd, int family, size_t key_size,
		       int (*fn)(int, const union fp_flow_key *, const union fp_flow_value *,
				 void *),
		       void *arg)
{
	union fp_flow_key key, next;
	union fp_flow_value value;
	void *prev = NULL;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		memcpy(&key, &next, key_size);
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &value) == 0 && fn(family, &key, &value, arg))
			return 1;
	}
	return 0;
}

int fp_flows_walk(const struct fp_instance *inst, int family,
		  int (*fn)(int family, const union fp_flow_key *key,
			    const union fp_flow_value *value, void *arg),
		  void *arg)
{
	size_t key_size =
		family == AF_INET ? sizeof(struct fp_flow_key4) : sizeof(struct fp_flow_key6);
	size_t value_size = family == AF_INET ? sizeof(struct fp_flow4) : sizeof(struct fp_flow6);
	int fd = map_fd(inst, family);
	uint8_t *keys, *values;
	uint64_t batch_in, batch_out;
	void *in = NULL;
	int err = 0;

	if (fd < 0)
		return -EBADF;
	keys = malloc(key_size * WALK_CHUNK);
	values = malloc(value_size * WALK_CHUNK);
	if (!keys || !values) {
		free(keys);
		free(values);
		return -ENOMEM;
	}
	for (;;) {
		LIBBPF_OPTS(bpf_map_batch_opts, opts);
		uint32_t count = WALK_CHUNK;
		union fp_flow_key key;
		union fp_flow_value value;

		err = bpf_map_lookup_batch(fd, in, &batch_out, keys, values, &count, &opts);
		if (err && errno != ENOENT) {
			err = -errno;
			if (!in && (err == -EINVAL || err == -EOPNOTSUPP || err == -ENOTSUP))
				err = walk_by_key(fd, family, key_size, fn, arg);
			break;
		}
		for (uint32_t i = 0; i < count; i++) {
			memcpy(&key, keys + i * key_size, key_size);
			memcpy(&value, values + i * value_size, value_size);
			if (fn(family, &key, &value, arg)) {
				err = 0;
				goto out;
			}
		}
		if (err) { /* ENOENT: that was the last batch */
			err = 0;
			break;
		}
		batch_in = batch_out;
		in = &batch_in;
	}
out:
	free(keys);
	free(values);
	return err;
}

struct delete_ctx {
	const struct fp_instance *inst;
	uint32_t ifindex; /* 0: every entry */
	uint32_t deleted;
};

static int delete_matching(int family, const union fp_flow_key *key,
			   const union fp_flow_value *value, void *arg)
{
	struct delete_ctx *dc = arg;
	uint32_t ingress = family == AF_INET ? key->v4.ifindex : key->v6.ifindex;
	const struct fp_flow_meta *meta = family == AF_INET ? &value->v4.meta : &value->v6.meta;

	if (dc->ifindex && ingress != dc->ifindex && !(meta->nh_gen && meta->oif == dc->ifindex))
		return 0;
	if (fp_flow_delete(dc->inst, family, key) == 0)
		dc->deleted++;
	return 0;
}

/*
 * Removes every entry arriving on, or cached as leaving through, ifindex; with ifindex 0,
 * every entry. Returns how many were removed.
 */
uint32_t fp_flows_delete_ifindex(const struct fp_instance *inst, uint32_t ifindex)
{
	struct delete_ctx dc = {.inst = inst, .ifindex = ifindex};

	fp_flows_walk(inst, AF_INET, delete_matching, &dc);
	fp_flows_walk(inst, AF_INET6, delete_matching, &dc);
	return dc.deleted;
}

static int count_one(int family, const union fp_flow_key *key, const union fp_flow_value *value,
		     void *arg)
{
	(void)family;
	(void)key;
	(void)value;
	(*(uint32_t *)arg)++;
	return 0;
}

int fp_flows_count(const struct fp_instance *inst, uint32_t *v4, uint32_t *v6)
{
	*v4 = *v6 = 0;
	fp_flows_walk(inst, AF_INET, count_one, v4);
	fp_flows_walk(inst, AF_INET6, count_one, v6);
	return 0;
}

/* The flows command */

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
	double idle_s =
		meta->last_seen_ns ? (double)fp_elapsed_ns(pc->now, meta->last_seen_ns) / 1e9 : -1;

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
		meta->nh_gen && (meta->encap & FP_ENCAP_VLAN) ? ntohs(meta->vlan_tci) & 0xfff : 0;
	unsigned int out_session =
		meta->nh_gen && (meta->encap & FP_ENCAP_PPPOE) ? ntohs(meta->pppoe_sid) : 0;

	if (pc->json) {
		printf("%s\n    {\"proto\": \"%s\", \"in\": \"%s\", \"src\": \"%s\", \"dst\": "
		       "\"%s\", "
		       "\"out\": \"%s\", \"nat_src\": \"%s\", \"nat_dst\": \"%s\", \"snat\": %s, "
		       "\"dnat\": %s, \"packets\": %llu, \"bytes\": %llu, \"idle_s\": %.3f, "
		       "\"closing\": %s, \"out_vlan\": %u, \"out_pppoe_session\": %u}",
		       pc->printed ? "," : "", t.proto == IPPROTO_TCP ? "tcp" : "udp", in, src, dst,
		       out, nsrc, ndst, meta->flags & FP_FLOW_SNAT ? "true" : "false",
		       meta->flags & FP_FLOW_DNAT ? "true" : "false",
		       (unsigned long long)meta->packets, (unsigned long long)meta->bytes, idle_s,
		       meta->flags & FP_FLOW_CLOSING ? "true" : "false", out_vlan, out_session);
	} else {
		char idle[32] = "never";

		if (idle_s >= 0)
			snprintf(idle, sizeof(idle), "%.1fs", idle_s);
		if (out_vlan || out_session) {
			size_t n = strlen(out);

			if (out_vlan)
				n += snprintf(out + n, sizeof(out) - n, ".%u", out_vlan);
			if (out_session)
				snprintf(out + n, sizeof(out) - n, "+pppoe");
		}
		printf("%-3s %-8s %s -> %s  =>  %-8s %s -> %s  %llu pkts %llu bytes idle %s%s\n",
		       t.proto == IPPROTO_TCP ? "tcp" : "udp", in, src, dst, out, nsrc, ndst,
		       (unsigned long long)meta->packets, (unsigned long long)meta->bytes, idle,
		       meta->flags & FP_FLOW_CLOSING ? " closing" : "");
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
	deleted = fp_flows_delete_ifindex(&inst, 0);
	if (pid > 0)
		kill(pid, SIGHUP);
	printf("flushed %u flow entries\n", deleted);
	fp_instance_close(&inst);
	return 0;
}
