// SPDX-License-Identifier: GPL-2.0-only
/*
 * Frames over the wire instead of BPF_PROG_TEST_RUN, for kernels whose test run takes no
 * XDP context (before 5.15): there a frame cannot be given an ingress interface, and the
 * datapath keys everything by it. fx_run() then does what the test run would, for real:
 *
 *   - the program is attached (native) to the fixture's ports fp_lan, fp_wan and fp_port;
 *   - the frame is sent from a packet socket on the peer of its ingress port;
 *   - the per-CPU counters say what the program did (exactly one counts each frame):
 *     forwarded: the frame comes out of the peer of the port it was redirected to;
 *     passed: it goes up the ingress port's stack, where a packet socket sees it;
 *     neither: the program aborted (nothing comes out).
 *
 * A redirect into a veth needs an XDP program on the peer before 5.13 (GRO does later), so
 * the peers get one that passes everything. The kernel must not act on what the program
 * passes (forward it, answer it): the fixture's namespace drops every IP packet in
 * prerouting, after the packet sockets have seen it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/if_packet.h>
#include <sys/socket.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "fixture.h"
#include "packet.h"
#include "testlib.h"
#include "wire.h"

#define NR_PORTS 3

static struct {
	int ifindex[NR_PORTS], peer[NR_PORTS];
	int sock[NR_PORTS], peer_sock[NR_PORTS]; /* packet sockets: what each side receives */
	int attached_fd;			 /* the program on the ports now, or -1 */
	int pass_fd;				 /* XDP_PASS, on the peers */
} wire = {.attached_fd = -1, .pass_fd = -1};

bool fx_wire;

static int packet_socket(int ifindex)
{
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL), .sll_ifindex = ifindex};
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, htons(ETH_P_ALL));
	int on = 1;

	if (fd < 0 || bind(fd, (struct sockaddr *)&sll, sizeof(sll)) ||
	    setsockopt(fd, SOL_PACKET, PACKET_AUXDATA, &on, sizeof(on)))
		DIE("packet socket on ifindex %d: %s", ifindex, strerror(errno));
	return fd;
}

static int load_pass_prog(void)
{
	const struct bpf_insn insns[] = {
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = XDP_PASS},
		{.code = BPF_JMP | BPF_EXIT},
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "fx_pass", "GPL", insns, 2, NULL);

	if (fd < 0)
		DIE("loading an XDP_PASS program: %s", strerror(errno));
	return fd;
}

void fx_wire_setup(void)
{
	const char *names[NR_PORTS] = {"fp_lan", "fp_wan", "fp_port"};

	fx_wire = true;
	printf("# BPF_PROG_TEST_RUN takes no XDP context on this kernel (before 5.15): frames go "
	       "over the veths\n");
	/* The peers send nothing of their own; a frame up to 3000 bytes may enter a port (the
	 * most a veth with XDP takes). */
	fx_sh("for l in fp_lan_peer fp_wan_peer fp_port_peer; do "
	      "sysctl -qw net.ipv6.conf.$l.disable_ipv6=1 && ip link set $l mtu 3000; done");
	fx_sh("nft add table inet fx_wire && nft add chain inet fx_wire pre '{ type filter hook "
	      "prerouting priority -400; policy drop; }'");
	wire.pass_fd = load_pass_prog();
	for (int i = 0; i < NR_PORTS; i++) {
		char peer[IF_NAMESIZE + 8];
		int err;

		snprintf(peer, sizeof(peer), "%s_peer", names[i]);
		wire.ifindex[i] = if_nametoindex(names[i]);
		wire.peer[i] = if_nametoindex(peer);
		err = bpf_xdp_attach(wire.peer[i], wire.pass_fd, XDP_FLAGS_DRV_MODE, NULL);
		if (err)
			DIE("XDP_PASS on %s: %s", peer, strerror(-err));
		wire.sock[i] = packet_socket(wire.ifindex[i]);
		wire.peer_sock[i] = packet_socket(wire.peer[i]);
	}
}

/* Takes the program off the ports (a test of its own attaches it there). */
void fx_wire_release(void)
{
	if (!fx_wire || wire.attached_fd < 0)
		return;
	for (int i = 0; i < NR_PORTS; i++)
		bpf_xdp_detach(wire.ifindex[i], XDP_FLAGS_DRV_MODE, NULL);
	wire.attached_fd = -1;
}

static void attach_ports(void)
{
	if (wire.attached_fd == fx.prog_fd)
		return;
	for (int i = 0; i < NR_PORTS; i++) {
		int err = bpf_xdp_attach(wire.ifindex[i], fx.prog_fd, XDP_FLAGS_DRV_MODE, NULL);

		if (err)
			DIE("attaching the program to ifindex %d: %s", wire.ifindex[i],
			    strerror(-err));
	}
	wire.attached_fd = fx.prog_fd;
}

/*
 * One frame received on fd, as it was on the wire: a VLAN tag the stack took into the
 * skb's metadata goes back in. Returns its length; 0 if none, or only what this side sent.
 */
