// SPDX-License-Identifier: GPL-2.0-only
/*
 * The program on real interfaces: attached in native (driver) mode to the fixture's veths,
 * a frame sent into the LAN veth from its peer must come out of the WAN veth's peer,
 * rewritten, carried by the XDP redirect alone. Then the same through the tc hook, attached
 * and detached as the command does it (hooks.c: tcx, or clsact before 6.6).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <net/if.h>
#include <netinet/in.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/if_packet.h>
#include <sys/socket.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "fixture.h"
#include "hooks.h"
#include "instance.h"
#include "packet.h"
#include "reattach.h"
#include "testlib.h"
#include "tests.h"
#include "wire.h"

static int packet_socket(int ifindex)
{
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL), .sll_ifindex = ifindex};
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));

	if (fd < 0 || bind(fd, (struct sockaddr *)&sll, sizeof(sll)))
		DIE("packet socket: %s", strerror(errno));
	return fd;
}

/* Waits up to a second for a frame equal to want on fd. */
static bool receive_frame(int fd, const uint8_t *want, size_t want_len, uint8_t *got,
			  ssize_t *got_len)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};

	while (poll(&pfd, 1, 1000) == 1) {
		*got_len = recv(fd, got, PKT_MAX, 0);
		/* Skip unrelated traffic (IPv6 router solicitations and the like). */
		if (*got_len >= 34 && got[12] == 0x08 && got[13] == 0x00 && got[14 + 9] == 6)
			return (size_t)*got_len == want_len && !memcmp(got, want, want_len);
	}
	*got_len = 0;
	return false;
}

/* Sends in_spec into the LAN veth; true if out_spec's frame came out of the WAN veth, and
 * the forwarded counter moved by one. What came instead is shown if @expected. */
static bool forwards_real_frame(const struct pkt_spec *in_spec, const struct pkt_spec *out_spec,
				bool expected)
{
	static uint8_t in[PKT_MAX], want[PKT_MAX], got[PKT_MAX];
	uint64_t before[FP_STAT_MAX], after[FP_STAT_MAX];
	int rx = packet_socket(if_nametoindex("fp_wan_peer"));
	int tx = packet_socket(if_nametoindex("fp_lan_peer"));
	size_t in_len = pkt_build(in_spec, in), want_len = pkt_build(out_spec, want);
	bool arrived;
	ssize_t got_len;

	fx_read_stats(before);
	CHECK(send(tx, in, in_len, 0) == (ssize_t)in_len, "send: %s", strerror(errno));
	arrived = receive_frame(rx, want, want_len, got, &got_len);
	if (!arrived && got_len && expected)
		tl_hexdump_diff(got, got_len, want, want_len);
	fx_read_stats(after);
	close(rx);
	close(tx);
	return arrived && after[FP_STAT_FORWARDED] - before[FP_STAT_FORWARDED] == 1;
}

static void remove_lock_file(const struct fp_instance *inst)
{
	char lock[PATH_MAX];

	fp_run_paths(inst, NULL, lock, sizeof(lock));
	unlink(lock);
}

static void set_config(struct fp_config *cfg, void *to)
{
	*cfg = *(const struct fp_config *)to;
}

