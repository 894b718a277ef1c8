// SPDX-License-Identifier: GPL-2.0-only
/*
 * --steer: multi-core steering, the XDP analogue of the RPS tuning routers use. A NIC with
 * one receive queue (or fewer than the cores) runs all of its XDP work on one CPU. With
 * steering, the program on the port only hashes the flow and hands the frame to that flow's
 * CPU through a cpumap, whose entry runs the fastpath there (xdp_fastpath_cpu): forwarding
 * on the fastpath, or building the skb for the kernel's path, on that CPU.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "common.h"
#include "instance.h"
#include "steer.h"

#define STEER_QUEUE_SIZE 2048 /* frames queued per CPU, as in the kernel's samples */
#define ONLINE_CPUS	 "/sys/devices/system/cpu/online"

static int read_online(bool *online, int max)
{
	char buf[4096];
	FILE *f = fopen(ONLINE_CPUS, "re");
	int n;

	if (!f)
		return -errno;
	n = fgets(buf, sizeof(buf), f) ? fp_parse_cpulist(buf, online, max) : -EIO;
	fclose(f);
	return n;
}

/* Whether a cpumap with @info runs programs: one loaded for --steer. */
static bool cpumap_runs_programs(const struct bpf_map_info *info)
{
	return info->value_size > FP_CPUMAP_QSIZE_ONLY;
}

/* The instance's cpumap (fp_cpus) as the kernel describes it: 0 or -errno. */
static int cpumap_info(const struct fp_instance *inst, struct bpf_map_info *info)
{
	uint32_t info_len = sizeof(*info);

	*info = (struct bpf_map_info){};
	return bpf_obj_get_info_by_fd(inst->cpus_fd, info, &info_len) ? -errno : 0;
}

bool fp_steer_capable(const struct fp_instance *inst)
{
	struct bpf_map_info info;

	return !cpumap_info(inst, &info) && cpumap_runs_programs(&info);
}

static void set_steer_cpus(struct fp_config *cfg, void *slots)
{
	cfg->steer_cpus = *(uint32_t *)slots;
}

int fp_steer_enable(const struct fp_instance *inst, const char *cpus)
{
	bool online[FP_MAX_CPUS], wanted[FP_MAX_CPUS];
	struct bpf_map_info info;
	uint32_t slots = 0;
	char path[PATH_MAX];
	int prog_fd, nr, err;

	err = cpumap_info(inst, &info);
	if (err)
		return err;
	if (!cpumap_runs_programs(&info)) {
		fp_err("--steer: %s was loaded without it (its cpumap runs no programs): detach "
		       "all and attach with --steer first",
		       inst->pin_dir);
		return -EINVAL;
	}
	nr = read_online(online, FP_MAX_CPUS);
	if (nr < 0) {
		fp_err("--steer: cannot read %s: %s", ONLINE_CPUS, strerror(-nr));
		return nr;
	}
	if (cpus)
		nr = fp_parse_cpulist(cpus, wanted, FP_MAX_CPUS); /* checked by the option parser */
	else
		memcpy(wanted, online, sizeof(wanted));
	for (int cpu = 0; cpu < nr; cpu++) {
		if (wanted[cpu] && (!online[cpu] || (uint32_t)cpu >= info.max_entries)) {
			fp_err("--steer: CPU %d is not online", cpu);
			return -EINVAL;
		}
	}
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", inst->pin_dir, FP_NAME(FP_PROG_CPU)) >=
	    sizeof(path))
		return -ENAMETOOLONG;
	prog_fd = bpf_obj_get(path);
	if (prog_fd < 0) {
		err = -errno;
		fp_err("--steer: %s: %s", path, strerror(-err));
		return err;
	}
	for (uint32_t cpu = 0; cpu < (uint32_t)nr && !err; cpu++) {
		struct bpf_cpumap_val val = {.qsize = STEER_QUEUE_SIZE, .bpf_prog.fd = prog_fd};

		if (!wanted[cpu])
			continue;
		if (bpf_map_update_elem(inst->cpus_fd, &cpu, &val, 0) ||
		    bpf_map_update_elem(inst->steer_fd, &slots, &cpu, 0)) {
			err = -errno;
			fp_err("--steer: the kernel refused the cpumap entry of CPU %u: %s", cpu,
			       strerror(errno));
		}
		slots++;
	}
	close(prog_fd);
	if (!err)
		err = fp_change_config(inst, set_steer_cpus, &slots);
	return err;
}

int fp_steer_disable(const struct fp_instance *inst)
{
	struct bpf_map_info info;
	uint32_t none = 0;
	int err;

	/* The datapath steers nothing once steer_cpus is 0; then the cpumap's entries, each
	 * a kernel thread, can go. */
	err = fp_change_config(inst, set_steer_cpus, &none);
	if (err)
		return err;
	err = cpumap_info(inst, &info);
	if (err)
		return err;
	for (uint32_t cpu = 0; cpu < info.max_entries; cpu++)
		bpf_map_delete_elem(inst->cpus_fd, &cpu);
	return 0;
}
