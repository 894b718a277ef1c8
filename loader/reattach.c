// SPDX-License-Identifier: GPL-2.0-only
/*
 * The daemon attaches an awaited port once it is there (reattach.h). It waits for the port
 * to be up: whoever makes it (a driver, netifd, hostapd) has set it up by then, and the
 * checks of attach see the port as it will run. A port that fails them is logged once and
 * left for the operator to attach by hand.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "hooks.h"
#include "instance.h"
#include "port_attach.h"
#include "reattach.h"

static void file_path(const struct fp_instance *inst, char *path, size_t len)
{
	fp_run_path(inst, "awaited", -1, path, len);
}

/* One line a port: its name, its --mode, and the ifindex it failed to attach as, or 0. */
void reattach_save(const struct fp_reattach *r)
{
	char path[PATH_MAX], tmp[PATH_MAX + 4];
	FILE *f;

	file_path(r->inst, path, sizeof(path));
	if (!r->nr_awaited) {
		unlink(path);
		return;
	}
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	f = fopen(tmp, "we");
	if (!f) {
		fp_log(LOG_WARNING, "%s: %s", tmp, strerror(errno));
		return;
	}
	for (int i = 0; i < r->nr_awaited; i++)
		fprintf(f, "%s %s %d\n", r->awaited[i].name, fp_hook_name(r->awaited[i].mode),
			r->awaited[i].failed_ifindex);
	if (fclose(f) || rename(tmp, path)) {
		fp_log(LOG_WARNING, "%s: %s", path, strerror(errno));
		unlink(tmp);
	}
}

int reattach_read(const struct fp_instance *inst, struct fp_awaited_port *ports, int max)
{
	char path[PATH_MAX], line[80], mode[16];
	FILE *f;
	int n = 0;

	file_path(inst, path, sizeof(path));
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (n < max && fgets(line, sizeof(line), f)) {
		struct fp_awaited_port *port = &ports[n];
		int hook;

		*port = (struct fp_awaited_port){0};
		if (sscanf(line, "%15s %15s %d", port->name, mode, &port->failed_ifindex) != 3)
			continue;
		hook = fp_hook_by_name(mode, strlen(mode));
		port->mode = hook < 0 ? FP_HOOK_AUTO : hook;
		n++;
	}
	fclose(f);
	return n;
}

void reattach_forget(const struct fp_instance *inst)
{
	char path[PATH_MAX];

	file_path(inst, path, sizeof(path));
	unlink(path);
}

bool reattach_add(struct fp_reattach *r, const char *name, int mode)
{
	struct fp_awaited_port *port = NULL;

	for (int i = 0; i < r->nr_awaited && !port; i++)
		if (!strcmp(r->awaited[i].name, name))
			port = &r->awaited[i];
	if (!port && r->nr_awaited == FP_REATTACH_MAX)
		return false;
	if (!port)
		port = &r->awaited[r->nr_awaited++];
	*port = (struct fp_awaited_port){.mode = mode};
	snprintf(port->name, sizeof(port->name), "%s", name);
	return true;
}

void reattach_await(struct fp_reattach *r, int ifindex, const char *name)
{
	if (!fp_hook_pinned(r->inst, ifindex) || !name[0])
		return;
	if (!reattach_add(r, name, fp_hook_requested(r->inst, ifindex))) {
		fp_log(LOG_WARNING,
		       "%s was deleted: not attached again if it comes back (%d "
		       "interfaces are awaited already)",
		       name, FP_REATTACH_MAX);
		return;
	}
	fp_log(LOG_NOTICE, "%s was deleted: attached again when it comes back", name);
	reattach_save(r);
}

static bool is_up(const char *name)
{
	struct ifreq ifr = {0};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	bool up;

	if (fd < 0)
		return false;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	up = !ioctl(fd, SIOCGIFFLAGS, &ifr) && (ifr.ifr_flags & IFF_UP);
	close(fd);
	return up;
}

/* Attaches @port, there as @ifindex, under the instance's lock: 0 or -errno. */
static int attach_awaited(struct fp_reattach *r, struct fp_awaited_port *port, int ifindex)
{
	struct fp_iface ifc = {.name = port->name, .ifindex = ifindex};
	int err;

	fp_iface_choose_hook(&ifc, port->mode);
	err = fp_iface_check(r->inst, &ifc, r->allow_shaping);
	if (!err) {
		err = fp_iface_attach(r->inst, &ifc, port->mode);
		if (err)
			fp_iface_detach(r->inst, ifindex); /* what it did of it */
	}
	if (err) {
		fp_log(LOG_WARNING,
		       "%s is there, but stays detached (see above): attach it by hand",
		       port->name);
		return err;
	}
	fp_log(LOG_NOTICE, "%s is there: attached (%s)", port->name, ifc.why);
	return 0;
}

int reattach_try(struct fp_reattach *r)
{
	int attached = 0, lock_fd = -1, nr_before = r->nr_awaited;
	bool failed = false;

	for (int i = 0; i < r->nr_awaited;) {
		struct fp_awaited_port *port = &r->awaited[i];
		int ifindex = if_nametoindex(port->name);

		if (ifindex > 0 && !fp_hook_pinned(r->inst, ifindex)) {
			if (ifindex == port->failed_ifindex || !is_up(port->name)) {
				i++;
				continue;
			}
			/* Not while a command changes the instance: at the next try. */
			if (lock_fd < 0)
				lock_fd = fp_instance_try_lock(r->inst);
			if (lock_fd < 0)
				break;
			if (attach_awaited(r, port, ifindex)) {
				port->failed_ifindex = ifindex;
				failed = true;
				i++;
				continue;
			}
			attached++;
		}
		/* Attached: by us, or by hand meanwhile. */
		if (ifindex > 0)
			*port = r->awaited[--r->nr_awaited];
		else
			i++;
	}
	if (lock_fd >= 0)
		close(lock_fd);
	if (failed || r->nr_awaited != nr_before)
		reattach_save(r);
	return attached;
}
