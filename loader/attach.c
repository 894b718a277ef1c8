// SPDX-License-Identifier: GPL-2.0-only
/*
 * attach and detach. Each interface gets the datapath at one hook (hooks.c: native or
 * generic XDP, or tc), pinned beside the maps so that it stays attached after the command
 * exits. A command that fails undoes what it did.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>
#include <net/if.h>
#include <bpf/bpf.h>

#include "commands.h"
#include "common.h"
#include "daemon.h"
#include "hooks.h"
#include "instance.h"
#include "port_attach.h"
#include "reattach.h"
#include "slottable.h"
#include "steer.h"

#define MAX_IFACES FP_MAX_TX_PORTS

/*
 * Resolves the names into @ifs; returns how many it put there, or -errno after a one-line
 * error. With @missing (a supervisor's attach), a name that is no interface yet goes there
 * instead of being an error: the daemon attaches it when it comes (reattach.h).
 */
static int resolve_ifaces(int argc, char **argv, struct fp_iface *ifs, const char **missing,
			  int *nr_missing)
{
	int n = 0;

	if (argc > MAX_IFACES) {
		fp_err("at most %d interfaces", MAX_IFACES);
		return -E2BIG;
	}
	for (int i = 0; i < argc; i++) {
		struct fp_iface *ifc = &ifs[n];

		*ifc = (struct fp_iface){.name = argv[i]};
		ifc->ifindex = if_nametoindex(argv[i]);
		if (!ifc->ifindex && missing && strlen(argv[i]) < IF_NAMESIZE) {
			for (int j = 0; j < *nr_missing; j++) {
				if (!strcmp(missing[j], argv[i])) {
					fp_err("%s: named twice", argv[i]);
					return -EINVAL;
				}
			}
			missing[(*nr_missing)++] = argv[i];
			continue;
		}
		if (!ifc->ifindex) {
			fp_err("%s: no such interface (see 'ip link show')", argv[i]);
			return -ENODEV;
		}
		for (int j = 0; j < n; j++) {
			if (ifs[j].ifindex == ifc->ifindex) {
				fp_err("%s: named twice", argv[i]);
				return -EINVAL;
			}
		}
		n++;
	}
	return n;
}

/* A supervisor's attach: the named interfaces not there are what the daemon awaits. */
static void await_missing(struct fp_instance *inst, const char **missing, int nr_missing, int mode)
{
	struct fp_reattach r = {.inst = inst};

	for (int i = 0; i < nr_missing; i++) {
		if (reattach_add(&r, missing[i], mode))
			printf("%s: not there yet; attached when it is\n", missing[i]);
	}
	reattach_save(&r);
}

static bool all_attached_here(const struct fp_instance *inst, const struct fp_iface *ifs, int n)
{
	for (int i = 0; i < n; i++)
		if (!fp_hook_pinned(inst, ifs[i].ifindex))
			return false;
	return true;
}

/* Detaches every interface and removes the instance (its daemon stopped already). */
static void remove_instance(struct fp_instance *inst, const char *pin_dir)
{
	int linked[MAX_IFACES], nr_linked = fp_hook_pinned_all(inst, linked, MAX_IFACES);

	for (int i = 0; i < nr_linked; i++) {
		char name[IF_NAMESIZE];

		fp_ifname(linked[i], name);
		fp_iface_detach(inst, linked[i]);
		printf("%s: detached\n", name);
	}
	reattach_forget(inst);
	fp_instance_close(inst);
	fp_instance_unpin(pin_dir);
	inst->pin_dir[0] = '\0';
}

/* --flows given for an instance whose tables, sized when it was made, have another size. */
static bool flows_differ(const struct fp_instance *inst, const struct fp_options *opt)
{
	return inst->pin_dir[0] && opt->flows && opt->flows != inst->slots4->capacity;
}

static bool named(const struct fp_iface *ifs, int n, int ifindex)
{
	for (int i = 0; i < n; i++)
		if (ifs[i].ifindex == ifindex)
			return true;
	return false;
}

