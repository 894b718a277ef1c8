// SPDX-License-Identifier: GPL-2.0-only
/*
 * The pinned instance: the program and maps loaded once and pinned under the pin directory
 * (default /sys/fs/bpf/xdp-fastpath), so that every later command, the daemon and bpftool
 * work on the same objects. Several instances (pin directories) can coexist, one per router
 * network namespace in the tests.
 */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <syslog.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "common.h"
#include "instance.h"
#include "kernel.h"
#include "slottable.h"
#include "steer.h"
#include "xdp_fastpath.skel.h"

#define FP_RUN_DIR "/run/xdp-fastpath"

/*
 * Every map of the instance: its name (the BPF object's, and its pin's) and its descriptor.
 * fp_instance_create pins exactly these and refuses an object with a map not listed, so
 * that the lists cannot drift apart.
 */
static const struct {
	const char *name;
	size_t fd; /* offsetof(struct fp_instance, ..._fd) */
} instance_maps[] = {
	{FP_NAME(FP_MAP_FLOWS4), offsetof(struct fp_instance, flows4_fd)},
	{FP_NAME(FP_MAP_FLOWS6), offsetof(struct fp_instance, flows6_fd)},
	{FP_NAME(FP_MAP_STATS), offsetof(struct fp_instance, stats_fd)},
	{FP_NAME(FP_MAP_CONFIG), offsetof(struct fp_instance, config_fd)},
	{FP_NAME(FP_MAP_TX_PORTS), offsetof(struct fp_instance, tx_ports_fd)},
	{FP_NAME(FP_MAP_DAEMON), offsetof(struct fp_instance, daemon_fd)},
	{FP_NAME(FP_MAP_INGRESS), offsetof(struct fp_instance, ingress_fd)},
	{FP_NAME(FP_MAP_EGRESS), offsetof(struct fp_instance, egress_fd)},
	{FP_NAME(FP_MAP_FDB), offsetof(struct fp_instance, fdb_fd)},
	{FP_NAME(FP_MAP_CPUS), offsetof(struct fp_instance, cpus_fd)},
	{FP_NAME(FP_MAP_STEER), offsetof(struct fp_instance, steer_fd)},
	{FP_NAME(FP_MAP_PORTS), offsetof(struct fp_instance, ports_fd)},
	{FP_NAME(FP_MAP_MARKS4), offsetof(struct fp_instance, marks4_fd)},
	{FP_NAME(FP_MAP_MARKS6), offsetof(struct fp_instance, marks6_fd)},
	{FP_NAME(FP_MAP_NAT6), offsetof(struct fp_instance, nat6_fd)},
	{FP_NAME(FP_MAP_NH_CTX), offsetof(struct fp_instance, nh_ctx_fd)},
	{FP_NAME(FP_MAP_NH_CLAIM), offsetof(struct fp_instance, nh_claim_fd)},
};
#define NR_INSTANCE_MAPS (sizeof(instance_maps) / sizeof(instance_maps[0]))

static int *map_fd(struct fp_instance *inst, size_t i)
{
	return (int *)((char *)inst + instance_maps[i].fd);
}

/* The index of the map called name in instance_maps, or -1. */
static int instance_map(const char *name)
{
	for (size_t i = 0; i < NR_INSTANCE_MAPS; i++)
		if (!strcmp(instance_maps[i].name, name))
			return i;
	return -1;
}

static int pin_path(char *buf, size_t len, const char *dir, const char *name)
{
	if ((size_t)snprintf(buf, len, "%s/%s", dir, name) >= len)
		return -ENAMETOOLONG;
	return 0;
}

static bool on_bpffs(const char *path)
{
	struct statfs st;

	/* f_type is an int on 32-bit machines (armhf), and the magic above INT_MAX. */
	return statfs(path, &st) == 0 && (uint32_t)st.f_type == BPF_FS_MAGIC;
}

/*
 * Root, XDP in the kernel, and a BPF filesystem to pin in. Only attach may mount bpffs,
 * and only at its usual place; every other command changes nothing.
 */
