// SPDX-License-Identifier: GPL-2.0-only
/*
 * The sync daemon: one per instance, started by attach (in the background with a pid file,
 * or in the foreground for procd and systemd). One thread, one poll loop:
 *   conntrack events  -> flow entries          (conntrack_sync.c)
 *   rtnetlink events  -> next-hop generation    (route_watch.c)
 *   scan timer        -> timeouts, expiry, heartbeat, counters
 *   SIGTERM/SIGINT    -> clean stop; SIGHUP -> forget everything and resync
 *   SIGUSR1           -> awaited ports the operator detached      (reattach.c)
 * A clean stop removes the flows and stales the heartbeat, so the kernel takes over at
 * once; a killed daemon stops renewing the heartbeat and the kernel takes over within the
 * lease. Either way no connection breaks: the kernel still has every conntrack entry.
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>
#endif

#include "clock.h"
#include "common.h"
#include "conntrack_sync.h"
#include "daemon.h"
#include "firewall_watch.h"
#include "ipsec_watch.h"
#include "flowmap.h"
#include "hooks.h"
#include "instance.h"
#include "reattach.h"
#include "route_watch.h"
#include "slottable.h"

/* The first dump of a large conntrack table takes a while (about 15 s for 1M entries here). */
#define READY_TIMEOUT_MS 120000

struct daemon {
	struct fp_instance *inst;
	const struct fp_options *opt;
	struct fp_daemon_state state;
	struct fp_ctsync cs;
	struct fp_route route;
	struct fp_firewall firewall;
	struct fp_ipsec ipsec;
	struct fp_topology topo;
	struct fp_reattach reattach; /* attached ports deleted, attached again when back */
	int timer_fd, signal_fd;
	size_t table_peak;			    /* records, since the last malloc_trim() */
	uint64_t last_heartbeat_ns, late_logged_ns; /* scan()'s, for the late-heartbeat warning */
	bool nh_ctx_tidy; /* the next-hop contexts have no entries an earlier daemon left */
	struct fp_clock_retry clock_retry;	    /* the datapath's clock, when it has none */
};

/* The pid of the instance's running daemon, or 0. */
int fp_daemon_pid(const struct fp_instance *inst)
{
	char path[PATH_MAX], comm[64] = "";
	FILE *f;
	int pid = 0, fd;

	fp_run_paths(inst, path, NULL, sizeof(path));
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC); /* the daemon writes a regular file */
	f = fd >= 0 ? fdopen(fd, "r") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	if (fscanf(f, "%d", &pid) != 1 || pid <= 0)
		pid = 0;
	fclose(f);
	if (pid <= 0 || kill(pid, 0))
		return 0;
	/* A stale pid file may name a pid reused by something else. */
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (!fgets(comm, sizeof(comm), f))
		comm[0] = '\0';
	fclose(f);
	return strncmp(comm, "xdp-fastpath", 12) ? 0 : pid;
}

static int write_pid_file(const struct fp_instance *inst)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8];
	FILE *f;
	int fd;

	fp_run_paths(inst, path, NULL, sizeof(path));
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	/* O_EXCL|O_NOFOLLOW and a rename: no symlink in /run can redirect the write. */
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		return -errno;
	}
	fprintf(f, "%d\n", getpid());
	fclose(f);
	return rename(tmp, path) ? -errno : 0;
}

static void remove_pid_file(const struct fp_instance *inst)
{
	char path[PATH_MAX];

	fp_run_paths(inst, path, NULL, sizeof(path));
	unlink(path);
}

static void publish_state(struct daemon *d)
{
	uint32_t zero = 0;

	bpf_map_update_elem(d->inst->daemon_fd, &zero, &d->state, 0);
}

/* write_heartbeat's flags */
enum {
	HEARTBEAT_BUMP_GEN = 1 << 0,	/* every cached next hop is to be looked up again */
	HEARTBEAT_CHECK_CLOCK = 1 << 1, /* see that the datapath's clock still keeps time */
};

struct heartbeat {
	struct daemon *d;
	uint64_t now;
	unsigned int flags; /* HEARTBEAT_* */
	uint32_t old_gen, new_gen; /* the next-hop generation it bumped from and to, or 0 */
};

static void check_clock(struct fp_clock *clock, struct fp_clock_retry *retry, uint64_t now)
{
	bool had_tick = clock->tick_ns;

	if (fp_clock_check(clock, retry, now) <= 0)
		return;
	if (!had_tick)
		fp_log(LOG_NOTICE, "calibrated the datapath's jiffies clock: a tick of %llu ns",
		       (unsigned long long)clock->tick_ns);
	else if (clock->tick_ns)
		fp_log(LOG_NOTICE, "the datapath's clock had drifted: calibrated it again");
	else
		fp_log(LOG_NOTICE, "the datapath's clock had drifted and did not calibrate: the "
				   "kernel's clock it is until it does");
}

