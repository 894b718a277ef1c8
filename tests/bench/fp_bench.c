// SPDX-License-Identifier: GPL-2.0-only
/*
 * fp-bench: the benchmark's helper (see run.sh). Run it inside the right network namespace
 * with nsenter --net, so that its pins in PINDIR stay visible to the next call.
 *
 *   fp-bench sink PINDIR IFACE                 attach the counting sink to IFACE
 *   fp-bench pass PINDIR IFACE 0|1             the sink drops (0) or passes up (1) frames
 *   fp-bench count PINDIR IFACE                IP frames the sink (or ceiling) saw
 *   fp-bench ceiling PINDIR IN OUT DMAC SMAC   bare redirect IN -> OUT with new MACs
 *   fp-bench detach PINDIR IFACE               remove what was attached to IFACE
 *   fp-bench gen IFACE FLOWS PACKETS SECONDS DMAC SMAC SADDR DADDR [PACE_US [DPORT_BASE
 *                [MIX]]]
 *        send UDP frames over FLOWS flows from IFACE (XDP_TX of live frames), until
 *        PACKETS were sent (0: no limit) or SECONDS passed; prints "sent N in T s". IPv4
 *        or IPv6 as SADDR and DADDR are; 64 bytes on the wire with the FCS for IPv4, and
 *        68 for IPv6, whose UDP header ends at byte 62 (the smallest frame with a payload
 *        of an even length, over which the generator sums the checksum IPv6 requires).
 *        With PACE_US (0: none), 64 frames at a time with that pause between: for
 *        establishing flows, whose replies must not overflow the veth rings on the way back.
 *        Where the kernel refuses live frames (EPERM on some hardened builds; before
 *        5.18), paced frames go out through a packet socket instead, and others fail.
 *        MIX "rr" (the default) sends to each flow in turn, the worst case for caches;
 *        "zipf", traffic more like a router's: trains of 8 to 32 packets, each of a flow
 *        drawn by Zipf popularity (make_mix()).
 *   fp-bench ct-burst N SADDR DADDR DPORT NATADDR [PINDIR]
 *        create N conntrack entries at once through ctnetlink, as if N masqueraded UDP
 *        conversations SADDR+k:sport -> DADDR:DPORT+k (reply to NATADDR:sport) had all been
 *        answered at the same moment; prints "created N in T s". IPv6 addresses and
 *        NATADDR "-": routed conversations, their replies to SADDR+k. The daemon sees one NEW
 *        event per entry, already offloadable (a real connection sends a NEW and then an
 *        UPDATE event), so this measures its event-to-map-entry rate. With the instance's
 *        PINDIR, it then polls the daemon's counters every millisecond and prints
 *        "offloaded N in T s" (T from the first entry created).
 *   fp-bench map-memory N KEY_SIZE VALUE_SIZE
 *        the kernel memory a hash map like the flow maps (BPF_F_NO_PREALLOC) takes per
 *        entry as allocated, not as accounted: the growth of the slab objects in use
 *        (/proc/slabinfo) from inserting N entries into an empty map, divided by N; prints
 *        "bytes_per_entry B".
 *        The bucket array is allocated with the map, before the first reading.
 *   fp-bench lookup-chase N
 *        ns per lookup of an entry that is not in the cache, in a table of N entries: the
 *        kernel's hash map as the flow maps use it, and a table of 64-byte slots (2N
 *        slots, open addressing: key and value in one cache line); chase.bpf.c says how.
 *        Prints "htab_ns X slots_ns Y in_first_slot P% longest_probe L" (the share of
 *        keys in the slot their hash names, and the most slots a lookup reads). Needs
 *        bpf_loop (Linux 5.17).
 *   fp-bench lookup-chase6 N
 *        the same at the IPv6 flow map's sizes (a 40-byte key, an 80-byte value), against
 *        a table of 128-byte slots (two cache lines each; 2N of them).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <linux/if_link.h>
#include <linux/if_packet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack.h>

#include "../ctmsg.h"
#include "bench.h"
#include "xdp_fastpath.h"
#include "bench.skel.h"
#include "chase.h"
#include "chase.skel.h"

#define FRAME_LEN  60 /* 64 bytes on the wire with the FCS */
#define FRAME6_LEN 64 /* IPv6: a UDP header ends at 62, and two bytes of payload */
#define GEN_REPEAT (1 << 16)
#define PACED_BATCH 64 /* frames at a time with PACE_US */