static int mount_bpffs_if_missing(const char *pin_dir);

int fp_check_environment(const char *pin_dir, bool may_mount)
{
	char parent_buf[PATH_MAX], *parent;

	if (geteuid() != 0) {
		fp_err("must be run as root: it loads and attaches BPF programs (try sudo)");
		return -EPERM;
	}
	if (libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_XDP, NULL) != 1) {
		fp_err("this kernel cannot load XDP programs (it needs BPF and XDP support, "
		       "Linux 5.10 or later)");
		return -EOPNOTSUPP;
	}
	snprintf(parent_buf, sizeof(parent_buf), "%s", pin_dir);
	parent = dirname(parent_buf);
	if (on_bpffs(parent))
		return 0;
	if (may_mount && !strcmp(parent, "/sys/fs/bpf"))
		return mount_bpffs_if_missing(pin_dir);
	fp_err("%s is not on a BPF filesystem: mount one with 'mount -t bpf bpf /sys/fs/bpf'",
	       parent);
	return -ENOENT;
}

static int mount_bpffs_if_missing(const char *pin_dir)
{
	char parent_buf[PATH_MAX], *parent;

	snprintf(parent_buf, sizeof(parent_buf), "%s", pin_dir);
	parent = dirname(parent_buf);
	if (on_bpffs(parent) || strcmp(parent, "/sys/fs/bpf"))
		return 0;
	if (mount("bpf", parent, "bpf", 0, "mode=0700")) {
		fp_err("no BPF filesystem at %s and mounting one failed: %s", parent,
		       strerror(errno));
		return -errno;
	}
	fp_log(LOG_INFO, "mounted a BPF filesystem at %s", parent);
	return 0;
}

static void set_name(struct fp_instance *inst, const char *pin_dir)
{
	char buf[PATH_MAX];

	memset(inst, 0, sizeof(*inst));
	snprintf(inst->pin_dir, sizeof(inst->pin_dir), "%s", pin_dir);
	snprintf(buf, sizeof(buf), "%s", pin_dir);
	snprintf(inst->name, sizeof(inst->name), "%s", basename(buf));
	inst->prog_fd = -1;
	inst->prog_tc_fd = -1;
	for (size_t i = 0; i < NR_INSTANCE_MAPS; i++)
		*map_fd(inst, i) = -1;
}

/* Whether the pinned maps whose layout has changed between versions (the flow entries, the
 * counters) have this build's keys and values. */
static bool map_layouts_match(const struct fp_instance *inst)
{
	const struct {
		int fd;
		uint32_t key_size, value_size;
	} maps[] = {
		{inst->flows4_fd, sizeof(uint32_t), sizeof(struct fp_slot4)},
		{inst->flows6_fd, sizeof(uint32_t), sizeof(struct fp_slot6)},
		{inst->stats_fd, sizeof(uint32_t), sizeof(struct fp_stats)},
	};

	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
		struct bpf_map_info info = {};
		uint32_t len = sizeof(info);

		if (bpf_obj_get_info_by_fd(maps[i].fd, &info, &len) == 0 &&
		    (info.key_size != maps[i].key_size || info.value_size != maps[i].value_size))
			return false;
	}
	return true;
}

/* Table @fd mapped, or NULL with errno set. */
static struct fp_slots *map_slots(int fd, const struct fp_slot_shape *shape)
{
	struct fp_slots *t = calloc(1, sizeof(*t));
	int err = t ? fp_slots_map(t, fd, shape) : -ENOMEM;

	if (err) {
		free(t);
		errno = -err;
		return NULL;
	}
	return t;
}