static uint32_t receive(int fd, uint8_t *buf, uint32_t size)
{
	uint8_t ctrl[CMSG_SPACE(sizeof(struct tpacket_auxdata))];
	struct sockaddr_ll from;
	struct iovec iov = {.iov_base = buf, .iov_len = size - 4};
	struct msghdr msg = {.msg_name = &from,
			     .msg_namelen = sizeof(from),
			     .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = ctrl,
			     .msg_controllen = sizeof(ctrl)};
	struct cmsghdr *cmsg;
	ssize_t len = recvmsg(fd, &msg, 0);

	if (len < ETH_HLEN || from.sll_pkttype == PACKET_OUTGOING)
		return 0;
	for (cmsg = CMSG_FIRSTHDR(&msg); cmsg; cmsg = CMSG_NXTHDR(&msg, cmsg)) {
		struct tpacket_auxdata aux;
		uint16_t tpid = ETH_P_8021Q;

		if (cmsg->cmsg_level != SOL_PACKET || cmsg->cmsg_type != PACKET_AUXDATA)
			continue;
		memcpy(&aux, CMSG_DATA(cmsg), sizeof(aux));
		if (!(aux.tp_status & TP_STATUS_VLAN_VALID))
			continue;
		if (aux.tp_status & TP_STATUS_VLAN_TPID_VALID)
			tpid = aux.tp_vlan_tpid;
		memmove(buf + 16, buf + 12, len - 12);
		buf[12] = tpid >> 8;
		buf[13] = tpid & 0xff;
		buf[14] = aux.tp_vlan_tci >> 8;
		buf[15] = aux.tp_vlan_tci & 0xff;
		len += 4;
	}
	return len;
}

/* ARP, and ICMPv6 (neighbour discovery, MLD): what a port's own stack sends its peer. */
static bool stack_noise(const uint8_t *f, uint32_t len)
{
	uint16_t type = f[12] << 8 | f[13];

	if (type == ETH_P_ARP)
		return true;
	return type == ETH_P_IPV6 && len >= ETH_HLEN + 40 &&
	       (f[ETH_HLEN + 6] == 58 || f[ETH_HLEN + 6] == 0);
}

static void drain(void)
{
	static uint8_t junk[PKT_MAX];

	for (int i = 0; i < NR_PORTS; i++) {
		while (recv(wire.sock[i], junk, sizeof(junk), 0) > 0)
			;
		while (recv(wire.peer_sock[i], junk, sizeof(junk), 0) > 0)
			;
	}
}

static uint64_t counted(void)
{
	uint64_t stats[FP_STAT_MAX], sum = 0;

	fx_read_stats(stats);
	for (int i = 0; i < FP_STAT_MAX; i++)
		if (i != FP_STAT_FORWARDED_BYTES && i != FP_STAT_STEERED)
			sum += stats[i];
	return sum;
}

static uint64_t ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* The first frame that arrives on any of fds within a second, but the stack's noise. */
static uint32_t wait_frame(const int *fds, int nr, bool skip_noise, uint8_t *out)
{
	struct pollfd pfd[NR_PORTS];
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < nr; i++)
		pfd[i] = (struct pollfd){.fd = fds[i], .events = POLLIN};
	while (ms_since(&t0) < 1000) {
		if (poll(pfd, nr, 100) <= 0)
			continue;
		for (int i = 0; i < nr; i++) {
			uint32_t len;

			if (!(pfd[i].revents & POLLIN))
				continue;
			len = receive(fds[i], out, PKT_MAX);
			if (len && !(skip_noise && stack_noise(out, len)))
				return len;
		}
	}
	return 0;
}

int fx_wire_run(const uint8_t *in, uint32_t in_len, int ingress, uint8_t *out, uint32_t *out_len)
{
	uint64_t before[FP_STAT_MAX], after[FP_STAT_MAX];
	struct timespec t0;
	int port = -1;

	for (int i = 0; i < NR_PORTS; i++)
		if (wire.ifindex[i] == ingress)
			port = i;
	if (port < 0)
		DIE("frames can enter only through fp_lan, fp_wan or fp_port (ifindex %d)",
		    ingress);
	attach_ports();
	drain();
	fx_read_stats(before);
	uint64_t was = counted();

	if (send(wire.peer_sock[port], in, in_len, 0) != (ssize_t)in_len) {
		/* Over the port's MTU: a veth drops it, as most NICs do, before XDP. */
		if (errno == ENOBUFS)
			return FX_UNDELIVERABLE;
		DIE("sending a %u-byte frame into ifindex %d: %s", in_len, ingress,
		    strerror(errno));
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (counted() == was && ms_since(&t0) < 200)
		usleep(200);
	fx_read_stats(after);
	*out_len = 0;
	if (after[FP_STAT_FORWARDED] != before[FP_STAT_FORWARDED]) {
		*out_len = wait_frame(wire.peer_sock, NR_PORTS, true, out);
		return XDP_REDIRECT;
	}
	if (counted() == was)
		return XDP_ABORTED;
	*out_len = wait_frame(&wire.sock[port], 1, false, out);
	/* The stack drops some tagged runts (a tag cut short, nothing after the tag) before
	 * any packet socket sees them: passed, but not to be looked at. */
	uint16_t type = in[12] << 8 | in[13];

	if (!*out_len && in_len < ETH_ZLEN && (type == ETH_P_8021Q || type == ETH_P_8021AD))
		return FX_UNDELIVERABLE;
	return XDP_PASS;
}