static int die(const char *what)
{
	fprintf(stderr, "fp-bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int ifindex_of(const char *name)
{
	int ifindex = if_nametoindex(name);

	if (!ifindex)
		die(name);
	return ifindex;
}

static void parse_mac(const char *s, __u8 *mac)
{
	if (sscanf(s, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &mac[0], &mac[1], &mac[2], &mac[3], &mac[4],
		   &mac[5]) != 6) {
		fprintf(stderr, "fp-bench: bad MAC address %s\n", s);
		exit(2);
	}
}

static void pin_path(char *buf, const char *dir, const char *iface, const char *what)
{
	snprintf(buf, PATH_MAX, "%s/%s_%s", dir, iface, what); /* bpffs: no dots */
}

/* Attaches prog to iface in native mode and pins link, config and counter. */
static struct bench *attach(const char *dir, const char *iface, int which)
{
	struct bench *skel = bench__open_and_load();
	struct bpf_program *prog;
	struct bpf_link *link;
	char path[PATH_MAX];

	if (!skel)
		die("loading the benchmark programs");
	prog = which ? skel->progs.xdp_redirect : skel->progs.xdp_sink;
	link = bpf_program__attach_xdp(prog, ifindex_of(iface));
	if (!link)
		die(iface);
	mkdir(dir, 0700);
	pin_path(path, dir, iface, "link");
	if (bpf_link__pin(link, path))
		die(path);
	pin_path(path, dir, iface, "cfg");
	if (bpf_map__pin(skel->maps.bench_cfg, path))
		die(path);
	pin_path(path, dir, iface, "count");
	if (bpf_map__pin(skel->maps.bench_count, path))
		die(path);
	return skel;
}

static int open_pin(const char *dir, const char *iface, const char *what)
{
	char path[PATH_MAX];
	int fd;

	pin_path(path, dir, iface, what);
	fd = bpf_obj_get(path);
	if (fd < 0)
		die(path);
	return fd;
}

static unsigned long long count(const char *dir, const char *iface)
{
	int fd = open_pin(dir, iface, "count"), nr_cpus = libbpf_num_possible_cpus();
	unsigned long long total = 0, values[nr_cpus];
	__u32 zero = 0;

	if (bpf_map_lookup_elem(fd, &zero, values))
		die("count");
	for (int i = 0; i < nr_cpus; i++)
		total += values[i];
	return total;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* xorshift64: the mix is the same in every run. */
static uint64_t mix_random(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

/*
 * Writes into seq (BENCH_SEQ_MAX packets) a mix like a router's traffic: flows drawn by
 * Zipf popularity with exponent 1 (the k-th most popular flow has 1/k of the first one's
 * trains), each sending a train of 8 to 32 packets in a row, as a TCP window or a burst
 * of video does. Popularity ranks map to flows by a fixed shuffle, so that the popular
 * flows are spread over the ports rather than the first ones. Returns its length.
 */
static __u32 make_mix(__u32 *seq, __u32 nr_flows)
{
	double *cdf = malloc(nr_flows * sizeof(*cdf)), sum = 0;
	__u32 *flow_of_rank = malloc(nr_flows * sizeof(*flow_of_rank)), len = 0;
	uint64_t state = 0x9e3779b97f4a7c15ull;

	if (!cdf || !flow_of_rank)
		die("memory for the mix");
	for (__u32 k = 0; k < nr_flows; k++) {
		sum += 1.0 / (k + 1);
		cdf[k] = sum;
		flow_of_rank[k] = k;
	}
	for (__u32 k = nr_flows - 1; k > 0; k--) {
		__u32 j = mix_random(&state) % (k + 1), t = flow_of_rank[k];

		flow_of_rank[k] = flow_of_rank[j];
		flow_of_rank[j] = t;
	}
	while (len < BENCH_SEQ_MAX) {
		double u = (double)(mix_random(&state) >> 11) / (1ull << 53) * sum;
		__u32 lo = 0, hi = nr_flows - 1, train = 8 + mix_random(&state) % 25;

		while (lo < hi) { /* the first rank whose cumulative weight reaches u */
			__u32 mid = lo + (hi - lo) / 2;

			if (cdf[mid] < u)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (__u32 i = 0; i < train && len < BENCH_SEQ_MAX; i++)
			seq[len++] = flow_of_rank[lo];
	}
	free(cdf);
	free(flow_of_rank);
	return len;
}

/* A packet socket that sends on interface @ifindex. */
static int packet_socket(int ifindex)
{
	struct sockaddr_ll ll = {.sll_family = AF_PACKET, .sll_ifindex = ifindex};
	int sock = socket(AF_PACKET, SOCK_RAW, 0); /* 0: it receives nothing */

	if (sock < 0 || bind(sock, (struct sockaddr *)&ll, sizeof(ll)))
		die("packet socket");
	return sock;
}

/*
 * Where the kernel refuses live frames, paced frames (those that establish flows) are
 * built one at a time by the generator in a plain test run, and sent through @sock: the
 * same frames, at a system call a frame, which is no way to measure a rate.
 */
static void send_built(int prog_fd, const struct xdp_md *ctx, const __u8 *frame, __u32 frame_len,
		       unsigned int count, int sock)
{
	__u8 out[PACED_BATCH][FRAME6_LEN];
	struct iovec iov[PACED_BATCH];
	struct mmsghdr msg[PACED_BATCH] = {};
	unsigned int done = 0;

	for (unsigned int i = 0; i < count; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = frame, .data_size_in = frame_len,
			    .data_out = out[i], .data_size_out = sizeof(out[i]), .ctx_in = ctx,
			    .ctx_size_in = sizeof(*ctx));

		if (bpf_prog_test_run_opts(prog_fd, &opts))
			die("BPF_PROG_TEST_RUN of the generator");
		if (opts.retval != XDP_TX) {
			fprintf(stderr, "fp-bench: the generator returned %u\n", opts.retval);
			exit(1);
		}
		iov[i] = (struct iovec){.iov_base = out[i], .iov_len = opts.data_size_out};
		msg[i].msg_hdr.msg_iov = &iov[i];
		msg[i].msg_hdr.msg_iovlen = 1;
	}
	while (done < count) {
		int n = sendmmsg(sock, msg + done, count - done, 0);

		if (n < 0)
			die("sending through the packet socket");
		done += n;
	}
}

static int generate(char **argv)
{
	struct bench *skel = bench__open_and_load();
	struct bench_cfg cfg = {.nr_flows = strtoul(argv[1], NULL, 0)};
	unsigned long long limit = strtoull(argv[2], NULL, 0), sent = 0;
	double seconds = atof(argv[3]), start;
	unsigned int pace_us = argv[8] ? strtoul(argv[8], NULL, 0) : 0;

	cfg.dport_base = argv[8] && argv[9] ? strtoul(argv[9], NULL, 0) : 0;
	__u8 frame[FRAME6_LEN] = {0};
	__u32 zero = 0, frame_len = FRAME_LEN;

	if (!skel)
		die("loading the generator");
	parse_mac(argv[4], cfg.dmac);
	parse_mac(argv[5], cfg.smac);
	cfg.ipv6 = strchr(argv[6], ':') != NULL;
	if (cfg.ipv6) {
		frame_len = FRAME6_LEN;
		if (inet_pton(AF_INET6, argv[6], cfg.saddr6) != 1 ||
		    inet_pton(AF_INET6, argv[7], cfg.daddr6) != 1)
			die("addresses");
	} else if (inet_pton(AF_INET, argv[6], &cfg.saddr) != 1 ||
		   inet_pton(AF_INET, argv[7], &cfg.daddr) != 1) {
		die("addresses");
	}
	if (argv[8] && argv[9] && argv[10] && strcmp(argv[10], "rr")) {
		size_t size = (size_t)BENCH_SEQ_MAX * sizeof(__u32);
		__u32 *seq = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED,
				  bpf_map__fd(skel->maps.bench_seq), 0);

		if (strcmp(argv[10], "zipf") || !cfg.nr_flows)
			die("the mix: rr or zipf");
		if (seq == MAP_FAILED)
			die("mapping the mix");
		cfg.seq_len = make_mix(seq, cfg.nr_flows);
		munmap(seq, size);
	}
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.bench_cfg), &zero, &cfg, 0))
		die("generator config");

	struct xdp_md ctx = {.data_end = frame_len, .ingress_ifindex = ifindex_of(argv[0])};
	int prog_fd = bpf_program__fd(skel->progs.xdp_gen), sock = -1;

	start = now_s();
	while ((!limit || sent < limit) && now_s() - start < seconds) {
		unsigned long long batch = pace_us ? PACED_BATCH : GEN_REPEAT;

		if (limit && limit - sent < batch)
			batch = limit - sent;
		LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = frame, .data_size_in = frame_len,
			    .ctx_in = &ctx, .ctx_size_in = sizeof(ctx), .repeat = batch,
			    .flags = BPF_F_TEST_XDP_LIVE_FRAMES, .batch_size = 64);

		if (sock >= 0) {
			send_built(prog_fd, &ctx, frame, frame_len, batch, sock);
		} else if (bpf_prog_test_run_opts(prog_fd, &opts)) {
			/* Refused: EPERM on some hardened kernels, EINVAL before 5.18. */
			if (!pace_us || (errno != EPERM && errno != EINVAL && errno != EOPNOTSUPP))
				die("BPF_PROG_TEST_RUN live frames (BPF_F_TEST_XDP_LIVE_FRAMES)");
			fprintf(stderr,
				"fp-bench: the kernel refuses live frames (%s): paced "
				"frames go out through a packet socket\n",
				strerror(errno));
			sock = packet_socket(ctx.ingress_ifindex);
			continue;
		}
		sent += batch;
		if (pace_us)
			usleep(pace_us);
	}
	printf("sent %llu in %.3f s\n", sent, now_s() - start);
	if (sock >= 0)
		close(sock);
	bench__destroy(skel);
	return 0;
}