/* Opens a pinned instance; -ENOENT when there is none. */
int fp_instance_open(struct fp_instance *inst, const char *pin_dir)
{
	struct bpf_prog_info info = {};
	uint32_t info_len = sizeof(info);
	struct bpf_map_info map_info = {};
	uint32_t map_info_len = sizeof(map_info);
	char path[PATH_MAX];

	set_name(inst, pin_dir);
	if (pin_path(path, sizeof(path), pin_dir, FP_NAME(FP_PROG)))
		return -ENAMETOOLONG;
	inst->prog_fd = bpf_obj_get(path);
	if (inst->prog_fd < 0)
		return -errno;
	if (bpf_obj_get_info_by_fd(inst->prog_fd, &info, &info_len) == 0)
		inst->prog_id = info.id;
	pin_path(path, sizeof(path), pin_dir, FP_NAME(FP_PROG_TC));
	inst->prog_tc_fd = bpf_obj_get(path);
	memset(&info, 0, sizeof(info));
	info_len = sizeof(info);
	if (inst->prog_tc_fd >= 0 &&
	    bpf_obj_get_info_by_fd(inst->prog_tc_fd, &info, &info_len) == 0)
		inst->prog_tc_id = info.id;
	for (size_t i = 0; i < NR_INSTANCE_MAPS; i++) {
		pin_path(path, sizeof(path), pin_dir, instance_maps[i].name);
		*map_fd(inst, i) = bpf_obj_get(path);
		if (*map_fd(inst, i) < 0) {
			int err = -errno;

			fp_err("%s is incomplete (%s: %s): remove it with 'xdp-fastpath detach'",
			       pin_dir, instance_maps[i].name, strerror(errno));
			fp_instance_close(inst);
			return err == -ENOENT ? -EBADF : err;
		}
	}
	if (!map_layouts_match(inst)) {
		fp_err("%s was made by another version of xdp-fastpath (its maps differ): "
		       "remove it with 'xdp-fastpath detach' and attach again",
		       pin_dir);
		fp_instance_close(inst);
		return -EBADF;
	}
	inst->slots4 = map_slots(inst->flows4_fd, &fp_slot_shape4);
	inst->slots6 = inst->slots4 ? map_slots(inst->flows6_fd, &fp_slot_shape6) : NULL;
	if (!inst->slots6) {
		int err = -errno;

		fp_err("cannot map %s's flow tables: %s", pin_dir, strerror(errno));
		fp_instance_close(inst);
		return err;
	}
	/* As many entries as --flows allows, which sized fp_nat6 (and the tables' slots to
	 * the power of two above twice as many). */
	if (bpf_obj_get_info_by_fd(inst->nat6_fd, &map_info, &map_info_len) == 0) {
		if (map_info.max_entries < inst->slots4->capacity)
			inst->slots4->capacity = map_info.max_entries;
		if (map_info.max_entries < inst->slots6->capacity)
			inst->slots6->capacity = map_info.max_entries;
	}
	return 0;
}

static void unmap_slots(struct fp_slots **t)
{
	if (!*t)
		return;
	fp_slots_unmap(*t);
	free(*t);
	*t = NULL;
}

void fp_instance_close(struct fp_instance *inst)
{
	/* What this process deleted is reused only after a grace period. */
	fp_slots_sync_all((struct fp_slots *[]){inst->slots4, inst->slots6}, 2);
	unmap_slots(&inst->slots4);
	unmap_slots(&inst->slots6);
	if (inst->prog_fd >= 0)
		close(inst->prog_fd);
	inst->prog_fd = -1;
	if (inst->prog_tc_fd >= 0)
		close(inst->prog_tc_fd);
	inst->prog_tc_fd = -1;
	for (size_t i = 0; i < NR_INSTANCE_MAPS; i++) {
		if (*map_fd(inst, i) >= 0)
			close(*map_fd(inst, i));
		*map_fd(inst, i) = -1;
	}
}

/* Removes every pin of the instance, links included, and the directory. */
void fp_instance_unpin(const char *pin_dir)
{
	char path[PATH_MAX];

	for (size_t i = 0; i < NR_INSTANCE_MAPS; i++)
		if (!pin_path(path, sizeof(path), pin_dir, instance_maps[i].name))
			unlink(path);
	if (!pin_path(path, sizeof(path), pin_dir, FP_NAME(FP_PROG)))
		unlink(path);
	if (!pin_path(path, sizeof(path), pin_dir, FP_NAME(FP_PROG_CPU)))
		unlink(path);
	if (!pin_path(path, sizeof(path), pin_dir, FP_NAME(FP_PROG_TC)))
		unlink(path);
	rmdir(pin_dir);
}