static void change_heartbeat(struct fp_config *cfg, void *arg)
{
	struct heartbeat *hb = arg;
	struct daemon *d = hb->d;

	if ((hb->flags & HEARTBEAT_CHECK_CLOCK) && (cfg->kernel & FP_KERNEL_JIFFIES))
		check_clock(&cfg->clock, &d->clock_retry, hb->now);
	cfg->heartbeat_ns = hb->now;
	/* The lease is the running daemon's (--lease): a clean stop may have shortened it. */
	cfg->lease_ns = (uint64_t)d->opt->lease_s * 1000000000ull;
	cfg->flags &= ~(FP_CONFIG_BRIDGE_PORTS | FP_CONFIG_TCP_TO_TC | FP_CONFIG_PARTIAL_CSUM);
	if (d->topo.bridge_ports)
		cfg->flags |= FP_CONFIG_BRIDGE_PORTS;
	cfg->flags |= fp_hook_config_flags(d->inst);
	if (hb->flags & HEARTBEAT_BUMP_GEN) {
		hb->old_gen = cfg->nh_gen;
		hb->new_gen = cfg->nh_gen = fp_nh_gen_next(cfg->nh_gen);
	}
}

static void write_heartbeat(struct daemon *d, uint64_t now, unsigned int flags)
{
	struct heartbeat hb = {.d = d, .now = now, .flags = flags};

	/* New bridge ports, VLANs or FDB entries: every cached next hop may be wrong. */
	if (ports_take_topology_changed(&d->cs.ports))
		hb.flags |= HEARTBEAT_BUMP_GEN;
	if (fp_change_config(d->inst, change_heartbeat, &hb)) {
		d->state.errors++;
		return;
	}
	if (hb.new_gen) {
		d->state.nh_bumps++;
		/* Into the other half of the next-hop contexts: what keeps 8-bit generations
		 * apart, and the contexts of the half left free for its next turn. */
		if (fp_nh_ctx_half(hb.new_gen) != fp_nh_ctx_half(hb.old_gen) || !d->nh_ctx_tidy) {
			if (fp_flows_forget_next_hops(d->inst, hb.new_gen))
				d->state.errors++;
			else
				d->nh_ctx_tidy = true;
		}
	}
}

static void expire_heartbeat(struct fp_config *cfg, void *arg)
{
	(void)arg;
	cfg->heartbeat_ns = 0;
	/* With no lease the heartbeat is not checked: the shortest one stops forwarding too.
	 * The next daemon writes its own lease. */
	if (!cfg->lease_ns)
		cfg->lease_ns = 1;
}

/* A heartbeat that has expired: the datapath passes everything from now on. */
static void stale_heartbeat(const struct fp_instance *inst)
{
	fp_change_config(inst, expire_heartbeat, NULL);
}

/*
 * Heartbeats more than half the lease apart (a starved daemon, or scans that take seconds)
 * let the datapath pass everything to the kernel: said in the log, at most once a minute,
 * so that an operator, or a failed test, can tell why pass_heartbeat grew.
 */
static void warn_if_late(struct daemon *d, uint64_t scan_start, uint64_t now)
{
	uint64_t gap = now - d->last_heartbeat_ns, lease = (uint64_t)d->opt->lease_s * NSEC;

	/* Never logged yet: a router is often less than a minute up (CLOCK_MONOTONIC) when
	 * its first heartbeat is late. */
	if (d->last_heartbeat_ns && lease && gap > lease / 2 &&
	    (!d->late_logged_ns || now - d->late_logged_ns > 60 * NSEC)) {
		fp_log(LOG_WARNING,
		       "heartbeats %.1f s apart (this scan took %.1f s), against a lease of %u s",
		       (double)gap / NSEC, (double)(now - scan_start) / NSEC, d->opt->lease_s);
		d->late_logged_ns = now;
	}
	d->last_heartbeat_ns = now;
}

/* Attaches the awaited ports that are back; their connections come from a dump. Called
 * with none awaited too: for an operator's request, which reattach_try takes first. */
static void reattach(struct daemon *d)
{
	if (reattach_try(&d->reattach) > 0)
		ctsync_port_attached(&d->cs);
}

