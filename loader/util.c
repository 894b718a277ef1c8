// SPDX-License-Identifier: GPL-2.0-only
/* Messages and small helpers. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <net/if.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <libmnl/libmnl.h>

#include "common.h"

int fp_log_level = LOG_NOTICE;
bool fp_log_to_syslog;

/*
 * Whether stderr is systemd's journal (JOURNAL_STREAM names its device and inode): then
 * each line starts with its syslog level, "<5>", which journald turns into the priority.
 */
static bool stderr_is_journal(void)
{
	const char *env = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	/* Asked each time: a background daemon's stderr becomes its log file. */
	return env && sscanf(env, "%llu:%llu", &dev, &ino) == 2 && !fstat(STDERR_FILENO, &st) &&
	       st.st_dev == dev && st.st_ino == ino;
}

static void vlog(int level, const char *fmt, va_list ap)
{
	if (fp_log_to_syslog) {
		vsyslog(level, fmt, ap);
		return;
	}
	if (stderr_is_journal())
		fprintf(stderr, "<%d>", level);
	fputs("xdp-fastpath: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

/* Errors are shown whatever the log level. */
void fp_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_ERR, fmt, ap);
	va_end(ap);
}

void fp_log(int level, const char *fmt, ...)
{
	va_list ap;

	if (level > fp_log_level)
		return;
	va_start(ap, fmt);
	vlog(level, fmt, ap);
	va_end(ap);
}

/*
 * libbpf warns of every attribute it finds twice in a netlink message. On architectures
 * without efficient unaligned access (MIPS: most routers) the kernel pads each 64-bit
 * attribute of a link with an IFLA_PAD (42) before it, so every bpf_xdp_query() there
 * warned four times, in attach, status and the daemon's log. The padding means nothing.
 */
static bool libbpf_noise(const char *fmt, va_list ap)
{
	static const char pad[] = "libbpf: Attribute of type 0x2a found multiple times";
	char text[sizeof(pad)];
	va_list copy;

	if (!strstr(fmt, "found multiple times"))
		return false;
	va_copy(copy, ap);
	vsnprintf(text, sizeof(text), fmt, copy);
	va_end(copy);
	return !strcmp(text, pad);
}

int fp_libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && fp_log_level < LOG_DEBUG)
		return 0;
	if (level == LIBBPF_INFO && fp_log_level < LOG_INFO)
		return 0;
	if (libbpf_noise(fmt, ap))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

uint64_t fp_now_ns(void)
{
	struct timespec ts;

	/* Like the datapath's clock (jiffies, clock.c), it may lag CLOCK_MONOTONIC a tick. */
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int fp_ifname(int ifindex, char *buf)
{
	if (!if_indextoname(ifindex, buf)) {
		snprintf(buf, IF_NAMESIZE, "if%d", ifindex);
		return -1;
	}
	return 0;
}

/*
 * libmnl's mnl_nlmsg_ok() casts nlmsg_len to int, so a length of 2 GiB or more passes as
 * "fits": mnl_cb_run() would then walk past the buffer. The kernel never sends such a
 * message, but a parser must not trust that: a read with one is dropped whole.
 */
bool fp_nlmsg_stream_ok(const void *buf, size_t len)
{
	const struct nlmsghdr *nlh = buf;

	while (len >= sizeof(*nlh)) {
		size_t step = NLMSG_ALIGN(nlh->nlmsg_len);

		if (nlh->nlmsg_len < sizeof(*nlh) || nlh->nlmsg_len > len)
			return false;
		if (step >= len)
			break;
		len -= step;
		nlh = (const struct nlmsghdr *)((const char *)nlh + step);
	}
	return true;
}

/* -errno after a failed mnl_cb_run(): libmnl sets errno from the message's error field, which
 * a malformed message may make anything (INT_MIN cannot even be negated). */
int fp_nl_error(void)
{
	return errno > 0 && errno < 4096 ? -errno : -EIO;
}

uint32_t fp_read_u32_file(const char *path, uint32_t fallback)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	uint32_t value;

	if (fd < 0)
		return fallback;
	value = fp_pread_u32(fd, fallback);
	close(fd);
	return value;
}

