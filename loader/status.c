// SPDX-License-Identifier: GPL-2.0-only
/* The status command: interfaces, daemon, heartbeat, flows and counters at a glance. */
#include <errno.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <linux/if_link.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <sys/utsname.h>

#include "commands.h"
#include "common.h"
#include "ctnetlink.h"
#include "daemon.h"
#include "flowmap.h"
#include "hooks.h"
#include "instance.h"
#include "ipsec_watch.h"
#include "kernel.h"
#include "qdisc.h"
#include "reattach.h"
#include "slottable.h"
#include "veth_peer.h"

/* How many fp_fdb entries bridge has: the hosts the fastpath can reach behind it. */
static int bridge_hosts(const struct fp_instance *inst, uint32_t bridge)
{
	struct fp_fdb_key key, *prev = NULL;
	int n = 0;

	while (bpf_map_get_next_key(inst->fdb_fd, prev, &key) == 0) {
		n += key.bridge == bridge;
		prev = &key;
	}
	return n;
}

/*
 * The upper devices the daemon serves (topology.c), one per fp_egress entry: a bridge with
 * its ports (from fp_ingress), a VLAN or a PPPoE session with its port.
 */
/* The ports the daemon attaches again when they come back (reattach.h). */
static void print_awaited(const struct fp_instance *inst, int pid, bool json)
{
	struct fp_awaited_port ports[FP_REATTACH_MAX];
	int n = pid > 0 ? reattach_read(inst, ports, FP_REATTACH_MAX) : 0;

	if (json)
		printf(", \"awaited\": [");
	else if (n)
		printf("awaited    ");
	for (int i = 0; i < n; i++) {
		bool failed = ports[i].failed_ifindex > 0;

		if (json)
			printf("%s{\"name\": \"%s\", \"failed\": %s}", i ? ", " : "", ports[i].name,
			       failed ? "true" : "false");
		else
			printf(" %s (%s)", ports[i].name,
			       failed ? "there, but it failed to attach: see the log"
				      : "attached when it is there and up");
	}
	printf(json ? "]" : n ? "\n" : "");
}

static void print_upper_devices(const struct fp_instance *inst, bool json)
{
	uint32_t upper, *prev = NULL;
	int printed = 0;

	printf(json ? ", \"upper_devices\": [" : "below      ");
	while (bpf_map_get_next_key(inst->egress_fd, prev, &upper) == 0) {
		char name[IF_NAMESIZE], port[IF_NAMESIZE];
		struct fp_egress eg;

		prev = &upper;
		if (bpf_map_lookup_elem(inst->egress_fd, &upper, &eg))
			continue;
		fp_ifname(upper, name);
		fp_ifname(eg.ifindex, port);
		printf(json ? "%s{\"name\": \"%s\", " : "%s %s: ",
		       printed++ ? (json ? ", " : ";") : "", name);
		if (eg.flags & FP_EGRESS_NO_XMIT) {
			printf(json ? "\"kind\": \"port\", \"takes_xdp_frames\": false}"
				    : "cannot take redirected XDP frames now: flows from native "
				      "XDP ports leaving by it stay in the kernel");
		} else if (eg.flags & FP_EGRESS_BRIDGE) {
			struct fp_ingress_key key, *kprev = NULL;
			struct fp_ingress in;
			int nr = 0;

			printf(json ? "\"kind\": \"bridge\", \"ports\": [" : "bridge on");
			while (bpf_map_get_next_key(inst->ingress_fd, kprev, &key) == 0) {
				kprev = &key;
				if (bpf_map_lookup_elem(inst->ingress_fd, &key, &in) ||
				    in.ifindex != upper)
					continue;
				fp_ifname(key.ifindex, port);
				if (key.vlan_id)
					printf(json ? "%s\"%s.%u\"" : "%s %s VLAN %u",
					       nr++ ? "," : "", port, key.vlan_id);
				else
					printf(json ? "%s\"%s\"" : "%s %s", nr++ ? "," : "", port);
			}
			printf(json ? "], \"hosts\": %d}" : " (%d hosts learnt)",
			       bridge_hosts(inst, upper));
		} else {
			unsigned int vlan = ntohs(eg.vlan_tci) & 0xfff;

			if (json)
				printf("\"kind\": \"%s\", \"port\": \"%s\", \"vlan\": %u, "
				       "\"session\": %u}",
				       eg.flags & FP_EGRESS_PPPOE ? "pppoe" : "vlan", port, vlan,
				       ntohs(eg.pppoe_sid));
			else if (eg.flags & FP_EGRESS_PPPOE)
				printf("PPPoE session %#06x on %s", ntohs(eg.pppoe_sid), port);
			else
				printf("VLAN %u on %s", vlan, port);
			if (!json && (eg.flags & FP_EGRESS_PPPOE) && vlan)
				printf(" VLAN %u", vlan);
		}
	}
	printf(json ? "]" : "%s\n", printed ? "" : " none");
}