static void scan(struct daemon *d)
{
	uint64_t start = fp_now_ns(), now;

	/* Deaf to veth peers' namespaces: read the ports' configuration at every scan. */
	if (route_peer_watch_fd(&d->route) < 0)
		d->cs.ports.stale = true;
	reattach(d); /* one it could not lock for, or whose event it missed */
	ctsync_scan(&d->cs, start);
	/* After a burst of connections ends, return the freed records' pages to the system:
	 * glibc keeps them otherwise, and a router's memory is small. */
	if (d->cs.table.count > d->table_peak) {
		d->table_peak = d->cs.table.count;
	} else if (d->table_peak >= 4096 && d->cs.table.count < d->table_peak / 2) {
		malloc_trim(0);
		d->table_peak = d->cs.table.count;
	}
	/* The heartbeat says when the daemon was last seen alive: at the scan's end. Stamped
	 * with its start, a scan that takes seconds (a router under load, an emulated guest)
	 * would start the lease that much spent. */
	now = fp_now_ns();
	write_heartbeat(d, now, HEARTBEAT_CHECK_CLOCK);
	warn_if_late(d, start, now);
	d->state.scans++;
	publish_state(d);
}

static void handle_route_changes(struct daemon *d)
{
	struct fp_route_changes changes;

	route_watch_read(&d->route, &changes);
	/* Read at the next scan, or right away below: shapers and veth peers may hold ports'
	 * connections in the kernel now, or no longer. */
	if (changes.ports_changed)
		d->cs.ports.stale = true;
	for (int i = 0; i < changes.nr_deleted; i++) {
		const char *name = changes.deleted_names[i];

		/* The kernel dropped it from the devmap; drop its flows and its dead pins. */
		fp_log(LOG_NOTICE, "interface %u (%s) was deleted: removing its flows",
		       changes.deleted[i], name[0] ? name : "?");
		ctsync_drop_ifindex(&d->cs, changes.deleted[i]);
		reattach_await(&d->reattach, changes.deleted[i], name);
		fp_hook_forget(d->inst, changes.deleted[i]);
	}
	if (changes.nexthops_changed) {
		/* Routes first: from now on every cached next hop is looked up again. */
		write_heartbeat(d, fp_now_ns(), HEARTBEAT_BUMP_GEN);
		/* Links or bridge FDB entries changed: the layer-2 maps may too. If they do,
		 * next hops looked up meanwhile are stale: write_heartbeat bumps once more. IP
		 * neighbours come and go all the time on a busy LAN, and need no re-read. */
		if (changes.l2_changed)
			ctsync_read_ports(&d->cs);
		if (d->cs.ports.topology_changed)
			write_heartbeat(d, fp_now_ns(), 0);
	}
	if (changes.l2_changed) /* a link came, or came up */
		reattach(d);
}

static int setup_fds(struct daemon *d)
{
	struct itimerspec its = {0};
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGUSR1);
	if (sigprocmask(SIG_BLOCK, &mask, NULL))
		return -errno;
	d->signal_fd = signalfd(-1, &mask, SFD_CLOEXEC);
	d->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	if (d->signal_fd < 0 || d->timer_fd < 0)
		return -errno;
	its.it_interval.tv_sec = d->opt->scan_ms / 1000;
	its.it_interval.tv_nsec = (long)(d->opt->scan_ms % 1000) * 1000000;
	its.it_value = its.it_interval;
	return timerfd_settime(d->timer_fd, 0, &its, NULL) ? -errno : 0;
}