/*
 * A supervisor's attach (--foreground: procd, systemd) names every interface the instance
 * is to have. procd starts the daemon anew with the new command line when the service's
 * configuration changes, and the interfaces stay attached meanwhile: with no daemon
 * running, the instance is made what the command line says. An interface it no longer
 * names is detached; what is fixed when the program is loaded (another --flows, --steer
 * for an instance loaded without) takes a new instance (the old one is removed:
 * inst->pin_dir emptied); steering goes off without --steer; a named interface attached
 * already stays as it is, moved to the end of @ifs. (One named that is not there is
 * awaited: cmd_attach.) Returns how many, at the start of @ifs, are left to attach.
 */
static int supervise_instance(struct fp_instance *inst, struct fp_iface *ifs, int n,
			      const struct fp_options *opt)
{
	int linked[MAX_IFACES], nr_linked, todo = 0, nr_kept = 0;
	struct fp_iface kept[MAX_IFACES];

	if (flows_differ(inst, opt)) {
		printf("the flow tables change from %u to %u entries: attaching anew\n",
		       inst->slots4->capacity, opt->flows);
		remove_instance(inst, opt->pin_dir);
		return n;
	}
	if (opt->steer && !fp_steer_capable(inst)) {
		printf("--steer, which the program was loaded without: attaching anew\n");
		remove_instance(inst, opt->pin_dir);
		return n;
	}
	if (!opt->steer)
		fp_steer_disable(inst);
	nr_linked = fp_hook_pinned_all(inst, linked, MAX_IFACES);
	for (int i = 0; i < nr_linked; i++) {
		char name[IF_NAMESIZE];

		if (named(ifs, n, linked[i]))
			continue;
		fp_ifname(linked[i], name);
		fp_iface_detach(inst, linked[i]);
		printf("%s: detached (no longer named)\n", name);
	}
	for (int i = 0; i < n; i++) {
		if (fp_hook_pinned(inst, ifs[i].ifindex))
			kept[nr_kept++] = ifs[i];
		else
			ifs[todo++] = ifs[i];
	}
	memcpy(&ifs[todo], kept, nr_kept * sizeof(*kept));
	return todo;
}

