// SPDX-License-Identifier: GPL-2.0-only
/*
 * fp-udp: a UDP stream for the end-to-end tests, checked datagram by datagram.
 *
 *   fp-udp server PORT            echoes every datagram back; on "END" prints what it saw:
 *                                 "peer ADDR received N ttl MIN-MAX" and exits
 *   fp-udp client ADDR PORT N     sends N sequence-numbered datagrams (a window of 16 in
 *                                 flight), checks each echo byte for byte, resends lost ones;
 *                                 prints "sent N echoed N corrupt 0 resent R"; exit 0 if all
 *                                 came back intact. Before it: what the first corrupt echoes
 *                                 were, and the socket's errors (ICMP errors of datagrams
 *                                 lost, resent as the others). N 0: until SIGUSR1, which
 *                                 also ends a counted conversation early (what was sent is
 *                                 then awaited). Fails after 30 s without an echo.
 *   fp-udp client ADDR PORT N MS  the same, but the first datagram goes alone, and the rest
 *                                 MS milliseconds after its echo, as after a handshake: the
 *                                 daemon offloads the conversation meanwhile, so a test of
 *                                 what carries it is not a race with the daemon
 *   fp-udp pong PORT              TCP: answers every connection with "pong" and closes
 *   fp-udp churn ADDR PORT S      short TCP (pong) and UDP (server) exchanges for S seconds,
 *                                 each from a new port; prints "ok N failed M"
 * Payloads are 1000 bytes derived from the sequence number, so corruption is detected.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "payload.h"

#define PAYLOAD 1000
#define WINDOW	16

static int server(const char *port)
{
	struct addrinfo hints = {
		.ai_family = AF_INET6, .ai_socktype = SOCK_DGRAM, .ai_flags = AI_PASSIVE};
	struct addrinfo *ai;
	int fd, on = 1, off = 0, ttl_min = 256, ttl_max = -1, rcvbuf = 8 << 20;
	unsigned long received = 0;
	char peer[INET6_ADDRSTRLEN] = "-";

	if (getaddrinfo(NULL, port, &hints, &ai))
		return 2;
	fd = socket(AF_INET6, SOCK_DGRAM, 0);
	setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
	setsockopt(fd, IPPROTO_IP, IP_RECVTTL, &on, sizeof(on));
	setsockopt(fd, IPPROTO_IPV6, IPV6_RECVHOPLIMIT, &on, sizeof(on));
	/* Bursts (the benchmark establishes thousands of flows at once) must not be lost. */
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf));
	if (bind(fd, ai->ai_addr, ai->ai_addrlen)) {
		perror("bind");
		return 2;
	}
	for (;;) {
		uint8_t buf[2048], cbuf[256];
		struct sockaddr_in6 from;
		struct iovec iov = {buf, sizeof(buf)};
		struct msghdr msg = {.msg_name = &from,
				     .msg_namelen = sizeof(from),
				     .msg_iov = &iov,
				     .msg_iovlen = 1,
				     .msg_control = cbuf,
				     .msg_controllen = sizeof(cbuf)};
		ssize_t n = recvmsg(fd, &msg, 0);

		if (n < 0)
			return 2;
		if (n == 3 && !memcmp(buf, "END", 3)) {
			sendto(fd, buf, n, 0, (struct sockaddr *)&from, msg.msg_namelen);
			break;
		}
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
			int ttl = -1;

			if ((c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TTL) ||
			    (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_HOPLIMIT))
				memcpy(&ttl, CMSG_DATA(c), sizeof(ttl));
			if (ttl >= 0 && ttl < ttl_min)
				ttl_min = ttl;
			if (ttl > ttl_max)
				ttl_max = ttl;
		}
		inet_ntop(AF_INET6, &from.sin6_addr, peer, sizeof(peer));
		received++;
		sendto(fd, buf, n, 0, (struct sockaddr *)&from, msg.msg_namelen);
	}
	/* An IPv4 peer shows as ::ffff:a.b.c.d */
	printf("peer %s received %lu ttl %d-%d\n", strncmp(peer, "::ffff:", 7) ? peer : peer + 7,
	       received, ttl_min, ttl_max);
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static volatile sig_atomic_t stop_sending;

static void on_sigusr1(int sig)
{
	(void)sig;
	stop_sending = 1;
}

static size_t first_difference(const uint8_t *a, const uint8_t *b)
{
	size_t i = 0;

	while (i < PAYLOAD && a[i] == b[i])
		i++;
	return i;
}