/* Runs until SIGTERM. ready_fd, if not -1, gets one byte once the first dump is applied. */
static int daemon_run(struct fp_instance *inst, const struct fp_options *opt, int ready_fd)
{
	struct daemon d = {.inst = inst, .opt = opt, .timer_fd = -1, .signal_fd = -1};
	int err;

	d.state.pid = getpid();
	d.state.flags = FP_DAEMON_UNAWAIT | (opt->allow_shaping ? FP_DAEMON_ALLOW_SHAPING : 0);
	d.state.started_ns = fp_now_ns();
	d.reattach.inst = inst;
	d.reattach.allow_shaping = opt->allow_shaping;
	/* What the daemon before awaited, or what a supervisor's attach named and is not there. */
	d.reattach.nr_awaited = reattach_read(inst, d.reattach.awaited, FP_REATTACH_MAX);
	for (int i = 0; i < d.reattach.nr_awaited; i++)
		d.reattach.awaited[i].failed_ifindex = 0; /* tried again */
	/* Every millisecond between a conntrack event and its flow entry is traffic on the slow
	 * path: under load, the daemon must win the CPU against the traffic it offloads. */
	if (setpriority(PRIO_PROCESS, 0, -10))
		fp_log(LOG_INFO, "cannot raise the daemon's priority: %s", strerror(errno));
	err = setup_fds(&d);
	if (err) {
		fp_err("daemon setup failed: %s", strerror(-err));
		return 1;
	}
	if (route_open(&d.route) || firewall_open(&d.firewall) || topology_open(&d.topo) ||
	    ipsec_open(&d.ipsec))
		return 1;
	if (d.ipsec.nr)
		fp_log(LOG_NOTICE,
		       "%zu IPsec policies: the connections they may take stay in "
		       "the kernel",
		       d.ipsec.nr);
	/* Events before the dump: nothing falls between the two. */
	if (ctsync_open(&d.cs, inst, opt, &d.state, &d.route))
		return 1;
	/* What an earlier daemon was inserting or deleting when it died. */
	inst->slots4->owner = inst->slots6->owner = true;
	fp_slots_reclaim_orphans(inst->slots4);
	fp_slots_reclaim_orphans(inst->slots6);
	d.cs.ports.topo = &d.topo;
	d.cs.ipsec = &d.ipsec;
	if (ctsync_resync(&d.cs))
		return 1;
	/* Entries a daemon that died left for connections that are gone: deleted before the
	 * heartbeat makes the maps live again, not a scan later. Meanwhile they would forward
	 * a new connection with the same tuple past conntrack, translated as the old one. */
	ctsync_scan(&d.cs, fp_now_ns());
	fp_flows_sync(inst);
	write_heartbeat(&d, fp_now_ns(), HEARTBEAT_BUMP_GEN | HEARTBEAT_CHECK_CLOCK);
	publish_state(&d);
	err = write_pid_file(inst);
	if (err) {
		fp_err("cannot write the pid file: %s", strerror(-err));
		return 1;
	}
	fp_log(LOG_NOTICE, "daemon running (pid %d), %zu connections offloaded", getpid(),
	       d.cs.table.count);
	if (ready_fd >= 0) {
		if (write(ready_fd, "R", 1) != 1)
			fp_log(LOG_WARNING, "could not report readiness");
		close(ready_fd);
	}

	for (;;) {
		struct pollfd pfd[7] = {
			{.fd = ctsync_event_fd(&d.cs), .events = POLLIN},
			{.fd = route_watch_fd(&d.route), .events = POLLIN},
			{.fd = d.timer_fd, .events = POLLIN},
			{.fd = d.signal_fd, .events = POLLIN},
			{.fd = firewall_fd(&d.firewall), .events = POLLIN},
			{.fd = ipsec_fd(&d.ipsec), .events = POLLIN}, /* -1: skipped */
			{.fd = route_peer_watch_fd(&d.route), .events = POLLIN},
		};

		if (poll(pfd, 7, -1) < 0) {
			if (errno == EINTR)
				continue;
			fp_err("poll: %s", strerror(errno));
			break;
		}
		/* A stop first: with a million connections a scan takes seconds, and one more
		 * before the stop could keep detach waiting beyond its 6 s. */
		if (pfd[3].revents) {
			struct signalfd_siginfo si;

			if (read(d.signal_fd, &si, sizeof(si)) != sizeof(si))
				continue;
			if (si.ssi_signo == SIGUSR1) {
				reattach(&d); /* detach named ports no longer to await */
				publish_state(&d);
				continue;
			}
			if (si.ssi_signo != SIGHUP)
				break; /* SIGTERM, SIGINT */
			fp_log(LOG_NOTICE, "SIGHUP: dropping all flows and resyncing");
			/* A flush does not undo a firewall change's fence. */
			ctsync_drop_offloaded(&d.cs);
			d.state.resyncs++;
			ctsync_resync(&d.cs);
			publish_state(&d); /* status shows the resync once it is done */
		}
		/* The firewall next: not one more packet of a flow it may now reject. */
		if (pfd[4].revents && firewall_changed(&d.firewall)) {
			uint32_t n = ctsync_fence_all(&d.cs);

			d.state.firewall_changes++;
			fp_log(LOG_NOTICE,
			       "the firewall changed: %u connections return to the kernel until "
			       "they end; new ones are offloaded as before",
			       n);
			publish_state(&d);
		}
		/* And the IPsec policies: not one more clear packet of what they now take. */
		if (pfd[5].revents && ipsec_changed(&d.ipsec)) {
			uint32_t n = ctsync_ipsec_changed(&d.cs);

			fp_log(LOG_NOTICE,
			       "the IPsec policies changed (%zu now): %u connections they may take "
			       "return to the kernel",
			       d.ipsec.nr, n);
			publish_state(&d);
		}
		/* Route changes first: a flow offloaded next must not use an old next hop. */
		if (pfd[1].revents || pfd[6].revents)
			handle_route_changes(&d);
		if (pfd[0].revents) {
			ctsync_handle_events(&d.cs);
			publish_state(&d);
		}
		if (pfd[2].revents) {
			uint64_t expirations;

			if (read(d.timer_fd, &expirations, sizeof(expirations)) > 0)
				scan(&d);
		}
		/* What this round inserted goes live, what it deleted is reused, a grace
		 * period from now (slottable.h). */
		if (fp_flows_sync(inst))
			d.state.errors++;
	}

	/* Clean stop: the kernel takes every flow back now, not after the lease. The stale
	 * heartbeat does it at once; the maps are then emptied in batches, as one by one a
	 * million connections took longer than detach's 6 s, after which it kills us. */
	fp_log(LOG_NOTICE, "stopping: returning %zu connections to the kernel", d.cs.table.count);
	stale_heartbeat(inst);
	ctsync_drop_all(&d.cs);
	d.state.pid = 0;
	publish_state(&d);
	remove_pid_file(inst);
	ctsync_close(&d.cs);
	route_close(&d.route);
	firewall_close(&d.firewall);
	ipsec_close(&d.ipsec);
	topology_close(&d.topo);
	return 0;
}

