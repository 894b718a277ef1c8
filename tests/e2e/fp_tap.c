// SPDX-License-Identifier: GPL-2.0-only
/*
 * fp-tap: a virtual machine behind a tap device, as QEMU runs one on a router, for the
 * end-to-end tests. It talks UDP with "fp-udp server" through the router, its frames
 * written and read on the tap's file descriptor with a virtio-net header before each.
 *
 *   fp-tap DEV VM_MAC ROUTER_MAC VM_ADDR VM_PORT SERVER_ADDR PORT N partial|complete
 *
 * Sends N sequence-numbered datagrams (one at a time, resent after 200 ms) from VM_ADDR
 * VM_PORT to SERVER_ADDR PORT (IPv4 or IPv6), and checks each echo byte for byte and
 * its checksums; prints "sent N echoed N corrupt 0 resent R", exit 0 if all came back
 * intact. Fails after 10 s without an echo. The rest follow the first echo 200 ms later,
 * as after a handshake: the daemon offloads the conversation meanwhile, so that what
 * carries it is not a race with the daemon (2000 datagrams take a fraction of a second).
 *
 * "partial" sends as a guest whose virtio NIC offloads checksums: the UDP checksum field
 * holds the pseudo-header's sum only, and the header's NEEDS_CSUM flag asks whoever sends
 * the packet on to finish it (the kernel makes the skb CHECKSUM_PARTIAL). "complete" sends
 * finished checksums. The descriptor is non-blocking, as QEMU's is: the tap then runs a
 * native XDP program on the frame itself, before any skb exists.
 *
 * DEV must exist in the caller's network namespace (ip tuntap add DEV mode tap); the
 * router reaches VM_ADDR through a permanent neighbour entry, so no ARP or ND is spoken.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <linux/if_ether.h>
#include <linux/if_tun.h>
#include <linux/virtio_net.h>

#include "packet.h"
#include "payload.h"

#define PAYLOAD	 1000
#define IP4_HLEN 20
#define IP6_HLEN 40
#define UDP_HLEN 8

struct conv {
	int fd;
	bool ipv6, partial;
	uint8_t vm_mac[ETH_ALEN], router_mac[ETH_ALEN];
	uint8_t vm_addr[16], server_addr[16]; /* IPv4 in the first 4 bytes */
	uint16_t vm_port, server_port;
};

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = (uint8_t)v;
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* Frame @seq's datagram, after a virtio-net header; returns the length to write. */
static size_t build(const struct conv *c, uint32_t seq, uint8_t *buf)
{
	struct virtio_net_hdr *vh = (void *)buf;
	uint8_t *eth = buf + sizeof(*vh), *l3 = eth + ETH_HLEN;
	size_t l3_hlen = c->ipv6 ? IP6_HLEN : IP4_HLEN, udp_len = UDP_HLEN + PAYLOAD;
	uint8_t *udp = l3 + l3_hlen;
	size_t frame_len = ETH_HLEN + l3_hlen + udp_len;
	uint16_t check;

	memset(buf, 0, sizeof(*vh) + ETH_HLEN + l3_hlen + UDP_HLEN);
	memcpy(eth, c->router_mac, ETH_ALEN);
	memcpy(eth + ETH_ALEN, c->vm_mac, ETH_ALEN);
	put16(eth + 12, c->ipv6 ? ETH_P_IPV6 : ETH_P_IP);
	if (c->ipv6) {
		l3[0] = 0x60;
		put16(l3 + 4, (uint16_t)udp_len);
		l3[6] = IPPROTO_UDP;
		l3[7] = 64;
		memcpy(l3 + 8, c->vm_addr, 16);
		memcpy(l3 + 24, c->server_addr, 16);
	} else {
		l3[0] = 0x45;
		put16(l3 + 2, (uint16_t)(IP4_HLEN + udp_len));
		put16(l3 + 4, (uint16_t)seq);
		l3[8] = 64;
		l3[9] = IPPROTO_UDP;
		memcpy(l3 + 12, c->vm_addr, 4);
		memcpy(l3 + 16, c->server_addr, 4);
		put16(l3 + 10, (uint16_t)~csum_fold32(csum_partial(l3, IP4_HLEN, 0)));
	}
	put16(udp, c->vm_port);
	put16(udp + 2, c->server_port);
	put16(udp + 4, (uint16_t)udp_len);
	payload_fill(udp + UDP_HLEN, seq, PAYLOAD);

	/* As a guest's kernel leaves it for the device (udp4_hwcsum): the pseudo-header's sum,
	 * which the device's sum of the datagram from csum_start goes onto. */
	pkt_l4_csum_seed(eth, frame_len);
	if (c->partial) {
		vh->flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
		vh->csum_start = ETH_HLEN + l3_hlen; /* host order: tun's legacy header */
		vh->csum_offset = 6;
	} else { /* what the device does */
		check = (uint16_t)~csum_fold32(csum_partial(udp, udp_len, 0));
		put16(udp + 6, check ? check : 0xffff);
	}
	return sizeof(*vh) + frame_len;
}

enum echo { ECHO_OTHER, ECHO_CORRUPT, ECHO_OK };

/* Whether frame @buf of @len bytes (after its virtio-net header) is the echo of a datagram
 * of ours, intact: addresses, ports, checksums, payload. Sets @seq to its number. */