/*
 * A connected UDP socket reports an ICMP error for a datagram it sent (port or host
 * unreachable) to the next send or receive, which fails: the datagram was lost, and is
 * resent as any other. Counted apart from corrupt echoes, and shown.
 */
struct socket_errors {
	unsigned long count;
	int last; /* errno */
};

static void note_error(struct socket_errors *errors)
{
	if (errno == EINTR || errno == EAGAIN)
		return;
	errors->count++;
	errors->last = errno;
}

/*
 * What a corrupt echo was, for whoever reads a failure: its length, the sequence number it
 * starts with, where it first differs from that datagram's payload (of the right length),
 * its first bytes.
 */
static void report_corrupt(const uint8_t *buf, ssize_t len, size_t differs_at, uint32_t next,
			   uint32_t low)
{
	printf("corrupt echo: %zd bytes (want %d), differs from byte %zu, seq %u (sent up to %u, "
	       "oldest unanswered %u), starts",
	       len, PAYLOAD, differs_at, len >= 4 ? payload_seq(buf) : 0, next, low);
	for (ssize_t i = 0; i < len && i < 16; i++)
		printf(" %02x", buf[i]);
	printf("\n");
}

/*
 * The datagrams not yet echoed lie between the oldest of them (low) and the next to send;
 * a ring of RING slots holds their state, and no new datagram is sent while the oldest one
 * is RING behind, so memory and the work per loop stay bounded however long the client
 * runs.
 */
#define RING 65536

static int client(const char *addr, const char *port, uint32_t count, uint32_t settle_ms)
{
	struct addrinfo hints = {.ai_socktype = SOCK_DGRAM}, *ai;
	struct sigaction sa = {.sa_handler = on_sigusr1};
	uint8_t *echoed = calloc(RING, 1);
	double *sent_at = calloc(RING, sizeof(double));
	unsigned long corrupt = 0, resent = 0, done = 0;
	struct socket_errors errors = {};
	uint32_t next = 0, low = 0;
	bool settling = settle_ms > 0; /* the first datagram alone, a pause after its echo */
	int fd;

	if (!echoed || !sent_at || getaddrinfo(addr, port, &hints, &ai))
		return 2;
	sigaction(SIGUSR1, &sa, NULL);
	fd = socket(ai->ai_family, SOCK_DGRAM, 0);
	if (connect(fd, ai->ai_addr, ai->ai_addrlen)) {
		perror("connect");
		return 2;
	}
	/* Give up after 30 s without an echo: a conversation that stalls fails. */
	double stalled_at = now_s() + 30;

	while (now_s() < stalled_at) {
		uint8_t buf[2048], want[PAYLOAD];
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		uint32_t in_flight = 0, seq;

		if (stop_sending)
			count = next;
		while (low < next && echoed[low % RING])
			low++;
		if (low == count)
			break;
		/* Resend anything unanswered for 300 ms; keep the window full. */
		for (uint32_t s = low; s < next; s++) {
			if (echoed[s % RING])
				continue;
			if (now_s() - sent_at[s % RING] > 0.3) {
				payload_fill(want, s, PAYLOAD);
				if (send(fd, want, PAYLOAD, 0) < 0)
					note_error(&errors);
				sent_at[s % RING] = now_s();
				resent++;
			}
			in_flight++;
		}
		while (next < count && in_flight < (settling ? 1 : WINDOW) && next - low < RING) {
			payload_fill(want, next, PAYLOAD);
			if (send(fd, want, PAYLOAD, 0) < 0)
				note_error(&errors); /* resent as if lost */
			echoed[next % RING] = 0;
			sent_at[next++ % RING] = now_s();
			in_flight++;
		}
		if (poll(&pfd, 1, 100) != 1)
			continue;
		ssize_t n = recv(fd, buf, sizeof(buf), 0);

		if (n < 0) {
			note_error(&errors);
			continue;
		}
		seq = n >= 4 ? payload_seq(buf) : 0;
		payload_fill(want, seq, PAYLOAD);
		if (n != PAYLOAD || seq >= next || memcmp(buf, want, PAYLOAD)) {
			if (corrupt++ < 5)
				report_corrupt(buf, n,
					       n == PAYLOAD ? first_difference(buf, want) : 0, next,
					       low);
			continue;
		}
		if (seq >= low && !echoed[seq % RING]) { /* else a resent one's second echo */
			echoed[seq % RING] = 1;
			done++;
			if (settling) {
				struct timespec pause = {settle_ms / 1000,
							 settle_ms % 1000 * 1000000L};

				nanosleep(&pause, NULL);
				settling = false;
			}
			stalled_at = now_s() + 30;
		}
	}
	for (int i = 0; i < 5; i++) { /* tell the server to report */
		uint8_t buf[16];
		struct pollfd pfd = {.fd = fd, .events = POLLIN};

		send(fd, "END", 3, 0);
		if (poll(&pfd, 1, 500) == 1 && recv(fd, buf, sizeof(buf), 0) == 3)
			break;
	}
	if (errors.count)
		printf("socket errors %lu, the last: %s (ICMP errors of datagrams lost, resent)\n",
		       errors.count, strerror(errors.last));
	printf("sent %u echoed %lu corrupt %lu resent %lu\n", next, done, corrupt, resent);
	return done == next && next == count && corrupt == 0 ? 0 : 1;
}