static int open_log_file(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);

	if (fd < 0)
		return -errno;
	dup2(fd, STDERR_FILENO);
	close(fd);
	return 0;
}

int fp_daemon_start(struct fp_instance *inst, const struct fp_options *opt)
{
	int pipefd[2], pid, status;
	struct pollfd pfd;
	char byte;

	pid = fp_daemon_pid(inst);
	if (pid > 0) {
		if (opt->foreground) {
			fp_err("a daemon already runs for %s (pid %d)", inst->pin_dir, pid);
			return -EEXIST;
		}
		return 0;
	}
	if (opt->foreground) {
		/* As a forked daemon does: a detach must not wait for this process to end. */
		fp_instance_unlock();
		if (opt->log_file && open_log_file(opt->log_file))
			fp_log(LOG_WARNING, "cannot open %s, logging to stderr", opt->log_file);
		return daemon_run(inst, opt, -1) ? -EIO : 0;
	}

	if (pipe2(pipefd, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		close(pipefd[0]);
		fp_instance_unlock();
		setsid();
		if (null >= 0) {
			dup2(null, STDIN_FILENO);
			dup2(null, STDOUT_FILENO);
			if (!opt->log_file || open_log_file(opt->log_file)) {
				dup2(null, STDERR_FILENO);
				fp_log_to_syslog = true;
				openlog("xdp-fastpath", LOG_PID, LOG_DAEMON);
			}
			close(null);
		}
		status = daemon_run(inst, opt, pipefd[1]);
#ifdef __SANITIZE_ADDRESS__
		/* _exit() skips the leak check, and the daemon is what runs for months. */
		__lsan_do_leak_check();
#endif
		_exit(status);
	}
	close(pipefd[1]);
	pfd = (struct pollfd){.fd = pipefd[0], .events = POLLIN};
	if (poll(&pfd, 1, READY_TIMEOUT_MS) == 1 && read(pipefd[0], &byte, 1) == 1) {
		close(pipefd[0]);
		printf("daemon started (pid %d)\n", pid);
		return 0;
	}
	close(pipefd[0]);
	if (waitpid(pid, &status, WNOHANG) == 0) {
		/* Still loading a huge table: it goes on, and offloads as it gets there. */
		fp_log(LOG_WARNING, "the sync daemon (pid %d) is still loading conntrack", pid);
		return 0;
	}
	fp_err("the sync daemon did not start (see %s): traffic stays on the kernel path",
	       opt->log_file ? opt->log_file : "syslog");
	return -EIO;
}

int fp_daemon_stop(const struct fp_instance *inst)
{
	int pid = fp_daemon_pid(inst);

	if (pid <= 0) {
		remove_pid_file(inst);
		return 0;
	}
	/* The instance goes with it: the kernel takes every flow back now, whatever the daemon
	 * is busy with (a scan of a million connections takes seconds), and the kill below
	 * can lose nothing. */
	stale_heartbeat(inst);
	kill(pid, SIGTERM);
	/* It empties the maps; give it time for a large table. */
	for (int i = 0; i < 300 && kill(pid, 0) == 0; i++)
		usleep(20000);
	if (kill(pid, 0) == 0) {
		fp_log(LOG_NOTICE,
		       "the daemon (pid %d) was still busy after 6 s: stopped it (nothing is lost: "
		       "the kernel has every flow, the maps go with the instance)",
		       pid);
		kill(pid, SIGKILL);
	}
	remove_pid_file(inst);
	return 0;
}