/*
 * Beside the kernel's own flow offloading (an nft flowtable): the conntrack entries it
 * holds ([OFFLOAD]), and how many of them xdp-fastpath has flows for. Those XDP carries:
 * it sees their packets before the flowtable's ingress hook does.
 */
struct flowtable_count {
	struct fp_tuple *ours; /* the tuples of our flow entries, sorted */
	size_t nr_ours, max_ours;
	uint64_t held, ours_too;
};

static int collect_tuple(int family, const union fp_flow_key *key, const union fp_flow_value *value,
			 void *arg)
{
	struct flowtable_count *fc = arg;
	uint32_t ingress;

	(void)value;
	if (fc->nr_ours == fc->max_ours) {
		size_t max = fc->max_ours ? 2 * fc->max_ours : 1024;
		struct fp_tuple *more = realloc(fc->ours, max * sizeof(*more));

		if (!more)
			return -ENOMEM;
		fc->ours = more;
		fc->max_ours = max;
	}
	fp_key_to_tuple(family, key, &fc->ours[fc->nr_ours++], &ingress);
	return 0;
}

static int tuple_cmp(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct fp_tuple));
}

static void count_flowtable(const struct fp_ct_entry *e, void *data)
{
	struct flowtable_count *fc = data;

	if (!e->has_status || !(e->status & IPS_OFFLOAD) || !e->has_tuple[FP_DIR_ORIG])
		return;
	fc->held++;
	if (fc->nr_ours &&
	    bsearch(&e->tuple[FP_DIR_ORIG], fc->ours, fc->nr_ours, sizeof(*fc->ours), tuple_cmp))
		fc->ours_too++;
}

/* The kernel's IPsec policies, whose connections the daemon leaves to the kernel. */
static void print_ipsec(bool json)
{
	struct fp_ipsec ip;
	int err = ipsec_read(&ip);
	size_t nr = ip.nr;

	ipsec_close(&ip);
	if (json) {
		if (err)
			printf(", \"ipsec_policies\": null");
		else
			printf(", \"ipsec_policies\": %zu", nr);
	} else if (err) {
		printf("ipsec       cannot read the IPsec policies: %s\n", strerror(-err));
	} else if (nr) {
		printf("ipsec       %zu policies: the connections they may take stay in the "
		       "kernel\n",
		       nr);
	}
}

static void print_flowtable(const struct fp_instance *inst, bool json)
{
	struct flowtable_count fc = {0};
	int err = fp_flows_walk(inst, AF_INET, collect_tuple, &fc)
			  ?: fp_flows_walk(inst, AF_INET6, collect_tuple, &fc);

	if (!err) {
		if (fc.nr_ours)
			qsort(fc.ours, fc.nr_ours, sizeof(*fc.ours), tuple_cmp);
		err = fp_ct_dump(count_flowtable, &fc);
	}
	free(fc.ours);
	if (json) {
		if (err)
			printf(", \"kernel_flowtable\": null");
		else
			printf(", \"kernel_flowtable\": {\"connections\": %llu, "
			       "\"carried_by_xdp\": %llu}",
			       (unsigned long long)fc.held, (unsigned long long)fc.ours_too);
	} else if (err) {
		printf("flowtable   cannot read conntrack: %s\n", strerror(-err));
	} else if (fc.held) {
		printf("flowtable   the kernel's flow offloading holds %llu connections: %llu "
		       "carried by xdp-fastpath (its flows come first), %llu by the flowtable\n",
		       (unsigned long long)fc.held, (unsigned long long)fc.ours_too,
		       (unsigned long long)(fc.held - fc.ours_too));
	}
}

