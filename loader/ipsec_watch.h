/* SPDX-License-Identifier: GPL-2.0-only */
/* The kernel's IPsec policies, as the daemon keeps them in view (ipsec_watch.c). */
#ifndef FP_IPSEC_WATCH_H
#define FP_IPSEC_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mnl_socket;
struct nlmsghdr;

/* The addresses an IPsec policy's selector takes (its ports and protocol are not kept),
 * and the mark a packet must have for it. */
struct fp_ipsec_sel {
	uint8_t family; /* AF_INET or AF_INET6; 0: any address of either */
	uint8_t prefixlen_s, prefixlen_d;
	uint32_t saddr[4], daddr[4]; /* network order; IPv4 uses [0] */
	uint32_t mark, mark_mask;    /* mask 0: any mark */
};

struct fp_ipsec {
	struct mnl_socket *events; /* XFRMNLGRP_POLICY; NULL: the kernel has no xfrm netlink */
	char *buf;
	struct fp_ipsec_sel *sels;
	size_t nr, cap;
};

/* Subscribes to policy changes and reads the policies. 0, or -errno; a kernel without
 * xfrm netlink (no IPsec to configure) is no error: no policies. */
int ipsec_open(struct fp_ipsec *ip);
/* Reads the policies once, without following them (status). 0 or -errno. */
int ipsec_read(struct fp_ipsec *ip);
void ipsec_close(struct fp_ipsec *ip);
int ipsec_fd(const struct fp_ipsec *ip); /* -1 without xfrm netlink: poll skips it */
/* Reads every pending notification; if any (or some were lost), reads the policies again
 * and returns true. */
bool ipsec_changed(struct fp_ipsec *ip);
/*
 * Whether some IPsec policy may apply to a connection whose tuples hold @addrs (@n
 * addresses of @family, each 1 or 4 words) and whose conntrack mark is @mark: a selector
 * whose source prefix takes one of them and whose destination prefix takes one. Before or
 * after NAT, either direction: any may be what the kernel looks up. A policy with a mark
 * (a VTI's) takes only packets with it; the connection's mark stands for theirs.
 */
bool ipsec_covers(const struct fp_ipsec *ip, uint8_t family, const uint32_t *addrs, int n,
		  uint32_t mark);
/* The selector of an XFRM_MSG_NEWPOLICY message, if the policy is IPsec's: a packet it
 * takes is transformed (it has templates), in, out or forward. 1 if so, 0 if not, -EINVAL
 * for a message that is not a well-formed policy. */
int ipsec_parse_policy(const struct nlmsghdr *nlh, struct fp_ipsec_sel *sel);

#endif
