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

/* The names the operator detached while a daemon ran, for it to await no more: a name a
 * line, written by the command under the instance's lock, taken by the daemon under it. */
static void request_path(const struct fp_instance *inst, char *path, size_t len)
{
	fp_run_path(inst, "unawait", -1, path, len);
}

/* The request's next name, into @line of @len bytes: false at its end. */
static bool next_requested(FILE *request, char *line, int len)
{
	if (!fgets(line, len, request))
		return false;
	line[strcspn(line, "\n")] = '\0';
	return true;
}

/* Whether the request holds @name. */
static bool requested(FILE *request, const char *name)
{
	char line[IF_NAMESIZE + 2];

	if (!request)
		return false;
	rewind(request);
	while (next_requested(request, line, sizeof(line)))
		if (!strcmp(line, name))
			return true;
	return false;
}

struct fp_awaited_port *reattach_find(struct fp_awaited_port *ports, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(ports[i].name, name))
			return &ports[i];
	return NULL;
}

/* Takes @name out of @r's list: false if it is not there. */
static bool remove_port(struct fp_reattach *r, const char *name)
{
	struct fp_awaited_port *port = reattach_find(r->awaited, r->nr_awaited, name);

	if (!port)
		return false;
	*port = r->awaited[--r->nr_awaited];
	return true;
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
	FILE *f, *request;
	int n = 0;

	file_path(inst, path, sizeof(path));
	f = fopen(path, "re");
	if (!f)
		return 0;
	request_path(inst, path, sizeof(path));
	request = fopen(path, "re");
	while (n < max && fgets(line, sizeof(line), f)) {
		struct fp_awaited_port *port = &ports[n];
		int hook;

		*port = (struct fp_awaited_port){0};
		if (sscanf(line, "%15s %15s %d", port->name, mode, &port->failed_ifindex) != 3)
			continue;
		/* Detached by the operator, and the daemon has not taken the request yet. */
		if (requested(request, port->name))
			continue;
		hook = fp_hook_by_name(mode, strlen(mode));
		port->mode = hook < 0 ? FP_HOOK_AUTO : hook;
		n++;
	}
	if (request)
		fclose(request);
	fclose(f);
	return n;
}

int reattach_unawait(struct fp_instance *inst, const char *const *names, int n, bool daemon_runs)
{
	char path[PATH_MAX];
	FILE *f;

	if (!daemon_runs) {
		/* None to race: the list, without them. */
		struct fp_reattach r = {.inst = inst};

		r.nr_awaited = reattach_read(inst, r.awaited, FP_REATTACH_MAX);
		for (int i = 0; i < n; i++)
			remove_port(&r, names[i]);
		reattach_save(&r);
		return 0;
	}
	request_path(inst, path, sizeof(path));
	f = fopen(path, "ae");
	if (!f)
		return -errno;
	for (int i = 0; i < n; i++)
		fprintf(f, "%s\n", names[i]);
	return fclose(f) ? -errno : 0;
}

void reattach_forget(const struct fp_instance *inst)
{
	char path[PATH_MAX];

	file_path(inst, path, sizeof(path));
	unlink(path);
	request_path(inst, path, sizeof(path));
	unlink(path);
}

/*
 * Takes the operator's request (reattach_unawait), under the instance's lock, which it
 * leaves in @lock_fd: its names are awaited no more. False while a command holds the lock
 * (then at the next try): nothing may be attached before the request is taken.
 */
static bool take_request(struct fp_reattach *r, int *lock_fd)
{
	char path[PATH_MAX], line[IF_NAMESIZE + 2];
	FILE *f;

	request_path(r->inst, path, sizeof(path));
	if (access(path, F_OK))
		return true;
	*lock_fd = fp_instance_try_lock(r->inst);
	if (*lock_fd < 0)
		return false;
	f = fopen(path, "re");
	while (f && next_requested(f, line, sizeof(line)))
		if (remove_port(r, line))
			fp_log(LOG_NOTICE, "%s: detached by the operator, no longer awaited", line);
	if (f)
		fclose(f);
	/* Saved even if none was ours: a daemon started after the request read the list
	 * without its names (reattach_read), and the file must say so once it is gone. */
	reattach_save(r);
	unlink(path);
	return true;
}

bool reattach_add(struct fp_reattach *r, const char *name, int mode)
{
	struct fp_awaited_port *port = reattach_find(r->awaited, r->nr_awaited, name);

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
	int attached = 0, lock_fd = -1, nr_before;
	bool failed = false;

	if (!take_request(r, &lock_fd))
		return 0;
	nr_before = r->nr_awaited;
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