int cmd_attach(int argc, char **argv, struct fp_options *opt)
{
	struct fp_iface ifs[MAX_IFACES];
	const char *missing[MAX_IFACES];
	struct fp_instance inst;
	bool created = false;
	int err, lock_fd = -1, done = 0, todo, n, nr_missing = 0;

	if (argc < 1) {
		fp_err("attach needs an interface, e.g. 'xdp-fastpath attach eth0'");
		return 2;
	}
	if (fp_check_environment(opt->pin_dir, true))
		return 1;
	n = resolve_ifaces(argc, argv, ifs, opt->foreground ? missing : NULL, &nr_missing);
	if (n < 0)
		return 1;

	err = fp_instance_open(&inst, opt->pin_dir);
	if (err == -ENOENT) {
		inst.pin_dir[0] = '\0';
	} else if (err) {
		if (err != -EBADF)
			fp_err("cannot open %s: %s", opt->pin_dir, strerror(-err));
		return 1;
	}
	todo = n;
	if (inst.pin_dir[0] && opt->foreground && fp_daemon_pid(&inst) <= 0) {
		lock_fd = fp_instance_lock(&inst);
		if (lock_fd < 0)
			goto out_close;
		todo = supervise_instance(&inst, ifs, n, opt);
	}
	/*
	 * All of them attached already, but no daemon (it died, or procd or systemd restarts
	 * a foreground attach): restart the daemon, which adopts the pinned maps.
	 */
	if (inst.pin_dir[0] && all_attached_here(&inst, ifs, todo) && fp_daemon_pid(&inst) <= 0) {
		/* Not refused: the interfaces would stay attached with no daemon. */
		if (flows_differ(&inst, opt))
			fp_log(LOG_WARNING,
			       "--flows %u not applied: the flow tables keep their %u entries "
			       "until every interface is detached",
			       opt->flows, inst.slots4->capacity);
		if (opt->steer && !fp_steer_capable(&inst))
			fp_log(LOG_WARNING, "--steer not applied: the program was loaded without "
					    "it; detach every interface first");
		else if (opt->steer)
			fp_steer_enable(&inst, opt->steer_cpus); /* says why if it fails */
		for (int i = 0; i < n; i++)
			printf("%s: already attached; restarting the sync daemon\n", ifs[i].name);
		if (opt->foreground)
			await_missing(&inst, missing, nr_missing, opt->mode);
		fflush(stdout);
		err = fp_daemon_start(&inst, opt);
		fp_instance_close(&inst);
		return err ? 1 : 0;
	}
	if (flows_differ(&inst, opt)) {
		fp_err("the flow tables have %u entries, fixed when the first interface was "
		       "attached: detach every interface to change --flows",
		       inst.slots4->capacity);
		goto out_close;
	}
	/* Check every interface before changing anything. */
	for (int i = 0; i < todo; i++)
		fp_iface_choose_hook(&ifs[i], opt->mode);
	for (int i = 0; i < todo; i++)
		if (fp_iface_check(inst.pin_dir[0] ? &inst : NULL, &ifs[i], opt->allow_shaping))
			goto out_close;

	if (!inst.pin_dir[0]) {
		if (fp_instance_create(&inst, opt))
			return 1;
		created = true;
		reattach_forget(&inst); /* what an instance of that name left */
	}
	if (lock_fd < 0)
		lock_fd = fp_instance_lock(&inst);
	if (lock_fd < 0)
		goto out_undo;
	if (opt->steer && fp_steer_enable(&inst, opt->steer_cpus))
		goto out_undo;
	for (; done < todo; done++) {
		if (fp_iface_attach(&inst, &ifs[done], opt->mode)) {
			done++; /* undo its partial state too */
			goto out_undo;
		}
	}
	for (int i = todo; i < n; i++)
		printf("%s: already attached\n", ifs[i].name);
	for (int i = 0; i < todo; i++) {
		if (ifs[i].hook == FP_HOOK_TC)
			printf("%s: attached (tc hook, %s)", ifs[i].name, ifs[i].how);
		else if (ifs[i].hook == FP_HOOK_SPLIT)
			printf("%s: attached (native mode; TCP at the tc hook, %s)", ifs[i].name,
			       ifs[i].how);
		else
			printf("%s: attached (%s mode)", ifs[i].name, fp_hook_name(ifs[i].hook));
		if (opt->mode == FP_HOOK_AUTO)
			printf(": %s\n", ifs[i].why);
		else if (ifs[i].caveats[0])
			printf(": %s\n", ifs[i].caveats);
		else
			printf("\n");
		/* The tc program has no cpumap; it runs after RPS, which spreads by flow. */
		if (opt->steer && ifs[i].hook == FP_HOOK_TC)
			printf("%s: not steered: --steer works at XDP; at the tc hook, RPS "
			       "(rps_cpus) spreads the packets\n",
			       ifs[i].name);
	}
	if (opt->foreground && fp_daemon_pid(&inst) <= 0)
		await_missing(&inst, missing, nr_missing, opt->mode);
	fflush(stdout);

	err = fp_daemon_start(&inst, opt);
	fp_instance_close(&inst);
	return err ? 1 : 0;

out_undo:
	for (int i = 0; i < done; i++)
		fp_iface_detach(&inst, ifs[i].ifindex);
	if (created)
		fp_instance_unpin(inst.pin_dir);
out_close:
	fp_instance_close(&inst);
	return 1;
}

/* Whether the daemon running as @pid takes detach's requests (SIGUSR1): one from before
 * them would die of the signal. */
static bool daemon_takes_requests(const struct fp_instance *inst, int pid)
{
	struct fp_daemon_state state = {0};
	__u32 zero = 0;

	if (bpf_map_lookup_elem(inst->daemon_fd, &zero, &state))
		return false;
	return state.pid == (__u32)pid && (state.flags & FP_DAEMON_UNAWAIT);
}