uint32_t fp_pread_u32(int fd, uint32_t fallback)
{
	char text[24], *end;
	ssize_t len = pread(fd, text, sizeof(text) - 1, 0);
	unsigned long value;

	if (len <= 0)
		return fallback;
	text[len] = 0;
	errno = 0;
	value = strtoul(text, &end, 10);
	return end == text || errno || value > UINT32_MAX ? fallback : (uint32_t)value;
}

int fp_parse_cpulist(const char *list, bool *set, int max)
{
	const char *p = list;
	int n = 0;

	memset(set, 0, max * sizeof(*set));
	for (;;) {
		char *end;
		long first = strtol(p, &end, 10), last = first;

		if (end == p || first < 0)
			return -EINVAL;
		p = end;
		if (*p == '-') {
			last = strtol(++p, &end, 10);
			if (end == p || last < first)
				return -EINVAL;
			p = end;
		}
		if (last >= max)
			return -ERANGE;
		for (long cpu = first; cpu <= last; cpu++)
			set[cpu] = true;
		if (last + 1 > n)
			n = last + 1;
		if (*p == '\n' || !*p)
			return n;
		if (*p++ != ',')
			return -EINVAL;
	}
}

/* Reads until cb or the kernel ends the conversation (MNL_CB_STOP: NLMSG_DONE), or once. */
static int nl_talk(struct mnl_socket *nl, struct nlmsghdr *req, char *buf, size_t len, fp_nl_cb cb,
		   void *data, bool once)
{
	uint32_t portid = mnl_socket_get_portid(nl), seq = req->nlmsg_seq;
	ssize_t n;
	int ret;

	if (mnl_socket_sendto(nl, req, req->nlmsg_len) < 0)
		return -errno;
	do {
		n = mnl_socket_recvfrom(nl, buf, len);
		if (n < 0)
			return -errno;
		if (!fp_nlmsg_stream_ok(buf, n))
			return -EBADMSG;
		ret = mnl_cb_run(buf, n, seq, portid, cb, data);
	} while (!once && ret > MNL_CB_STOP);
	return ret < 0 ? fp_nl_error() : 0;
}

int fp_nl_dump(struct mnl_socket *nl, struct nlmsghdr *req, char *buf, size_t len, fp_nl_cb cb,
	       void *data)
{
	req->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	return nl_talk(nl, req, buf, len, cb, data, false);
}

int fp_nl_ask(struct mnl_socket *nl, struct nlmsghdr *req, char *buf, size_t len, fp_nl_cb cb,
	      void *data)
{
	req->nlmsg_flags = NLM_F_REQUEST;
	return nl_talk(nl, req, buf, len, cb, data, true);
}

int fp_nl_request(struct mnl_socket *nl, struct nlmsghdr *req, char *buf, size_t len, fp_nl_cb cb,
		  void *data)
{
	return nl_talk(nl, req, buf, len, cb, data, false);
}

int fp_rtnl_request(struct nlmsghdr *req, bool dump, fp_nl_cb cb, void *data)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct mnl_socket *nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
	int err;

	if (!nl || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID))
		err = -errno;
	else if (dump)
		err = fp_nl_dump(nl, req, buf, sizeof(buf), cb, data);
	else
		err = fp_nl_ask(nl, req, buf, sizeof(buf), cb, data);
	if (nl)
		mnl_socket_close(nl);
	return err;
}

int fp_rtnl_get_link(int ifindex, fp_nl_cb cb, void *data)
{
	char req[NLMSG_SPACE(sizeof(struct ifinfomsg))];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(req);
	struct ifinfomsg *ifi;

	nlh->nlmsg_type = RTM_GETLINK;
	nlh->nlmsg_seq = time(NULL);
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = ifindex;
	return fp_rtnl_request(nlh, false, cb, data);
}

int fp_ethtool_value(int sock, const char *name, uint32_t cmd, uint32_t *data)
{
	struct ethtool_value value = {.cmd = cmd};
	struct ifreq ifr = {.ifr_data = (void *)&value};

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (ioctl(sock, SIOCETHTOOL, &ifr))
		return -errno;
	*data = value.data;
	return 0;
}

int fp_ethtool_get(int sock, const char *name, uint32_t cmd, bool *on)
{
	uint32_t data;
	int err = fp_ethtool_value(sock, name, cmd, &data);

	if (!err)
		*on = data;
	return err;
}