#define BURST_BATCH 64 /* messages per sendto(): the kernel handles them one by one */

static int ct_burst(char **argv, const char *pin_dir)
{
	char path[PATH_MAX];
	int daemon_fd = -1;
	__u64 offloaded0 = 0;

	if (pin_dir) {
		snprintf(path, sizeof(path), "%s/" FP_NAME(FP_MAP_DAEMON), pin_dir);
		daemon_fd = bpf_obj_get(path);
		if (daemon_fd < 0)
			return die(path);
	}
	uint32_t n = strtoul(argv[0], NULL, 0);
	uint16_t dport_base = htons(atoi(argv[3]));
	int family = strchr(argv[1], ':') ? AF_INET6 : AF_INET;
	/* Addresses as 32-bit words in network order: IPv4's one, IPv6's four, the last of
	 * the source's counting the conversations' sources. */
	uint32_t saddr[4], daddr[4], nat[4], src[4];
	bool routed = !strcmp(argv[4], "-");
	int last = family == AF_INET6 ? 3 : 0;

	if (inet_pton(family, argv[1], saddr) != 1 || inet_pton(family, argv[2], daddr) != 1 ||
	    (!routed && inet_pton(family, argv[4], nat) != 1)) {
		fprintf(stderr, "fp-bench: ct-burst: addresses of one family, NATADDR or -\n");
		exit(2);
	}
	struct mnl_socket *nl = mnl_socket_open(NETLINK_NETFILTER);
	static char buf[BURST_BATCH * 512], reply[8192];
	uint32_t created = 0, failed = 0;
	double start;

	if (!nl || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID))
		return die("netlink");
	memcpy(src, saddr, sizeof(src));
	if (daemon_fd >= 0) {
		struct fp_daemon_state st;
		__u32 zero = 0;

		if (bpf_map_lookup_elem(daemon_fd, &zero, &st))
			return die(FP_NAME(FP_MAP_DAEMON));
		offloaded0 = st.offloaded;
	}
	start = now_s();
	while (created < n) {
		size_t len = 0;

		for (int b = 0; b < BURST_BATCH && created < n; b++, created++) {
			/* BENCH_PORTS_PER_DPORT source ports per source address and server
			 * port: the reply tuples (server -> NATADDR:sport) must differ too */
			uint16_t sport = BENCH_SPORT_BASE + created % BENCH_PORTS_PER_DPORT;

			src[last] = htonl(ntohl(saddr[last]) + created / BENCH_PORTS_PER_DPORT);
			struct ct_msg m = {
				.family = family,
				.proto = IPPROTO_UDP,
				.src = src,
				.dst = daddr,
				.reply_dst = routed ? src : nat,
				.sport = sport,
				.dport = ntohs(dport_base) + created / BENCH_PORTS_PER_DPORT,
				.reply_dport = sport,
				.status = IPS_SEEN_REPLY | IPS_ASSURED,
				.timeout = 600,
				.tcp_state = -1,
			};
			size_t msg_len =
				ct_msg_put(buf + len, IPCTNL_MSG_CT_NEW,
					   NLM_F_REQUEST | NLM_F_CREATE | NLM_F_EXCL, created, &m);

			if (!msg_len)
				return die("a conntrack message");
			len += msg_len;
		}
		if (mnl_socket_sendto(nl, buf, len) < 0)
			return die("sendto");
		/* Failures come back as error messages (no ACKs were asked for). */
		while (recv(mnl_socket_get_fd(nl), reply, sizeof(reply), MSG_DONTWAIT) > 0)
			failed++;
	}
	printf("created %u in %.3f s (%u error replies)\n", n - failed, now_s() - start, failed);
	mnl_socket_close(nl);
	if (daemon_fd >= 0) {
		/* The daemon publishes its counters after each batch of events it applied. */
		struct fp_daemon_state st = {0};
		__u32 zero = 0;

		while (now_s() - start < 120) {
			if (bpf_map_lookup_elem(daemon_fd, &zero, &st))
				return die(FP_NAME(FP_MAP_DAEMON));
			if (st.offloaded >= offloaded0 + n - failed)
				break;
			usleep(1000);
		}
		printf("offloaded %llu in %.3f s, overruns %llu, resyncs %llu\n",
		       (unsigned long long)(st.offloaded - offloaded0), now_s() - start,
		       (unsigned long long)st.overruns, (unsigned long long)st.resyncs);
	}
	return failed ? 1 : 0;
}

