/* SPDX-License-Identifier: GPL-2.0-only */
/* What every file of the xdp-fastpath command shares: options, the instance, messages,
 * netlink helpers (util.c). Each module declares the rest in its own header. */
#ifndef FP_LOADER_COMMON_H
#define FP_LOADER_COMMON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <limits.h>
#include <stddef.h>

#include <bpf/libbpf.h>

#include "xdp_fastpath.h"

#define FP_VERSION "0.1.0"
#define NSEC	   1000000000ull /* nanoseconds in a second */

/* Options common to every command, and those of attach and the daemon. */
struct fp_options {
	const char *pin_dir; /* --pin-dir, XDP_FASTPATH_PIN_DIR */
	bool json;	     /* --json */
	bool watch;	     /* --watch */
	bool foreground;     /* --foreground */
	int mode;	     /* --mode: enum fp_hook (hooks.h), 0 for auto */
	uint32_t flows;	     /* --flows: entries per family; 0: from conntrack's limit */
	uint32_t lease_s;    /* --lease */
	uint32_t scan_ms;    /* --scan-ms */
	uint32_t skip_mark;  /* --skip-mark MARK[/MASK] */
	uint32_t skip_mask;
	int verbose;		/* -v */
	const char *log_file;	/* --log-file: the background daemon's log instead of syslog */
	uint32_t event_buffer;	/* --event-buffer: conntrack event socket buffer, bytes */
	bool allow_shaping;	/* --allow-shaping: attach to interfaces with a shaping qdisc */
	bool steer;		/* --steer: spread packets over CPUs by flow (steer.c) */
	const char *steer_cpus; /* --steer=LIST: over these CPUs only; NULL: all online */
	uint32_t scoped_given;	/* which of the options only some commands take were given */
};

/* An open instance: the pinned program and maps of one pin directory. */
struct fp_instance {
	char pin_dir[PATH_MAX];
	char name[NAME_MAX + 1]; /* basename of pin_dir: names pid and lock files */
	int prog_fd;		 /* the XDP entry point */
	uint32_t prog_id;
	int prog_tc_fd; /* the tc entry point; -1 in an instance pinned without it */
	uint32_t prog_tc_id;
	int flows4_fd, flows6_fd, stats_fd, config_fd, tx_ports_fd, daemon_fd;
	int ingress_fd, egress_fd, fdb_fd; /* layer 2 below routed interfaces (topology.c) */
	int cpus_fd, steer_fd;		   /* --steer's cpumap and CPU list (steer.c) */
	int ports_fd;			   /* FP_PORT_* of attached ports (hooks.c) */
	int marks4_fd, marks6_fd;	   /* conntrack marks of marked flows (flowmap.c) */
	int nat6_fd, nh_ctx_fd, nh_claim_fd; /* IPv6 entries' translations and next hops */
	struct fp_slots *slots4;	   /* fp_flows4, mapped (slottable.c) */
	struct fp_slots *slots6;	   /* fp_flows6, mapped */
};

/* Errors: one line on stderr, "xdp-fastpath: ...". */
void fp_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void fp_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
extern int fp_log_level; /* LOG_* of syslog.h; messages above it are dropped */
extern bool fp_log_to_syslog;
/* libbpf's messages, by fp_log_level, without its noise (util.c): libbpf_set_print()'s. */
int fp_libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap);

uint64_t fp_now_ns(void); /* CLOCK_MONOTONIC_COARSE: within a tick of the datapath's */
/* now - then, or 0 if then is later: the datapath stamps packets while we read the clock. */
static inline uint64_t fp_elapsed_ns(uint64_t now, uint64_t then)
{
	return now > then ? now - then : 0;
}
int fp_ifname(int ifindex, char *buf); /* "?" when unknown; buf of IF_NAMESIZE */
/* An ethtool value (ETHTOOL_GFLAGS: ETH_FLAG_RXVLAN...) of device @name, asked on @sock. */
int fp_ethtool_value(int sock, const char *name, uint32_t cmd, uint32_t *data);
/* An ethtool flag (ETHTOOL_GGRO, ETHTOOL_GTXCSUM...) of device @name, asked on @sock. */
int fp_ethtool_get(int sock, const char *name, uint32_t cmd, bool *on);
/* A CPU list ("0-3,5", as in /sys/devices/system/cpu/online) into set[0..max-1]: returns
 * the highest CPU + 1, -EINVAL for bad syntax, -ERANGE for a CPU >= max. */
int fp_parse_cpulist(const char *list, bool *set, int max);
/* The unsigned number a file starts with (a sysctl, a sysfs attribute), or @fallback if it
 * cannot be read. */
uint32_t fp_read_u32_file(const char *path, uint32_t fallback);
/* The same, of an open file read from its start again (pread: a sysctl kept open). */
uint32_t fp_pread_u32(int fd, uint32_t fallback);
/* Every netlink message in buf lies within it (see util.c). */
bool fp_nlmsg_stream_ok(const void *buf, size_t len);
int fp_nl_error(void); /* -errno after mnl_cb_run() failed, always a valid one */
struct mnl_socket;
struct nlmsghdr;
typedef int (*fp_nl_cb)(const struct nlmsghdr *nlh, void *data); /* libmnl's mnl_cb_t */
/*
 * Sends req (its type, payload and nlmsg_seq filled in) on nl and feeds the answers, read
 * into buf, to cb: fp_nl_dump as a dump, until NLMSG_DONE; fp_nl_ask as one request, whose
 * answer is one read. Every read is checked with fp_nlmsg_stream_ok. 0 or -errno.
 */
int fp_nl_dump(struct mnl_socket *nl, struct nlmsghdr *req, char *buf, size_t len, fp_nl_cb cb,
	       void *data);
int fp_nl_ask(struct mnl_socket *nl, struct nlmsghdr *req, char *buf, size_t len, fp_nl_cb cb,
	      void *data);
/* req with the flags it has, answered until an acknowledgement or NLMSG_DONE. */
int fp_nl_request(struct mnl_socket *nl, struct nlmsghdr *req, char *buf, size_t len, fp_nl_cb cb,
		  void *data);
/* The same on a NETLINK_ROUTE socket opened for the one request and closed after it. */
int fp_rtnl_request(struct nlmsghdr *req, bool dump, fp_nl_cb cb, void *data);
/* Asks rtnetlink for the link ifindex (RTM_GETLINK), the answer to cb. */
int fp_rtnl_get_link(int ifindex, fp_nl_cb cb, void *data);

#endif