/* fp-udp pong PORT: a TCP server that answers every connection with "pong\n" and closes. */
static int pong(const char *port)
{
	struct sockaddr_in6 addr = {.sin6_family = AF_INET6, .sin6_port = htons(atoi(port))};
	int fd = socket(AF_INET6, SOCK_STREAM, 0), on = 1, off = 0;

	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
	setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
	if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) || listen(fd, 1024)) {
		perror("bind");
		return 2;
	}
	for (;;) {
		int c = accept(fd, NULL, NULL);

		if (c < 0)
			continue;
		if (write(c, "pong\n", 5) != 5)
			perror("write");
		close(c);
	}
}

/* One short TCP exchange: connect, read "pong\n" until the server closes. */
static bool churn_tcp(const struct addrinfo *ai)
{
	char buf[16];
	size_t got = 0;
	int fd = socket(ai->ai_family, SOCK_STREAM, 0);
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	bool ok = false;

	if (fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen))
		goto out;
	while (got < sizeof(buf) && poll(&pfd, 1, 2000) == 1) {
		ssize_t n = read(fd, buf + got, sizeof(buf) - got);

		if (n <= 0)
			break;
		got += n;
	}
	ok = got == 5 && !memcmp(buf, "pong\n", 5);
out:
	close(fd);
	return ok;
}

/* One short UDP conversation from a new source port: a datagram, its echo. */
static bool churn_udp(const struct addrinfo *ai, uint32_t token)
{
	int fd = socket(ai->ai_family, SOCK_DGRAM, 0);
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	uint32_t echo = ~token;
	bool ok = false;

	if (fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen))
		goto out;
	for (int attempt = 0; attempt < 3 && !ok; attempt++) {
		send(fd, &token, sizeof(token), 0);
		if (poll(&pfd, 1, 1000) == 1 && recv(fd, &echo, sizeof(echo), 0) == sizeof(echo))
			ok = echo == token;
	}
out:
	close(fd);
	return ok;
}

/*
 * fp-udp churn ADDR PORT SECONDS: short connections for SECONDS, alternating a TCP exchange
 * with "fp-udp pong PORT" and a UDP one with "fp-udp server PORT"; prints "ok N failed M".
 */
static int churn(const char *addr, const char *port, double seconds)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai;
	unsigned long ok = 0, failed = 0;
	double end = now_s() + seconds;
	uint32_t token = getpid() << 16;

	if (getaddrinfo(addr, port, &hints, &ai))
		return 2;
	while (now_s() < end) {
		churn_tcp(ai) ? ok++ : failed++;
		churn_udp(ai, token++) ? ok++ : failed++;
	}
	printf("ok %lu failed %lu\n", ok, failed);
	return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "server"))
		return server(argv[2]);
	if ((argc == 5 || argc == 6) && !strcmp(argv[1], "client"))
		return client(argv[2], argv[3], strtoul(argv[4], NULL, 0) ?: UINT32_MAX,
			      argc == 6 ? strtoul(argv[5], NULL, 0) : 0);
	if (argc == 3 && !strcmp(argv[1], "pong"))
		return pong(argv[2]);
	if (argc == 5 && !strcmp(argv[1], "churn"))
		return churn(argv[2], argv[3], strtod(argv[4], NULL));
	fprintf(stderr, "usage: fp-udp server PORT | fp-udp client ADDR PORT COUNT [SETTLE_MS] |\n"
			"       fp-udp pong PORT | fp-udp churn ADDR PORT SECONDS\n");
	return 2;
}