/* The kernel's slab objects in use, in bytes: the sum of active objects times their size
 * over /proc/slabinfo, so that objects put into slabs already there count too. */
static long long slab_bytes(void)
{
	FILE *f = fopen("/proc/slabinfo", "r");
	long long total = 0, active, size;
	char line[512], name[64];

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %lld %*d %lld", name, &active, &size) == 3)
			total += active * size;
	fclose(f);
	return total;
}

static int map_memory(char **argv)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_NO_PREALLOC);
	uint32_t n = strtoul(argv[0], NULL, 0), key_size = strtoul(argv[1], NULL, 0),
		 value_size = strtoul(argv[2], NULL, 0);
	uint8_t key[64] = {0}, value[128] = {0};
	long long before, after;
	int fd;

	if (!n || key_size < sizeof(n) || key_size > sizeof(key) || value_size > sizeof(value))
		return die("map-memory: sizes");
	fd = bpf_map_create(BPF_MAP_TYPE_HASH, "fp_bench_mem", key_size, value_size, n, &opts);
	if (fd < 0)
		return die("map-memory: map");
	sleep(2); /* for maps freed just before (after an RCU grace period) to be gone */
	before = slab_bytes();
	for (uint32_t i = 0; i < n; i++) {
		memcpy(key, &i, sizeof(i));
		if (bpf_map_update_elem(fd, key, value, BPF_NOEXIST))
			return die("map-memory: insert");
	}
	after = slab_bytes();
	printf("bytes_per_entry %.1f\n", (double)(after - before) / n);
	close(fd);
	return 0;
}

