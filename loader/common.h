/* SPDX-License-Identifier: GPL-2.0-only */
/* Declarations shared by the files of the xdp-fastpath command. */
#ifndef FP_LOADER_COMMON_H
#define FP_LOADER_COMMON_H

#include <stdbool.h>
#include <stdint.h>
#include <limits.h>
#include <stddef.h>

#include "xdp_fastpath.h"

#define FP_VERSION "0.1.0"

/* Options common to every command, and those of attach and the daemon. */
struct fp_options {
	const char *pin_dir; /* --pin-dir, XDP_FASTPATH_PIN_DIR */
	bool json;	     /* --json */
	bool watch;	     /* --watch */
	bool foreground;     /* --foreground */
	int mode;	     /* XDP_FLAGS_DRV_MODE, XDP_FLAGS_SKB_MODE, or 0 for auto */
	uint32_t flows;	     /* --flows: entries per family */
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
};

/* An open instance: the pinned program and maps of one pin directory. */
struct fp_instance {
	char pin_dir[PATH_MAX];
	char name[NAME_MAX + 1]; /* basename of pin_dir: names pid and lock files */
	int prog_fd;
	uint32_t prog_id;
	int flows4_fd, flows6_fd, stats_fd, config_fd, tx_ports_fd, daemon_fd;
	int ingress_fd, egress_fd, fdb_fd; /* layer 2 below routed interfaces (topology.c) */
	int cpus_fd, steer_fd;		   /* --steer's cpumap and CPU list (steer.c) */
};

/* Errors: one line on stderr, "xdp-fastpath: ...". */
void fp_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void fp_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
extern int fp_log_level; /* LOG_* of syslog.h; messages above it are dropped */
extern bool fp_log_to_syslog;

uint64_t fp_now_ns(void); /* CLOCK_MONOTONIC_COARSE, the clock of the datapath */
/* now - then, or 0 if then is later: the datapath stamps packets while we read the clock. */
static inline uint64_t fp_elapsed_ns(uint64_t now, uint64_t then)
{
	return now > then ? now - then : 0;
}
int fp_ifname(int ifindex, char *buf); /* "?" when unknown; buf of IF_NAMESIZE */
/* A CPU list ("0-3,5", as in /sys/devices/system/cpu/online) into set[0..max-1]: returns
 * the highest CPU + 1, -EINVAL for bad syntax, -ERANGE for a CPU >= max. */
int fp_parse_cpulist(const char *list, bool *set, int max);
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
/* The same on a NETLINK_ROUTE socket opened for the one request and closed after it. */
int fp_rtnl_request(struct nlmsghdr *req, bool dump, fp_nl_cb cb, void *data);
/* Asks rtnetlink for the link ifindex (RTM_GETLINK), the answer to cb. */
int fp_rtnl_get_link(int ifindex, fp_nl_cb cb, void *data);

/* instance.c */
struct xdp_fastpath;
int fp_check_environment(const char *pin_dir, bool may_mount);
int fp_instance_open(struct fp_instance *inst, const char *pin_dir);
int fp_command_open(const char *cmd, int argc, const struct fp_options *opt,
		    struct fp_instance *inst);
/* The embedded datapath, opened for a kernel with these FP_KERNEL_* features; not loaded. */
struct xdp_fastpath *fp_datapath_open(uint32_t kernel);
int fp_instance_create(struct fp_instance *inst, const struct fp_options *opt);
void fp_instance_close(struct fp_instance *inst);
void fp_instance_unpin(const char *pin_dir);
int fp_instance_lock(const struct fp_instance *inst);
void fp_instance_unlock(void);
void fp_link_pin_path(const struct fp_instance *inst, int ifindex, char *buf, size_t len);
int fp_read_config(const struct fp_instance *inst, struct fp_config *cfg);
int fp_write_config(const struct fp_instance *inst, const struct fp_config *cfg);
int fp_read_stats(const struct fp_instance *inst, uint64_t stats[FP_STAT_MAX]);
int fp_tx_ports(const struct fp_instance *inst, uint32_t *ifindexes, int max);
bool fp_tx_port_attached(const struct fp_instance *inst, uint32_t ifindex); /* in the devmap */

/* xdp_features.c */
#define FP_XDP_ACT_NDO_XMIT 4 /* NETDEV_XDP_ACT_NDO_XMIT: takes redirected frames */
/* The device's NETDEV_XDP_ACT_* flags; -EOPNOTSUPP when the kernel cannot say (< 6.3). */
int fp_xdp_features(int ifindex, uint64_t *features);
/*
 * Whether ifindex takes frames redirected to it by native XDP: 1, or 0 and why not in why
 * (if it is a veth; may be NULL), -EOPNOTSUPP when the kernel cannot say (before 6.3, for
 * another device or a veth whose peer is not found), or another -errno.
 */
int fp_takes_redirects(int ifindex, char *why, size_t len);

/* steer.c */
/* --steer: a cpumap entry running the fastpath on each CPU of cpus (a CPU list, NULL: all
 * online), and the config on. */
int fp_steer_enable(const struct fp_instance *inst, const char *cpus);
void fp_run_paths(const struct fp_instance *inst, char *pid, char *lock, size_t len);

/* flows.c */
uint32_t fp_flows_delete_ifindex(const struct fp_instance *inst, uint32_t ifindex);
int fp_flows_count(const struct fp_instance *inst, uint32_t *v4, uint32_t *v6);

/* daemon.c */
int fp_daemon_start(struct fp_instance *inst, const struct fp_options *opt);
int fp_daemon_stop(const struct fp_instance *inst);
int fp_daemon_pid(const struct fp_instance *inst);

/* Commands. */
int cmd_attach(int argc, char **argv, struct fp_options *opt);
int cmd_detach(int argc, char **argv, struct fp_options *opt);
int cmd_status(int argc, char **argv, struct fp_options *opt);
int cmd_stats(int argc, char **argv, struct fp_options *opt);
int cmd_flows(int argc, char **argv, struct fp_options *opt);
int cmd_flush(int argc, char **argv, struct fp_options *opt);

#endif