struct xdp_fastpath *fp_datapath_open(uint32_t kernel)
{
	struct xdp_fastpath *skel = xdp_fastpath__open();

	if (!skel)
		return NULL;
	skel->rodata->fp_kernel = kernel;
	bpf_map__set_max_entries(skel->maps.fp_cpus, libbpf_num_possible_cpus());
	return skel;
}

uint32_t fp_flows_for_conntrack(uint32_t ct_max)
{
	uint32_t flows = FP_MIN_DEFAULT_FLOWS;

	if (ct_max == 0)
		return FP_DEFAULT_FLOWS;
	while (flows < FP_DEFAULT_FLOWS && flows / 2 < ct_max)
		flows <<= 1;
	return flows;
}

/* The flow table entries a family: --flows, or what conntrack can ever hold. */
static uint32_t table_flows(const struct fp_options *opt)
{
	uint32_t ct_max, flows;

	if (opt->flows)
		return opt->flows;
	/* As this network namespace reads it (each shares the first's); none without
	 * conntrack loaded, which then sets no limit of its own. */
	ct_max = fp_read_u32_file("/proc/sys/net/netfilter/nf_conntrack_max", 0);
	flows = fp_flows_for_conntrack(ct_max);
	if (ct_max)
		fp_log(LOG_INFO, "flow tables: %u entries a family, twice nf_conntrack_max (%u)",
		       flows, ct_max);
	else
		fp_log(LOG_INFO, "flow tables: %u entries a family (no nf_conntrack_max)", flows);
	return flows;
}

void fp_datapath_set_slots(struct xdp_fastpath *skel, uint32_t slots4, uint32_t slots6)
{
	bpf_map__set_max_entries(skel->maps.fp_flows4, slots4);
	skel->rodata->fp_slots4_mask = slots4 - 1;
	bpf_map__set_max_entries(skel->maps.fp_flows6, slots6);
	skel->rodata->fp_slots6_mask = slots6 - 1;
}