/* Runs @prog_fd, whose every run makes CHASE_STEPS lookups; ns per lookup. */
static double chase_ns(int prog_fd, uint32_t runs)
{
	uint8_t frame[FRAME_LEN] = {0};
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = frame, .data_size_in = sizeof(frame),
		    .repeat = runs);

	if (bpf_prog_test_run_opts(prog_fd, &opts) || opts.retval != XDP_PASS)
		die("lookup-chase: a run lost its way");
	return (double)opts.duration / CHASE_STEPS;
}

/* What lookup-chase needs to know of one family's tables. */
struct chase_shape {
	struct bpf_map *htab, *slots;
	struct bpf_program *htab_run, *slots_run;
	size_t key_size, value_size, slot_size; /* a slot: the key, then the value's next */
	void (*key_of)(uint32_t i, void *key);
	uint32_t (*hash)(const void *key);
};

static void chase4_key_of(uint32_t i, void *key)
{
	chase_key_of(i, key);
}

static uint32_t chase4_hash(const void *key)
{
	return chase_hash(key);
}

static void chase6_key_of(uint32_t i, void *key)
{
	chase_key6_of(i, key);
}

static uint32_t chase6_hash(const void *key)
{
	return chase_hash6(key);
}

/* Fills both tables of @shape with the same @n keys, linked in one random cycle, and
 * prints what a lookup costs in each. */