static enum echo check_echo(const struct conv *c, uint8_t *buf, size_t len, uint32_t *seq)
{
	const struct virtio_net_hdr *vh = (const void *)buf;
	size_t l3_hlen = c->ipv6 ? IP6_HLEN : IP4_HLEN, alen = c->ipv6 ? 16 : 4;
	uint8_t *eth = buf + sizeof(*vh), *l3 = eth + ETH_HLEN, *udp = l3 + l3_hlen;
	size_t frame_len = len - sizeof(*vh);
	uint8_t want[PAYLOAD];

	if (len < sizeof(*vh) + ETH_HLEN + l3_hlen + UDP_HLEN ||
	    get16(eth + 12) != (c->ipv6 ? ETH_P_IPV6 : ETH_P_IP) ||
	    l3[c->ipv6 ? 6 : 9] != IPPROTO_UDP || get16(udp) != c->server_port ||
	    get16(udp + 2) != c->vm_port)
		return ECHO_OTHER;
	if (len != sizeof(*vh) + ETH_HLEN + l3_hlen + UDP_HLEN + PAYLOAD ||
	    get16(udp + 4) != UDP_HLEN + PAYLOAD || memcmp(eth, c->vm_mac, ETH_ALEN) ||
	    memcmp(l3 + (c->ipv6 ? 8 : 12), c->server_addr, alen) ||
	    memcmp(l3 + (c->ipv6 ? 24 : 16), c->vm_addr, alen))
		return ECHO_CORRUPT;
	if (!c->ipv6 && !pkt_ipv4_csum_ok(eth, frame_len))
		return ECHO_CORRUPT;
	/* A partial checksum from the router (the tap offloads none: it should not send one)
	 * is left unchecked, for the device to finish. A zero one is not ours: refused. */
	if (!(vh->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) &&
	    (!get16(udp + 6) || !pkt_l4_csum_ok(eth, frame_len)))
		return ECHO_CORRUPT;
	memcpy(seq, udp + UDP_HLEN, 4);
	payload_fill(want, *seq, PAYLOAD);
	return memcmp(udp + UDP_HLEN, want, PAYLOAD) ? ECHO_CORRUPT : ECHO_OK;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int tap_open(const char *dev)
{
	struct ifreq ifr = {.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR};
	int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0) {
		perror("fp-tap: /dev/net/tun");
		return -1;
	}
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	if (ioctl(fd, TUNSETIFF, &ifr)) {
		fprintf(stderr, "fp-tap: %s: %s\n", dev, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

#define SETTLE_NS 200000000L /* after the first echo */

static int converse(struct conv *c, uint32_t count)
{
	unsigned long corrupt = 0, resent = 0, echoed = 0;
	double stalled_at = now_s() + 10;
	uint32_t seq = 0, sent = 0;

	while (seq < count && now_s() < stalled_at) {
		uint8_t out[2048], in[2048];
		size_t len = build(c, seq, out);
		double resend_at = now_s() + 0.2;
		bool done = false;

		if (write(c->fd, out, len) != (ssize_t)len) {
			fprintf(stderr, "fp-tap: write: %s\n", strerror(errno));
			return 2;
		}
		sent = seq + 1;
		while (!done && now_s() < resend_at) {
			struct pollfd pfd = {.fd = c->fd, .events = POLLIN};
			uint32_t got;
			ssize_t n;

			if (poll(&pfd, 1, 50) != 1)
				continue;
			while ((n = read(c->fd, in, sizeof(in))) > 0) {
				switch (check_echo(c, in, n, &got)) {
				case ECHO_OK:
					if (got == seq && !done) {
						done = true;
						echoed++;
					}
					break;
				case ECHO_CORRUPT:
					corrupt++;
					break;
				case ECHO_OTHER:
					break;
				}
			}
		}
		if (done) {
			if (seq++ == 0)
				nanosleep(&(struct timespec){0, SETTLE_NS}, NULL);
			stalled_at = now_s() + 10;
		} else {
			resent++;
		}
	}
	printf("sent %u echoed %lu corrupt %lu resent %lu\n", sent, echoed, corrupt, resent);
	return echoed == count && !corrupt ? 0 : 1;
}

static bool parse_mac(const char *s, uint8_t *mac)
{
	return sscanf(s, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &mac[0], &mac[1], &mac[2], &mac[3],
		      &mac[4], &mac[5]) == 6;
}

int main(int argc, char **argv)
{
	struct conv c = {0};
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 10 || !parse_mac(argv[2], c.vm_mac) || !parse_mac(argv[3], c.router_mac) ||
	    (strcmp(argv[9], "partial") && strcmp(argv[9], "complete"))) {
		fprintf(stderr, "usage: fp-tap DEV VM_MAC ROUTER_MAC VM_ADDR VM_PORT SERVER_ADDR "
				"PORT N partial|complete\n");
		return 2;
	}
	c.ipv6 = strchr(argv[4], ':');
	if (inet_pton(c.ipv6 ? AF_INET6 : AF_INET, argv[4], c.vm_addr) != 1 ||
	    inet_pton(c.ipv6 ? AF_INET6 : AF_INET, argv[6], c.server_addr) != 1) {
		fprintf(stderr, "fp-tap: addresses of one family, please\n");
		return 2;
	}
	c.vm_port = (uint16_t)atoi(argv[5]);
	c.server_port = (uint16_t)atoi(argv[7]);
	c.partial = !strcmp(argv[9], "partial");
	c.fd = tap_open(argv[1]);
	if (c.fd < 0)
		return 2;
	ret = converse(&c, (uint32_t)strtoul(argv[8], NULL, 0));
	close(c.fd);
	return ret;
}