/* Loads the program with the maps sized as asked, pins it all, and opens the pins. */
int fp_instance_create(struct fp_instance *inst, const struct fp_options *opt)
{
	struct fp_config cfg = {.nh_gen = 1, .lease_ns = (uint64_t)opt->lease_s * 1000000000ull};
	uint32_t flows = table_flows(opt);
	struct xdp_fastpath *skel;
	struct bpf_map *map;
	char path[PATH_MAX];
	uint32_t zero = 0;
	int err;

	cfg.kernel = fp_kernel_probe();
	cfg.clock = fp_kernel_clock();
	skel = fp_datapath_open(cfg.kernel);
	if (!skel) {
		fp_err("cannot open the embedded BPF object: %s", strerror(errno));
		return -errno;
	}
	fp_datapath_set_slots(skel, fp_slots_for(flows), fp_slots_for(flows));
	/* Every flow may have a mark (mwan3 marks them all). */
	bpf_map__set_max_entries(skel->maps.fp_marks4, flows);
	bpf_map__set_max_entries(skel->maps.fp_marks6, flows);
	bpf_map__set_max_entries(skel->maps.fp_nat6, flows);
	/* Without --steer, cpumap entries that can run no program: generic XDP before 5.15
	 * takes no program using a cpumap whose entries could (EINVAL). */
	if (!opt->steer)
		bpf_map__set_value_size(skel->maps.fp_cpus, FP_CPUMAP_QSIZE_ONLY);
	/* Only the entry points this instance runs: each costs the verifier's time (seconds
	 * on a slow router) and kernel memory. The tc one is loaded by the first port
	 * attached there (fp_instance_load_tc); the cpumap's only serves --steer. */
	bpf_program__set_autoload(skel->progs.xdp_fastpath_cpu, opt->steer);
	bpf_program__set_autoload(skel->progs.xdp_fastpath_tc, false);
	err = xdp_fastpath__load(skel);
	if (err) {
		fp_err("the kernel refused the XDP program: %s (run with -v for the verifier log)",
		       strerror(-err));
		goto out;
	}
	if (!fp_prog_jited(bpf_program__fd(skel->progs.xdp_fastpath)))
		fp_log(LOG_WARNING, "%s", fp_interpreter_note);
	if (mkdir(opt->pin_dir, 0700) && errno != EEXIST) {
		err = -errno;
		fp_err("cannot create %s: %s", opt->pin_dir, strerror(errno));
		goto out;
	}
	bpf_object__for_each_map(map, skel->obj) {
		if (bpf_map__is_internal(map)) /* .rodata: the program's constants */
			continue;
		if (instance_map(bpf_map__name(map)) < 0) {
			err = -EINVAL;
			fp_err("the BPF object has a map the loader does not know: %s",
			       bpf_map__name(map));
			goto out_unpin;
		}
		pin_path(path, sizeof(path), opt->pin_dir, bpf_map__name(map));
		err = bpf_map__pin(map, path);
		if (err) {
			fp_err("cannot pin %s: %s", path, strerror(-err));
			goto out_unpin;
		}
	}
	pin_path(path, sizeof(path), opt->pin_dir, FP_NAME(FP_PROG));
	err = bpf_program__pin(skel->progs.xdp_fastpath, path);
	if (!err && opt->steer) {
		pin_path(path, sizeof(path), opt->pin_dir, FP_NAME(FP_PROG_CPU));
		err = bpf_program__pin(skel->progs.xdp_fastpath_cpu, path);
	}
	if (err) {
		fp_err("cannot pin %s: %s", path, strerror(-err));
		goto out_unpin;
	}
	/* Until the daemon's first scan, the heartbeat of the load itself holds. */
	cfg.heartbeat_ns = fp_now_ns();
	err = bpf_map_update_elem(bpf_map__fd(skel->maps.fp_config), &zero, &cfg, 0);
	if (err) {
		err = -errno;
		fp_err("cannot write the configuration: %s", strerror(errno));
		goto out_unpin;
	}
	err = fp_instance_open(inst, opt->pin_dir);
	if (err)
		goto out_unpin;
	xdp_fastpath__destroy(skel);
	return 0;

out_unpin:
	fp_instance_unpin(opt->pin_dir);
out:
	xdp_fastpath__destroy(skel);
	return err;
}

/*
 * Loads the tc entry point into a running instance, on the maps it has, and pins it: what
 * the first port attached at the tc hook needs. The same object as the XDP entry point's,
 * opened for the same kernel (the configuration says which).
 */
int fp_instance_load_tc(struct fp_instance *inst)
{
	struct bpf_prog_info info = {};
	uint32_t info_len = sizeof(info);
	struct xdp_fastpath *skel;
	struct fp_config cfg;
	struct bpf_program *prog;
	struct bpf_map *map;
	char path[PATH_MAX];
	int err;

	if (inst->prog_tc_fd >= 0)
		return 0;
	err = pin_path(path, sizeof(path), inst->pin_dir, FP_NAME(FP_PROG_TC));
	if (err)
		return err;
	err = fp_read_config(inst, &cfg);
	if (err)
		return err;
	skel = fp_datapath_open(cfg.kernel);
	if (!skel)
		return -errno;
	fp_datapath_set_slots(skel, inst->slots4->mask + 1, inst->slots6->mask + 1);
	bpf_object__for_each_map(map, skel->obj) {
		int i = instance_map(bpf_map__name(map));

		if (bpf_map__is_internal(map))
			continue;
		err = i >= 0 ? bpf_map__reuse_fd(map, *map_fd(inst, i)) : -EINVAL;
		if (err)
			goto out;
	}
	bpf_object__for_each_program(prog, skel->obj)
		bpf_program__set_autoload(prog, prog == skel->progs.xdp_fastpath_tc);
	err = xdp_fastpath__load(skel);
	if (!err)
		err = bpf_program__pin(skel->progs.xdp_fastpath_tc, path);
	if (err)
		goto out;
	inst->prog_tc_fd = dup(bpf_program__fd(skel->progs.xdp_fastpath_tc));
	if (inst->prog_tc_fd < 0) {
		err = -errno;
		unlink(path);
		goto out;
	}
	if (bpf_obj_get_info_by_fd(inst->prog_tc_fd, &info, &info_len) == 0)
		inst->prog_tc_id = info.id;
out:
	xdp_fastpath__destroy(skel);
	return err;
}