static int lookup_chase_shape(uint32_t n, uint32_t slots, const struct chase_shape *shape)
{
	uint32_t *next, first_slot = 0, longest = 0;
	size_t key_size = shape->key_size, slot_size = shape->slot_size;
	uint8_t *table, *value, *key;
	int htab_fd = bpf_map__fd(shape->htab), slots_fd = bpf_map__fd(shape->slots);

	/* One random cycle through all N entries (Sattolo's algorithm): entry i names the
	 * next one to look up. */
	next = malloc(n * sizeof(*next));
	table = calloc(slots, slot_size);
	value = calloc(1, shape->value_size);
	key = calloc(1, key_size);
	if (!next || !table || !value || !key)
		return die("lookup-chase: memory");
	for (uint32_t i = 0; i < n; i++)
		next[i] = i;
	srandom(13);
	for (uint32_t i = n - 1; i > 0; i--) {
		uint32_t j = random() % i, t = next[i];

		next[i] = next[j];
		next[j] = t;
	}
	for (uint32_t i = 0; i < n; i++) {
		uint32_t slot, probe;

		shape->key_of(i, key);
		memcpy(value, &next[i], sizeof(next[i])); /* the value's first word */
		if (bpf_map_update_elem(htab_fd, key, value, BPF_NOEXIST))
			return die("lookup-chase: insert");
		slot = shape->hash(key);
		for (probe = 0; probe < CHASE_PROBES; probe++) {
			uint8_t *s = table + (size_t)((slot + probe) & (slots - 1)) * slot_size;
			uint32_t word0;

			memcpy(&word0, s, sizeof(word0));
			if (!word0) { /* word 0 of every key is non-zero */
				memcpy(s, key, key_size);
				memcpy(s + key_size, &next[i], sizeof(next[i]));
				break;
			}
		}
		first_slot += probe == 0;
		if (probe + 1 > longest)
			longest = probe + 1;
		if (probe == CHASE_PROBES)
			return die("lookup-chase: a run of full slots (no room within the probes)");
	}
	for (uint32_t i = 0; i < slots; i++)
		if (bpf_map_update_elem(slots_fd, &i, table + (size_t)i * slot_size, 0))
			return die("lookup-chase: slot");
	free(key);
	free(value);
	free(table);
	free(next);

	/* A first pass around the cycle brings the tables' pages in; then the figures. */
	chase_ns(bpf_program__fd(shape->htab_run), n / CHASE_STEPS + 1);
	chase_ns(bpf_program__fd(shape->slots_run), n / CHASE_STEPS + 1);
	printf("htab_ns %.1f slots_ns %.1f in_first_slot %.1f%% longest_probe %u\n",
	       chase_ns(bpf_program__fd(shape->htab_run), 20000),
	       chase_ns(bpf_program__fd(shape->slots_run), 20000), 100.0 * first_slot / n, longest);
	return 0;
}