/* The running kernel, what the instance does without the features it lacks, and whether
 * its program came out of the JIT. */
static void print_kernel(const struct fp_instance *inst, const struct fp_config *cfg, bool json)
{
	bool jited = fp_prog_jited(inst->prog_fd);
	struct utsname uts;
	int missing = 0;

	if (uname(&uts))
		strcpy(uts.release, "?");
	if (json) {
		printf(", \"kernel\": {\"release\": \"%s\"", uts.release);
		for (int i = 0; i < fp_nr_kernel_features; i++)
			printf(", \"%s\": %s", fp_kernel_features[i].name,
			       cfg->kernel & fp_kernel_features[i].bit ? "true" : "false");
		printf(", \"fallbacks\": [");
		for (int i = 0; i < fp_nr_kernel_features; i++)
			if (!(cfg->kernel & fp_kernel_features[i].bit))
				printf("%s\"%s\"", missing++ ? ", " : "",
				       fp_kernel_features[i].name);
		printf("], \"clock_tick_ns\": %llu, \"jited\": %s}",
		       (unsigned long long)cfg->clock.tick_ns, jited ? "true" : "false");
		return;
	}
	printf("kernel      %s", uts.release);
	for (int i = 0; i < fp_nr_kernel_features; i++) {
		const struct fp_kernel_feature *f = &fp_kernel_features[i];

		/* bpf_jiffies64(), and a clock that fp_kernel_probe() could not measure the tick
		 * of, nor the daemon since (clock.h): the same fallback. */
		if (f->bit == FP_KERNEL_JIFFIES && (cfg->kernel & f->bit) && !cfg->clock.tick_ns) {
			printf("\n  fallback  the jiffies clock has not calibrated yet: %s "
			       "(the daemon tries again)",
			       f->fallback);
			missing++;
			continue;
		}
		if (cfg->kernel & f->bit)
			continue;
		if (f->since)
			printf("\n  fallback  no %s (Linux %s): %s", f->what, f->since,
			       f->fallback);
		else
			printf("\n  fallback  no %s: %s", f->what, f->fallback);
		missing++;
	}
	if (!jited)
		printf("\n  %s", fp_interpreter_note);
	printf("%s\n", missing || !jited ? "" : ", every feature used");
}

/* A veth whose peer turned checksum offload on after attach (attach.c, veth_peer.h). */
static void print_peer_checksum(const struct fp_instance *inst, int ifindex)
{
	struct fp_veth_peer peer;
	char fix[128];

	/* The tc hook keeps partial checksums right. */
	if (fp_veth_peer(ifindex, &peer) != 1 || !peer.tx_checksum ||
	    fp_hook_of(inst, ifindex) == FP_HOOK_TC)
		return;
	fp_veth_peer_ethtool(&peer, "tx off", fix, sizeof(fix));
	printf(" [veth peer %s transmits with checksum offload: its connections stay in the "
	       "kernel; %s]",
	       peer.name, fix);
}

