// SPDX-License-Identifier: GPL-2.0-only
/*
 * --steer: multi-core steering, the XDP analogue of the RPS tuning routers use. A NIC with
 * one receive queue (or fewer than the cores) runs all of its XDP work on one CPU. With
 * steering, the program on the port only hashes the flow and hands the frame to that flow's
 * CPU through a cpumap, whose entry runs the fastpath there (xdp_fastpath_cpu): forwarding
 * on the fastpath, or building the skb for the kernel's path, on that CPU.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "common.h"

#define STEER_QUEUE_SIZE 2048 /* frames queued per CPU, as in the kernel's samples */
#define ONLINE_CPUS	 "/sys/devices/system/cpu/online"

/* The highest online CPU + 1, with online[cpu] set for each ("0-3,5"); -errno on error. */
static int online_cpus(bool *online, int max)
{
	FILE *f = fopen(ONLINE_CPUS, "re");
	int first, last, n = 0;
	char sep;

	if (!f)
		return -errno;
	memset(online, 0, max * sizeof(*online));
	while (fscanf(f, "%d", &first) == 1) {
		last = first;
		if (fscanf(f, "%c", &sep) == 1 && sep == '-' && fscanf(f, "%d%c", &last, &sep) < 1)
			break;
		for (int cpu = first; cpu <= last && cpu < max; cpu++) {
			online[cpu] = true;
			if (cpu + 1 > n)
				n = cpu + 1;
		}
		if (sep != ',')
			break;
	}
	fclose(f);
	return n ? n : -EINVAL;
}

int fp_steer_enable(const struct fp_instance *inst)
{
	struct bpf_map_info info = {};
	uint32_t info_len = sizeof(info);
	char path[PATH_MAX];
	struct fp_config cfg;
	int prog_fd, nr, err = 0;

	if (bpf_obj_get_info_by_fd(inst->cpus_fd, &info, &info_len))
		return -errno;
	bool online[info.max_entries];

	nr = online_cpus(online, info.max_entries);
	if (nr < 0) {
		fp_err("--steer: cannot read %s: %s", ONLINE_CPUS, strerror(-nr));
		return nr;
	}
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", inst->pin_dir, FP_PROG_CPU_NAME) >=
	    sizeof(path))
		return -ENAMETOOLONG;
	prog_fd = bpf_obj_get(path);
	if (prog_fd < 0) {
		fp_err("--steer: %s: %s", path, strerror(errno));
		return -errno;
	}
	for (int cpu = 0; cpu < nr; cpu++) {
		struct bpf_cpumap_val val = {.qsize = STEER_QUEUE_SIZE, .bpf_prog.fd = prog_fd};
		uint32_t key = cpu;

		if (!online[cpu])
			continue; /* its flows are handled where they arrive */
		if (bpf_map_update_elem(inst->cpus_fd, &key, &val, 0)) {
			err = -errno;
			fp_err("--steer: the kernel refused a cpumap entry for CPU %d: %s", cpu,
			       strerror(errno));
			break;
		}
	}
	close(prog_fd);
	if (!err)
		err = fp_read_config(inst, &cfg);
	if (!err) {
		cfg.steer_cpus = nr;
		err = fp_write_config(inst, &cfg);
	}
	return err;
}
