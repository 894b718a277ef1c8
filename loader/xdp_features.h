/* SPDX-License-Identifier: GPL-2.0-only */
/* What a device's frames and redirects are at XDP (xdp_features.c). */
#ifndef FP_XDP_FEATURES_H
#define FP_XDP_FEATURES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FP_XDP_ACT_NDO_XMIT 4 /* NETDEV_XDP_ACT_NDO_XMIT: takes redirected frames */

/* The device's NETDEV_XDP_ACT_* flags; -EOPNOTSUPP when the kernel cannot say (< 6.3). */
int fp_xdp_features(int ifindex, uint64_t *features);
/*
 * Whether ifindex takes frames redirected to it by native XDP: 1, or 0 and why not in why
 * (if it is a veth; may be NULL), -EOPNOTSUPP when the kernel cannot say (before 6.3, for
 * another device or a veth whose peer is not found), or another -errno.
 */
int fp_takes_redirects(int ifindex, char *why, size_t len);
/*
 * Whether attached port ifindex, in native mode or not (@native), takes frames redirected
 * to it by native XDP: fp_takes_redirects(), and where the kernel cannot say, a guess that
 * errs on the side of the kernel's path: 1, or 0 and why not in why (may be NULL), or
 * another -errno.
 */
int fp_port_takes_redirects(int ifindex, bool native, char *why, size_t len);
#define FP_DRIVER_LEN 33 /* struct ethtool_drvinfo's driver[32], and a NUL */
/* @ifindex's driver (ethtool's driver information) into @driver; "" if unknown. */
void fp_port_driver(int ifindex, char driver[FP_DRIVER_LEN]);
/* Whether a veth does GRO without an XDP program (Linux 5.13): before, its GRO flag is
 * only a flag, and it takes redirected frames only with an XDP program on its peer. */
bool fp_veth_napi_with_gro(void);
/*
 * Whether the VLAN tags of frames arriving on ifindex are taken out of them before XDP
 * runs (receive VLAN offload; for a veth, its peer's transmit VLAN offload): XDP then sees
 * a VLAN's frames untagged, as if they were the port's own. If so, fix is the command
 * that turns it off.
 */
bool fp_strips_vlan_tags(int ifindex, char *fix, size_t len);

#endif