/* The daemon attaches a port that comes back with the --mode it had: its note says which. */
static void test_requested_mode(const struct fp_instance *inst)
{
	static const struct {
		const char *note;
		enum fp_hook want;
	} notes[] = {
		{"--mode tc", FP_HOOK_TC},
		{"--mode native; its packets with partial checksums pass to the kernel",
		 FP_HOOK_NATIVE},
		{"--mode generic", FP_HOOK_GENERIC},
		{"--mode split", FP_HOOK_SPLIT},
		{"the driver has native XDP", FP_HOOK_AUTO},
		{"native XDP failed: Invalid argument", FP_HOOK_AUTO},
		{"--mode tcx", FP_HOOK_AUTO},
	};
	enum fp_hook got;

	tl_case_begin("the --mode an interface was attached with is read back from its note");
	/* The notes live beside the lock file, which the attaches before made. */
	for (size_t i = 0; i < sizeof(notes) / sizeof(notes[0]); i++) {
		fp_hook_note(inst, fx.lan_ifindex, notes[i].note);
		got = fp_hook_requested(inst, fx.lan_ifindex);
		CHECK(got == notes[i].want, "'%s': %s, want %s", notes[i].note, fp_hook_name(got),
		      fp_hook_name(notes[i].want));
	}
	fp_hook_forget(inst, fx.lan_ifindex);
	got = fp_hook_requested(inst, fx.lan_ifindex);
	CHECK(got == FP_HOOK_AUTO, "without a note: %s", fp_hook_name(got));
	tl_case_end();
}

/* An awaited port the operator detaches: out of the list at once with no daemon; with one,
 * through a request that status heeds at once and the daemon takes at its next try. */
static void test_unawait(struct fp_instance *inst)
{
	const char *away1[] = {"fp_away1"}, *away0[] = {"fp_away0"};
	struct fp_awaited_port ports[FP_REATTACH_MAX];
	struct fp_reattach daemon = {.inst = inst};
	char request[PATH_MAX];
	int n;

	tl_case_begin("an awaited port detached by the operator is awaited no more");
	fp_run_path(inst, "unawait", -1, request, sizeof(request));
	reattach_add(&daemon, "fp_away0", FP_HOOK_TC);
	reattach_add(&daemon, "fp_away1", FP_HOOK_AUTO);
	reattach_save(&daemon);
	CHECK(!reattach_unawait(inst, away1, 1, true), "the request");
	n = reattach_read(inst, ports, FP_REATTACH_MAX);
	CHECK(n == 1 && !strcmp(ports[0].name, "fp_away0") && ports[0].mode == FP_HOOK_TC,
	      "status reads %d ports, the first %s, want fp_away0 alone", n,
	      n ? ports[0].name : "-");
	CHECK_EQ(reattach_try(&daemon), 0, "attached, of ports not there");
	CHECK(daemon.nr_awaited == 1 && !strcmp(daemon.awaited[0].name, "fp_away0"),
	      "the daemon awaits %d ports, the first %s", daemon.nr_awaited,
	      daemon.nr_awaited ? daemon.awaited[0].name : "-");
	CHECK(access(request, F_OK) && errno == ENOENT, "the request is left after it was taken");
	n = reattach_read(inst, ports, FP_REATTACH_MAX);
	CHECK(n == 1 && !strcmp(ports[0].name, "fp_away0"), "the list the daemon saved: %d", n);
	CHECK(!reattach_unawait(inst, away0, 1, false), "with no daemon");
	CHECK_EQ(reattach_read(inst, ports, FP_REATTACH_MAX), 0, "ports awaited");
	reattach_forget(inst);
	tl_case_end();
}

/* The tc hook as attach puts it on an interface, and detach takes it off; then split, with
 * TCP through GRO and the tc hook, UDP through XDP. */