void fp_run_paths(const struct fp_instance *inst, char *pid, char *lock, size_t len)
{
	if (pid)
		snprintf(pid, len, "%s/%s.pid", FP_RUN_DIR, inst->name);
	if (lock)
		snprintf(lock, len, "%s/%s.lock", FP_RUN_DIR, inst->name);
}

void fp_run_path(const struct fp_instance *inst, const char *what, int n, char *buf, size_t len)
{
	if (n < 0)
		snprintf(buf, len, "%s/%s.%s", FP_RUN_DIR, inst->name, what);
	else
		snprintf(buf, len, "%s/%s.%s_%d", FP_RUN_DIR, inst->name, what, n);
}

/*
 * The start of every command that works on an existing instance and takes no arguments:
 * returns 0 with inst open, or the exit code after a one-line error.
 */
int fp_command_open(const char *cmd, int argc, const struct fp_options *opt,
		    struct fp_instance *inst)
{
	int err;

	if (argc) {
		fp_err("%s takes no arguments", cmd);
		return 2;
	}
	if (fp_check_environment(opt->pin_dir, false))
		return 1;
	err = fp_instance_open(inst, opt->pin_dir);
	if (err) {
		if (err != -EBADF) /* -EBADF was reported by fp_instance_open */
			fp_err("not attached (no instance at %s)", opt->pin_dir);
		return 1;
	}
	return 0;
}

static int lock_fd = -1;

/* The instance's lock file, opened; @path gets its path. -errno, said if @say. */
static int open_lock_file(const struct fp_instance *inst, char *path, size_t len, bool say)
{
	struct stat st;
	int fd;

	if (mkdir(FP_RUN_DIR, 0700) && errno != EEXIST) {
		if (say)
			fp_err("cannot create %s: %s", FP_RUN_DIR, strerror(errno));
		return -errno;
	}
	/* The pid and lock files live here: only we may be able to put anything in it. */
	if (lstat(FP_RUN_DIR, &st) || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 022)) {
		if (say)
			fp_err("%s is not safe (a symlink, not ours, or writable by others): "
			       "remove it",
			       FP_RUN_DIR);
		return -EPERM;
	}
	fp_run_paths(inst, NULL, path, len);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0 && say)
		fp_err("cannot lock %s: %s", path, strerror(errno));
	return fd < 0 ? -errno : fd;
}

/* Serializes commands that change an instance; the lock is held until the process exits. */
int fp_instance_lock(const struct fp_instance *inst)
{
	char lock[PATH_MAX];
	int fd = open_lock_file(inst, lock, sizeof(lock), true);

	if (fd < 0)
		return fd;
	if (flock(fd, LOCK_EX)) {
		fp_err("cannot lock %s: %s", lock, strerror(errno));
		close(fd);
		return -errno;
	}
	lock_fd = fd;
	return fd;
}

int fp_instance_try_lock(const struct fp_instance *inst)
{
	char lock[PATH_MAX];
	int fd = open_lock_file(inst, lock, sizeof(lock), false), err;

	if (fd < 0 || !flock(fd, LOCK_EX | LOCK_NB))
		return fd;
	err = -errno;
	close(fd);
	return err;
}

/* In a forked daemon: it must not keep the command's lock alive. */
void fp_instance_unlock(void)
{
	if (lock_fd >= 0)
		close(lock_fd);
	lock_fd = -1;
}

int fp_read_config(const struct fp_instance *inst, struct fp_config *cfg)
{
	uint32_t zero = 0;

	return bpf_map_lookup_elem(inst->config_fd, &zero, cfg) ? -errno : 0;
}