/*
 * detach: the named interfaces, or all. A name the daemon awaits (reattach.h), not there
 * or there but not attached, is awaited no more. The instance goes when nothing is left
 * attached or awaited, or with no name.
 */
int cmd_detach(int argc, char **argv, struct fp_options *opt)
{
	struct fp_awaited_port awaited[FP_REATTACH_MAX];
	const char *missing[MAX_IFACES], *unawait[MAX_IFACES];
	int nr_missing = 0, nr_unawait = 0, nr_awaited, n, pid;
	struct fp_iface ifs[MAX_IFACES];
	int linked[MAX_IFACES];
	struct fp_instance inst;
	int err;

	if (fp_check_environment(opt->pin_dir, false))
		return 1;
	n = resolve_ifaces(argc, argv, ifs, missing, &nr_missing);
	if (n < 0)
		return 1;
	err = fp_instance_open(&inst, opt->pin_dir);
	if (err == -ENOENT) {
		if (nr_missing)
			fp_err("%s: no such interface (see 'ip link show')", missing[0]);
		else
			fp_err("nothing is attached (no instance at %s)", opt->pin_dir);
		return 1;
	}
	/* -EBADF, an incomplete instance: go on and remove what is left of it. */
	if (err && err != -EBADF) {
		fp_err("cannot open %s: %s", opt->pin_dir, strerror(-err));
		return 1;
	}
	if (fp_instance_lock(&inst) < 0)
		goto out;

	/* Every name checked before anything changes. */
	nr_awaited = reattach_read(&inst, awaited, FP_REATTACH_MAX);
	for (int i = 0; i < nr_missing; i++) {
		if (!reattach_find(awaited, nr_awaited, missing[i])) {
			fp_err("%s: no such interface (see 'ip link show')", missing[i]);
			goto out;
		}
		unawait[nr_unawait++] = missing[i];
	}
	for (int i = 0; i < n;) {
		if (fp_hook_pinned(&inst, ifs[i].ifindex)) {
			i++;
			continue;
		}
		if (!reattach_find(awaited, nr_awaited, ifs[i].name)) {
			fp_err("%s: not attached", ifs[i].name);
			goto out;
		}
		/* There, but failed to attach when it came (a shaper, say). */
		unawait[nr_unawait++] = ifs[i].name;
		ifs[i] = ifs[--n];
	}

	/* The request first: it is what may fail. */
	pid = fp_daemon_pid(&inst);
	if (nr_unawait && pid > 0 && !daemon_takes_requests(&inst, pid)) {
		fp_err("%s is awaited by a daemon (pid %d) older than this command, which cannot "
		       "tell it: detach everything and attach again",
		       unawait[0], pid);
		goto out;
	}
	if (nr_unawait) {
		err = reattach_unawait(&inst, unawait, nr_unawait, pid > 0);
		if (err) {
			fp_err("cannot tell the daemon what is no longer awaited: %s",
			       strerror(-err));
			goto out;
		}
	}
	for (int i = 0; i < n; i++) {
		fp_iface_detach(&inst, ifs[i].ifindex);
		printf("%s: detached\n", ifs[i].name);
	}
	for (int i = 0; i < nr_unawait; i++)
		printf("%s: no longer awaited\n", unawait[i]);
	if (argc > 0 &&
	    (fp_hook_pinned_all(&inst, linked, MAX_IFACES) > 0 || nr_awaited > nr_unawait))
		goto out_ok;

	/* Nothing left attached or awaited: stop the daemon and remove the instance. */
	fp_daemon_stop(&inst);
	remove_instance(&inst, opt->pin_dir);
	return 0;
out_ok:
	fp_instance_close(&inst);
	/* The daemon takes the request under the lock, which this command holds until now. */
	if (nr_unawait && pid > 0) {
		fp_instance_unlock();
		kill(pid, SIGUSR1);
	}
	return 0;
out:
	fp_instance_close(&inst);
	return 1;
}