static void test_tc_hook(const struct pkt_spec *in_spec, const struct pkt_spec *out_spec)
{
	struct fp_instance inst = {.prog_fd = fx.prog_fd,
				   .prog_tc_fd = fx.prog_tc_fd,
				   .config_fd = bpf_map__fd(fx.skel->maps.fp_config),
				   .ports_fd = bpf_map__fd(fx.skel->maps.fp_ports)};
	uint64_t before[FP_STAT_MAX], after[FP_STAT_MAX];
	struct bpf_prog_info info = {};
	uint32_t info_len = sizeof(info);
	const char *how = NULL, *is;
	struct statfs st;
	char want[32];
	int err;

	snprintf(inst.pin_dir, sizeof(inst.pin_dir), "/sys/fs/bpf/fp-test-%d", getpid());
	snprintf(inst.name, sizeof(inst.name), "fp-test-%d", getpid());
	/* As attach would: a machine without systemd may have no BPF filesystem there. */
	if (statfs("/sys/fs/bpf", &st) || (uint32_t)st.f_type != BPF_FS_MAGIC) {
		if (mount("bpf", "/sys/fs/bpf", "bpf", 0, "mode=0700"))
			DIE("mounting a BPF filesystem at /sys/fs/bpf: %s", strerror(errno));
	}
	if (mkdir(inst.pin_dir, 0700))
		DIE("mkdir %s: %s", inst.pin_dir, strerror(errno));
	bpf_obj_get_info_by_fd(fx.prog_tc_fd, &info, &info_len);
	inst.prog_tc_id = info.id;

	tl_case_begin("attaches at the tc hook");
	err = fp_hook_attach(&inst, fx.lan_ifindex, "fp_lan", FP_HOOK_TC, &how);
	CHECK(!err, "tc attach: %s", strerror(-err));
	snprintf(want, sizeof(want), "tc (%s)", how ? how : "?");
	is = fp_hook_describe(&inst, fx.lan_ifindex);
	CHECK(!strcmp(is, want), "status says '%s', want '%s'", is, want);
	CHECK(fp_hook_pinned(&inst, fx.lan_ifindex), "no pin");
	tl_case_end();

	tl_case_begin("forwards a real frame from veth to veth at the tc hook");
	CHECK(forwards_real_frame(in_spec, out_spec, true),
	      "the rewritten frame did not arrive on the WAN peer, or not by the fastpath");
	tl_case_end();

	tl_case_begin("detaches from the tc hook");
	fp_hook_detach(&inst, fx.lan_ifindex);
	is = fp_hook_describe(&inst, fx.lan_ifindex);
	CHECK(!strcmp(is, "detached"), "status says '%s'", is);
	CHECK(!fp_hook_pinned(&inst, fx.lan_ifindex), "a pin is left");
	CHECK(!forwards_real_frame(in_spec, out_spec, false), "still forwarded after detach");
	tl_case_end();

	tl_case_begin("split: native xdp, and tcp through gro to the tc hook");
	fx_sh("ethtool -K fp_lan gro on >/dev/null");
	err = fp_hook_attach(&inst, fx.lan_ifindex, "fp_lan", FP_HOOK_SPLIT, &how);
	CHECK(!err, "split attach: %s", strerror(-err));
	snprintf(want, sizeof(want), "native + tc (%s) for TCP", how ? how : "?");
	is = fp_hook_describe(&inst, fx.lan_ifindex);
	CHECK(!strcmp(is, want), "status says '%s', want '%s'", is, want);
	fx_read_stats(before);
	CHECK(forwards_real_frame(in_spec, out_spec, true), "the rewritten frame did not arrive");
	fx_read_stats(after);
	CHECK_EQ(after[FP_STAT_PASS_TCP_TO_TC] - before[FP_STAT_PASS_TCP_TO_TC], 1,
		 "tcp left to the tc hook by xdp");
	fp_hook_detach(&inst, fx.lan_ifindex);
	is = fp_hook_describe(&inst, fx.lan_ifindex);
	CHECK(!strcmp(is, "detached"), "status says '%s' after detach", is);
	fx_sh("ethtool -K fp_lan gro off >/dev/null");
	tl_case_end();
	test_requested_mode(&inst);
	test_unawait(&inst);
	rmdir(inst.pin_dir);
	remove_lock_file(&inst);
}

static void count_in_steer_cpus(struct fp_config *cfg, void *arg)
{
	(void)arg;
	cfg->steer_cpus++;
}

static void count_in_kernel(struct fp_config *cfg, void *arg)
{
	(void)arg;
	cfg->kernel++;
}

/* Two processes, this one and a child, change a field each @rounds times over, from @base
 * with both at 0; with @unlinked, after the lock file this process has open is unlinked. */
