// SPDX-License-Identifier: GPL-2.0-only
/*
 * The instance, as the fuzz targets give it to the sync: real flow maps, a router with two
 * attached interfaces and a routing table that is a function of the address.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>

#include "flowmap.h"
#include "fuzz.h"
#include "hooks.h"
#include "instance.h"
#include "route_watch.h"
#include "slottable.h"

#define FUZZ_FLOWS 256 /* small: a fuzzer reaches "map full" too */

void fuzz_flow_maps(struct fp_instance *inst)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_NO_PREALLOC);
	LIBBPF_OPTS(bpf_map_create_opts, slot_opts, .map_flags = BPF_F_MMAPABLE);

	inst->flows4_fd =
		bpf_map_create(BPF_MAP_TYPE_ARRAY, "fuzz_flows4", sizeof(uint32_t),
			       sizeof(struct fp_slot4), fp_slots_for(FUZZ_FLOWS), &slot_opts);
	inst->flows6_fd =
		bpf_map_create(BPF_MAP_TYPE_ARRAY, "fuzz_flows6", sizeof(uint32_t),
			       sizeof(struct fp_slot6), fp_slots_for(FUZZ_FLOWS), &slot_opts);
	inst->marks4_fd =
		bpf_map_create(BPF_MAP_TYPE_HASH, "fuzz_marks4", sizeof(struct fp_flow_key4),
			       sizeof(uint32_t), FUZZ_FLOWS, &opts);
	inst->marks6_fd =
		bpf_map_create(BPF_MAP_TYPE_HASH, "fuzz_marks6", sizeof(struct fp_flow_key6),
			       sizeof(uint32_t), FUZZ_FLOWS, &opts);
	inst->nat6_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "fuzz_nat6", sizeof(struct fp_flow_key6),
				       sizeof(struct fp_nat6), FUZZ_FLOWS, &opts);
	inst->nh_ctx_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "fuzz_nh_ctx", sizeof(uint32_t),
					 sizeof(struct fp_nh_ctx), 2 * FP_NH_CTX_HALF, NULL);
	inst->nh_claim_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "fuzz_nh_claim", sizeof(uint32_t),
					   sizeof(struct fp_nh_ctx), 2 * FP_NH_CTX_HALF, NULL);
	if (inst->flows4_fd < 0 || inst->flows6_fd < 0 || inst->marks4_fd < 0 ||
	    inst->marks6_fd < 0 || inst->nat6_fd < 0 || inst->nh_ctx_fd < 0 ||
	    inst->nh_claim_fd < 0)
		fuzz_fail("cannot create the flow maps (root?)");
	inst->slots4 = calloc(1, sizeof(*inst->slots4));
	inst->slots6 = calloc(1, sizeof(*inst->slots6));
	if (!inst->slots4 || !inst->slots6 ||
	    fp_slots_map(inst->slots4, inst->flows4_fd, &fp_slot_shape4) ||
	    fp_slots_map(inst->slots6, inst->flows6_fd, &fp_slot_shape6))
		fuzz_fail("cannot map the flow tables");
	/* No program: inserts go live at the next sync. */
	inst->slots4->no_readers = inst->slots6->no_readers = true;
	inst->slots4->owner = inst->slots6->owner = true;
}

static size_t map_entries(int fd, size_t key_size)
{
	char key[64], next[64];
	size_t n = 0;
	void *prev = NULL;

	(void)key_size;
	while (bpf_map_get_next_key(fd, prev, next) == 0) {
		memcpy(key, next, sizeof(key));
		prev = key;
		n++;
	}
	return n;
}

/* A table's entries: the live slots and those waiting to be (RESERVED). */
static size_t slot_entries(const struct fp_slots *t)
{
	size_t n = 0;

	for (uint32_t i = 0; i <= t->mask; i++)
		n += fp_slot_taken(*fp_slot_state(t, fp_slot_at(t, i)));
	return n;
}

size_t fuzz_flow_entries(const struct fp_instance *inst)
{
	return slot_entries(inst->slots4) + slot_entries(inst->slots6);
}

size_t fuzz_mark_entries(const struct fp_instance *inst)
{
	return map_entries(inst->marks4_fd, sizeof(struct fp_flow_key4)) +
	       map_entries(inst->marks6_fd, sizeof(struct fp_flow_key6));
}

/* 198.18.0.0/16 and 2001:2:0:1::/64 are behind the LAN port; 198.19.0.0/16 and
 * 2001:2:0:2::/64 behind the WAN port, but for the router's own 198.18.1.1 and 198.19.2.1;
 * everything else behind an interface the fastpath is not attached to (4), or unroutable
 * when its last byte is odd. */
int route_oif(struct fp_route *rt, int family, const uint32_t *addr, uint32_t mark)
{
	const uint8_t *a = (const uint8_t *)addr;

	(void)rt;
	(void)mark;
	if (family == AF_INET && a[0] == 198 &&
	    ((a[1] == 18 && a[2] == 1) || (a[1] == 19 && a[2] == 2)) && a[3] == 1)
		return 0;
	if (family == AF_INET) {
		if (a[0] == 198 && a[1] == 18)
			return FUZZ_LAN_IFINDEX;
		if (a[0] == 198 && a[1] == 19)
			return FUZZ_WAN_IFINDEX;
		return a[3] & 1 ? -ENETUNREACH : 4;
	}
	if (a[0] == 0x20 && a[1] == 0x01 && a[3] == 0x02 && a[7] == 1)
		return FUZZ_LAN_IFINDEX;
	if (a[0] == 0x20 && a[1] == 0x01 && a[3] == 0x02 && a[7] == 2)
		return FUZZ_WAN_IFINDEX;
	return a[15] & 1 ? -ENETUNREACH : 4;
}

int fp_tx_ports(const struct fp_instance *inst, uint32_t *ifindexes, int max)
{
	(void)inst;
	if (max < 2)
		return 0;
	ifindexes[0] = FUZZ_LAN_IFINDEX;
	ifindexes[1] = FUZZ_WAN_IFINDEX;
	return 2;
}

bool fp_tx_port_attached(const struct fp_instance *inst, uint32_t ifindex)
{
	(void)inst;
	return ifindex == FUZZ_LAN_IFINDEX || ifindex == FUZZ_WAN_IFINDEX;
}

/* Both ports at native XDP. */
enum fp_hook fp_hook_of(const struct fp_instance *inst, int ifindex)
{
	(void)inst;
	return ifindex == FUZZ_LAN_IFINDEX || ifindex == FUZZ_WAN_IFINDEX ? FP_HOOK_NATIVE
									  : FP_HOOK_AUTO;
}