/* lookup-chase N (@ipv6 false) and lookup-chase6 N. */
static int lookup_chase(const char *arg, bool ipv6)
{
	uint32_t n = strtoul(arg, NULL, 0), slots = 1;
	struct chase_shape shape;
	struct chase *skel;
	int err;

	if (n < 2 || n > (1u << 24)) {
		errno = EINVAL;
		return die("lookup-chase: N from 2 to 16M");
	}
	while (slots < 2 * n)
		slots <<= 1;
	skel = chase__open();
	if (!skel)
		return die("lookup-chase: open");
	if (ipv6)
		shape = (struct chase_shape){
			.htab = skel->maps.chase6_htab,
			.slots = skel->maps.chase6_slots,
			.htab_run = skel->progs.chase6_htab_run,
			.slots_run = skel->progs.chase6_slots_run,
			.key_size = sizeof(struct chase_key6),
			.value_size = sizeof(struct chase_value6),
			.slot_size = sizeof(struct chase_slot6),
			.key_of = chase6_key_of,
			.hash = chase6_hash,
		};
	else
		shape = (struct chase_shape){
			.htab = skel->maps.chase_htab,
			.slots = skel->maps.chase_slots,
			.htab_run = skel->progs.chase_htab_run,
			.slots_run = skel->progs.chase_slots_run,
			.key_size = sizeof(struct chase_key),
			.value_size = sizeof(struct chase_value),
			.slot_size = sizeof(struct chase_slot),
			.key_of = chase4_key_of,
			.hash = chase4_hash,
		};
	/* Only this family's programs are loaded, and its maps sized: the other's stay at
	 * one entry. */
	bpf_program__set_autoload(skel->progs.chase_htab_run, !ipv6);
	bpf_program__set_autoload(skel->progs.chase_slots_run, !ipv6);
	bpf_program__set_autoload(skel->progs.chase6_htab_run, ipv6);
	bpf_program__set_autoload(skel->progs.chase6_slots_run, ipv6);
	if (bpf_map__set_max_entries(shape.htab, n) || bpf_map__set_max_entries(shape.slots, slots))
		return die("lookup-chase: open");
	skel->rodata->chase_slot_mask = slots - 1;
	if (chase__load(skel))
		return die("lookup-chase: load");
	err = lookup_chase_shape(n, slots, &shape);
	chase__destroy(skel);
	return err;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "lookup-chase"))
		return lookup_chase(argv[2], false);
	if (argc == 3 && !strcmp(argv[1], "lookup-chase6"))
		return lookup_chase(argv[2], true);
	if (argc == 5 && !strcmp(argv[1], "map-memory"))
		return map_memory(argv + 2);
	if (argc == 4 && !strcmp(argv[1], "sink")) {
		bench__destroy(attach(argv[2], argv[3], 0));
		return 0;
	}
	if (argc == 5 && !strcmp(argv[1], "pass")) {
		struct bench_cfg cfg = {.pass = atoi(argv[4])};
		__u32 zero = 0;

		return bpf_map_update_elem(open_pin(argv[2], argv[3], "cfg"), &zero, &cfg, 0)
			       ? die("pass")
			       : 0;
	}
	if (argc == 4 && !strcmp(argv[1], "count")) {
		printf("%llu\n", count(argv[2], argv[3]));
		return 0;
	}
	if (argc == 7 && !strcmp(argv[1], "ceiling")) {
		struct bench *skel = attach(argv[2], argv[3], 1);
		struct bench_cfg cfg = {0};
		__u32 zero = 0, out = ifindex_of(argv[4]);

		parse_mac(argv[5], cfg.dmac);
		parse_mac(argv[6], cfg.smac);
		if (bpf_map_update_elem(bpf_map__fd(skel->maps.bench_cfg), &zero, &cfg, 0) ||
		    bpf_map_update_elem(bpf_map__fd(skel->maps.bench_tx), &zero, &out, 0))
			die("ceiling config");
		bench__destroy(skel);
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "detach")) {
		static const char *const what[] = {"link", "cfg", "count"};
		char path[PATH_MAX];

		for (int i = 0; i < 3; i++) {
			pin_path(path, argv[2], argv[3], what[i]);
			unlink(path);
		}
		return 0;
	}
	if ((argc == 7 || argc == 8) && !strcmp(argv[1], "ct-burst"))
		return ct_burst(argv + 2, argc == 8 ? argv[7] : NULL);
	if (argc >= 10 && argc <= 13 && !strcmp(argv[1], "gen"))
		return generate(argv + 2);
	fprintf(stderr, "usage: see the top of tests/bench/fp_bench.c\n");
	return 2;
}