static void race_config_writers(struct fp_instance *inst, const struct fp_config *base,
				uint32_t rounds, bool unlinked)
{
	const char *what = unlinked ? "its lock file unlinked" : "forked";
	struct fp_config cfg = *base;
	int status = 0;
	pid_t child;

	cfg.steer_cpus = cfg.kernel = 0;
	fp_change_config(inst, set_config, &cfg); /* this process opens the lock file */
	if (unlinked)
		remove_lock_file(inst);
	child = fork();
	if (child == 0) {
		for (uint32_t i = 0; i < rounds; i++)
			fp_change_config(inst, count_in_steer_cpus, NULL);
		_exit(0);
	}
	for (uint32_t i = 0; i < rounds; i++)
		fp_change_config(inst, count_in_kernel, NULL);
	waitpid(child, &status, 0);
	CHECK(!fp_read_config(inst, &cfg), "read the config");
	CHECK(cfg.kernel == rounds, "%s: %u changes of this process's field, want %u", what,
	      cfg.kernel, rounds);
	CHECK(cfg.steer_cpus == rounds, "%s: %u changes of the other process's field, want %u",
	      what, cfg.steer_cpus, rounds);
}

/*
 * fp_config's writers (the daemon's heartbeat, attach's port flags and steering) each
 * read, change and write back the whole entry: two processes changing a field each, many
 * times over, must lose none of each other's changes. The lock file they take turns on is
 * kept open: the child must not share this process's open file (the daemon is forked from
 * attach), and once unlinked, the file others lock is a new one.
 */
static void test_config_writers(void)
{
	struct fp_instance inst = {.config_fd = bpf_map__fd(fx.skel->maps.fp_config)};
	struct fp_config saved;

	tl_case_begin("config writers in two processes lose none of each other's changes");
	snprintf(inst.name, sizeof(inst.name), "fp-test-config-%d", getpid());
	CHECK(!fp_read_config(&inst, &saved), "read the config");
	race_config_writers(&inst, &saved, 5000, false);
	race_config_writers(&inst, &saved, 5000, true);
	fp_change_config(&inst, set_config, &saved);
	remove_lock_file(&inst);
	tl_case_end();
}

static int print_through(enum libbpf_print_level level, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = fp_libbpf_print(level, fmt, ap);
	va_end(ap);
	return n;
}

/* What fp_libbpf_print() writes to stderr while @what runs, into @out. */
static void stderr_of(void (*what)(void), char *out, size_t size)
{
	FILE *capture = tmpfile();
	int saved = dup(STDERR_FILENO);
	size_t n = 0;

	fflush(stderr);
	if (capture && saved >= 0 && dup2(fileno(capture), STDERR_FILENO) >= 0) {
		what();
		fflush(stderr);
		dup2(saved, STDERR_FILENO);
		rewind(capture);
		n = fread(out, 1, size - 1, capture);
	}
	out[n] = 0;
	if (saved >= 0)
		close(saved);
	if (capture)
		fclose(capture);
}

static void print_pad_and_other(void)
{
	const char *twice = "libbpf: Attribute of type %#x found multiple times in message, "
			    "previous attribute is being ignored.\n";

	print_through(LIBBPF_WARN, twice, IFLA_PAD);
	print_through(LIBBPF_WARN, twice, IFLA_MTU);
}

static void query_loopback(void)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, query);
	libbpf_print_fn_t old = libbpf_set_print(fp_libbpf_print);

	bpf_xdp_query(1, 0, &query);
	libbpf_set_print(old);
}

/*
 * On MIPS the kernel pads a link's 64-bit attributes with IFLA_PAD, which libbpf warned of
 * at every XDP query, four lines in each attach and status. The first case runs anywhere;
 * the second is a real query, which pads on MIPS (the mipsel guest) and not here.
 */