static int write_config(const struct fp_instance *inst, const struct fp_config *cfg)
{
	uint32_t zero = 0;

	return bpf_map_update_elem(inst->config_fd, &zero, cfg, 0) ? -errno : 0;
}

/*
 * fp_change_config's lock file, kept open: the daemon's heartbeat opening it again at each
 * scan was a fifth of what a scan at rest cost. Opened again in a forked child, as OFD locks
 * do not exclude each other through one open file; for another instance; and once unlinked
 * (/run emptied), as the others then lock the new file.
 */
static struct {
	int fd;
	pid_t pid;
	char path[PATH_MAX];
} config_lock = {.fd = -1};

static int config_lock_fd(const struct fp_instance *inst)
{
	char path[PATH_MAX];
	struct stat st;

	fp_run_paths(inst, NULL, path, sizeof(path));
	if (config_lock.fd >= 0 && (config_lock.pid != getpid() || strcmp(config_lock.path, path) ||
				    fstat(config_lock.fd, &st) || !st.st_nlink)) {
		close(config_lock.fd); /* in a child, only its copy */
		config_lock.fd = -1;
	}
	if (config_lock.fd < 0) {
		config_lock.fd =
			open_lock_file(inst, config_lock.path, sizeof(config_lock.path), false);
		config_lock.pid = getpid();
	}
	return config_lock.fd;
}

/*
 * fp_config has writers in more than one process: the daemon's heartbeat, and attach's
 * port flags and steering. Each reads the whole entry, changes its part and writes it all
 * back; were two to overlap, one would write back what the other had just changed, such
 * as an older next-hop generation, which makes cached next hops that the newer one
 * retired valid again. They take turns under an OFD lock on the instance's lock file,
 * which the commands' flock of it does not touch (the two kinds of lock are apart). If
 * the file cannot be had, no command can run either: the change is made without it.
 */
int fp_change_config(const struct fp_instance *inst,
		     void (*change)(struct fp_config *cfg, void *arg), void *arg)
{
	struct flock whole = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
	struct fp_config cfg;
	int fd = config_lock_fd(inst), err;

	if (fd >= 0 && fcntl(fd, F_OFD_SETLKW, &whole))
		fd = -1;
	err = fp_read_config(inst, &cfg);
	if (!err) {
		change(&cfg, arg);
		err = write_config(inst, &cfg);
	}
	whole.l_type = F_UNLCK;
	if (fd >= 0 && fcntl(fd, F_OFD_SETLK, &whole)) {
		close(fd); /* which unlocks it too */
		config_lock.fd = -1;
	}
	return err;
}

int fp_read_stats(const struct fp_instance *inst, uint64_t stats[FP_STAT_MAX])
{
	int nr_cpus = libbpf_num_possible_cpus();
	struct fp_stats *percpu;
	uint32_t zero = 0;
	int err = 0;

	if (nr_cpus <= 0)
		return -EINVAL;
	percpu = calloc(nr_cpus, sizeof(*percpu));
	if (!percpu)
		return -ENOMEM;
	if (bpf_map_lookup_elem(inst->stats_fd, &zero, percpu)) {
		err = -errno;
		goto out;
	}
	for (int i = 0; i < FP_STAT_MAX; i++)
		stats[i] = fp_stat_total(percpu, nr_cpus, i);
out:
	free(percpu);
	return err;
}

/* The attached interfaces: the keys of the devmap. Returns how many. */
int fp_tx_ports(const struct fp_instance *inst, uint32_t *ifindexes, int max)
{
	uint32_t key, *prev = NULL;
	int n = 0;

	while (n < max && bpf_map_get_next_key(inst->tx_ports_fd, prev, &key) == 0) {
		ifindexes[n] = key;
		prev = &ifindexes[n++];
	}
	return n;
}

bool fp_tx_port_attached(const struct fp_instance *inst, uint32_t ifindex)
{
	uint32_t value;

	return bpf_map_lookup_elem(inst->tx_ports_fd, &ifindex, &value) == 0;
}