int cmd_status(int argc, char **argv, struct fp_options *opt)
{
	struct fp_daemon_state ds = {0};
	uint64_t stats[FP_STAT_MAX], passed = 0;
	uint32_t ports[FP_MAX_TX_PORTS], v4, v6, zero = 0, max_flows;
	struct fp_instance inst;
	struct fp_config cfg;
	int nr_ports, pid, err;
	double hb_age;

	(void)argv;
	err = fp_command_open("status", argc, opt, &inst);
	if (err)
		return err;
	nr_ports = fp_tx_ports(&inst, ports, FP_MAX_TX_PORTS);
	pid = fp_daemon_pid(&inst);
	fp_read_config(&inst, &cfg);
	fp_read_stats(&inst, stats);
	fp_flows_count(&inst, &v4, &v6);
	bpf_map_lookup_elem(inst.daemon_fd, &zero, &ds);
	max_flows = inst.slots4->capacity; /* --flows, as opening the instance read it */
	for (int i = FP_STAT_PASS_NOT_IP; i < FP_STAT_MAX; i++)
		if (i != FP_STAT_STEERED) /* counted again by its outcome */
			passed += stats[i];
	/* Now, after fp_read_config: taken before, it could precede a heartbeat read there. */
	hb_age = cfg.heartbeat_ns ? (double)fp_elapsed_ns(fp_now_ns(), cfg.heartbeat_ns) / 1e9 : -1;

	if (opt->json) {
		printf("{\"pin_dir\": \"%s\", \"program_id\": %u, \"interfaces\": [", inst.pin_dir,
		       inst.prog_id);
		for (int i = 0; i < nr_ports; i++) {
			char name[IF_NAMESIZE];

			char shaper[FP_QDISC_KIND_LEN];
			bool shaped = fp_shaping_qdisc(ports[i], shaper, sizeof(shaper)) > 0;
			struct fp_veth_peer peer;
			int veth = fp_veth_peer(ports[i], &peer);

			char why[FP_HOOK_WHY_LEN];

			fp_ifname(ports[i], name);
			fp_hook_why(&inst, ports[i], why, sizeof(why));
			printf("%s{\"name\": \"%s\", \"ifindex\": %u, \"mode\": \"%s\", "
			       "\"hook_why\": \"%s\", "
			       "\"shaping\": %s%s%s, \"peer_tx_checksum\": %s}",
			       i ? ", " : "", name, ports[i], fp_hook_describe(&inst, ports[i]),
			       why, shaped ? "\"" : "", shaped ? shaper : "null",
			       shaped ? "\"" : "",
			       veth == 1 ? (peer.tx_checksum ? "true" : "false") : "null");
		}
		printf("], \"daemon_pid\": %d, \"heartbeat_age_s\": %.3f, \"lease_s\": %.3f, "
		       "\"nexthop_generation\": %u, \"flows_ipv4\": %u, \"flows_ipv6\": %u, "
		       "\"max_flows\": %u, \"offloaded\": %llu, \"offload_total\": %llu, "
		       "\"removed_total\": %llu, \"events\": %llu, "
		       "\"overruns\": %llu, \"resyncs\": %llu, \"scans\": %llu, "
		       "\"port_reads\": %llu, \"refreshed\": %llu, "
		       "\"table_full\": %llu, \"errors\": %llu, \"firewall_changes\": %llu, "
		       "\"fenced\": %llu, \"forwarded\": %llu, "
		       "\"forwarded_bytes\": %llu, \"passed\": %llu, \"steer_cpus\": %u, "
		       "\"steered\": %llu",
		       pid, hb_age, (double)cfg.lease_ns / 1e9, cfg.nh_gen, v4, v6, max_flows,
		       (unsigned long long)ds.offloaded, (unsigned long long)ds.offload_total,
		       (unsigned long long)ds.remove_total, (unsigned long long)ds.events,
		       (unsigned long long)ds.overruns, (unsigned long long)ds.resyncs,
		       (unsigned long long)ds.scans, (unsigned long long)ds.port_reads,
		       (unsigned long long)ds.refresh_total, (unsigned long long)ds.table_full,
		       (unsigned long long)ds.errors, (unsigned long long)ds.firewall_changes,
		       (unsigned long long)ds.fenced, (unsigned long long)stats[FP_STAT_FORWARDED],
		       (unsigned long long)stats[FP_STAT_FORWARDED_BYTES],
		       (unsigned long long)passed, cfg.steer_cpus,
		       (unsigned long long)stats[FP_STAT_STEERED]);
		print_awaited(&inst, pid, true);
		print_upper_devices(&inst, true);
		print_flowtable(&inst, true);
		print_ipsec(true);
		print_kernel(&inst, &cfg, true);
		printf("}\n");
		fp_instance_close(&inst);
		return 0;
	}

	printf("instance    %s (program id %u)\n", inst.pin_dir, inst.prog_id);
	print_kernel(&inst, &cfg, false);
	printf("interfaces ");
	for (int i = 0; i < nr_ports; i++) {
		char name[IF_NAMESIZE], shaper[FP_QDISC_KIND_LEN];

		char why[FP_HOOK_WHY_LEN];

		fp_ifname(ports[i], name);
		fp_hook_why(&inst, ports[i], why, sizeof(why));
		printf(" %s (%s%s%s)", name, fp_hook_describe(&inst, ports[i]), why[0] ? ": " : "",
		       why);
		if (fp_shaping_qdisc(ports[i], shaper, sizeof(shaper)) > 0)
			printf(" [shaping qdisc %s: %s]", shaper,
			       ds.flags & FP_DAEMON_ALLOW_SHAPING
				       ? "bypassed by offloaded flows (--allow-shaping)"
				       : "its connections stay in the kernel");
		print_peer_checksum(&inst, ports[i]);
	}
	printf("%s\n", nr_ports ? "" : " none");
	print_awaited(&inst, pid, false);
	if (pid > 0)
		printf("daemon      running, pid %d, %llu scans, %llu reads of the ports' "
		       "configuration\n",
		       pid, (unsigned long long)ds.scans, (unsigned long long)ds.port_reads);
	else
		printf("daemon      not running: traffic is on the kernel path%s\n",
		       cfg.lease_ns ? "" : " (no lease: flows stay offloaded)");
	if (hb_age >= 0)
		printf("heartbeat   %.1f s ago, lease %.1f s%s\n", hb_age,
		       (double)cfg.lease_ns / 1e9,
		       cfg.lease_ns && hb_age > (double)cfg.lease_ns / 1e9 ? " (expired)" : "");
	else
		printf("heartbeat   stopped\n");
	/* Both tables are allocated whole: 64-byte slots, twice as many as entries. */
	printf("flows       %u IPv4, %u IPv6 entries (at most %u each, %.1f MiB a table)\n", v4, v6,
	       max_flows, (double)(inst.slots4->mask + 1) * sizeof(struct fp_slot4) / (1 << 20));
	printf("conntrack   %llu offloaded, %llu events, %llu overruns, %llu resyncs, "
	       "%llu refreshed, %llu table full, %llu errors\n",
	       (unsigned long long)ds.offloaded, (unsigned long long)ds.events,
	       (unsigned long long)ds.overruns, (unsigned long long)ds.resyncs,
	       (unsigned long long)ds.refresh_total, (unsigned long long)ds.table_full,
	       (unsigned long long)ds.errors);
	if (ds.firewall_changes)
		printf("firewall    %llu changes seen; %llu connections kept in the kernel since\n",
		       (unsigned long long)ds.firewall_changes, (unsigned long long)ds.fenced);
	print_upper_devices(&inst, false);
	print_flowtable(&inst, false);
	print_ipsec(false);
	printf("next hops   generation %u\n", cfg.nh_gen);
	if (cfg.steer_cpus) {
		printf("steering    by flow over CPU%s", cfg.steer_cpus > 1 ? "s" : "");
		for (uint32_t slot = 0; slot < cfg.steer_cpus; slot++) {
			uint32_t cpu = 0;

			bpf_map_lookup_elem(inst.steer_fd, &slot, &cpu);
			printf("%s%u", slot ? "," : " ", cpu);
		}
		printf(" (cpumap), %llu packets handed over\n",
		       (unsigned long long)stats[FP_STAT_STEERED]);
	}
	printf("traffic     %llu packets (%llu bytes) forwarded, %llu passed to the kernel\n",
	       (unsigned long long)stats[FP_STAT_FORWARDED],
	       (unsigned long long)stats[FP_STAT_FORWARDED_BYTES], (unsigned long long)passed);
	fp_instance_close(&inst);
	return 0;
}