static void test_libbpf_noise(void)
{
	char out[512];

	tl_case_begin("libbpf's warning of a repeated IFLA_PAD is not shown, others are");
	stderr_of(print_pad_and_other, out, sizeof(out));
	CHECK(!strstr(out, "0x2a"), "the padding was shown: %s", out);
	CHECK(strstr(out, "libbpf: Attribute of type 0x4 found multiple times"),
	      "another repeated attribute was not shown: '%s'", out);
	tl_case_end();

	tl_case_begin("an XDP query through the command's libbpf output prints nothing");
	stderr_of(query_loopback, out, sizeof(out));
	CHECK(!out[0], "it printed: %s", out);
	tl_case_end();
}

void test_attach(void)
{
	const struct pkt_spec in_spec = {FROM_LAN, CLI4, .proto = IPPROTO_TCP, .payload_len = 300};
	const struct pkt_spec out_spec = {TO_WAN, CLI4_SNAT_OUT, .proto = IPPROTO_TCP, .ttl = 63,
					  .payload_len = 300};
	struct fp_flow_key4 key = {.ifindex = fx.lan_ifindex,
				   .proto = IPPROTO_TCP,
				   .sport = htons(40000),
				   .dport = htons(443)};
	struct fp_flow4 flow = {.meta.flags = FP_FLOW_SNAT, .nat_sport = htons(61000)};
	int ifs[] = {fx.lan_ifindex, fx.wan_ifindex};
	LIBBPF_OPTS(bpf_xdp_query_opts, query);
	struct bpf_prog_info info = {};
	uint32_t info_len = sizeof(info);
	int err;

	fx_wire_release();
	tl_case_begin("attaches in native mode on veth");
	bpf_obj_get_info_by_fd(fx.prog_fd, &info, &info_len);
	for (int i = 0; i < 2; i++) {
		err = bpf_xdp_attach(ifs[i], fx.prog_fd,
				     XDP_FLAGS_DRV_MODE | XDP_FLAGS_UPDATE_IF_NOEXIST, NULL);
		CHECK(!err, "native attach to ifindex %d: %s", ifs[i], strerror(-err));
		err = bpf_xdp_query(ifs[i], XDP_FLAGS_DRV_MODE, &query);
		CHECK(!err && query.attach_mode == XDP_ATTACHED_DRV && query.prog_id == info.id,
		      "ifindex %d: attach mode %u prog %u, want driver mode prog %u", ifs[i],
		      query.attach_mode, query.prog_id, info.id);
	}
	tl_case_end();

	tl_case_begin("forwards a real frame from veth to veth by XDP redirect");
	fx_reset();
	inet_pton(AF_INET, "198.18.1.2", &key.saddr);
	inet_pton(AF_INET, "198.19.2.2", &key.daddr);
	inet_pton(AF_INET, "198.19.2.1", &flow.nat_saddr);
	fx_add_flow4(&key, &flow);
	/* A redirect into a veth needs NAPI on the receiving peer (docs/testing.md). */
	fx_sh("ethtool -K fp_wan_peer gro on >/dev/null && ethtool -K fp_lan_peer gro on "
	      ">/dev/null");
	CHECK(forwards_real_frame(&in_spec, &out_spec, true),
	      "the rewritten frame did not arrive on the WAN peer, or not by the fastpath");
	tl_case_end();

	tl_case_begin("detaches");
	for (int i = 0; i < 2; i++) {
		err = bpf_xdp_detach(ifs[i], XDP_FLAGS_DRV_MODE, NULL);
		CHECK(!err, "detach ifindex %d: %s", ifs[i], strerror(-err));
		err = bpf_xdp_query(ifs[i], 0, &query);
		CHECK(!err && query.attach_mode == XDP_ATTACHED_NONE, "still attached");
	}
	tl_case_end();

	/* The flow installed above is still there; the next hop is resolved again. */
	test_tc_hook(&in_spec, &out_spec);
	test_config_writers();
	test_libbpf_noise();
}
