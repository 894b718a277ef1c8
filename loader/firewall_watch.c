// SPDX-License-Identifier: GPL-2.0-only
/*
 * The firewall watch: every committed nftables transaction (a rule, a chain, a set element
 * added or removed, `fw4 reload`, iptables-nft) is announced on NFNLGRP_NFTABLES. An
 * offloaded connection was accepted by the ruleset of its time; after a change the daemon
 * returns every flow to the kernel, where the new ruleset judges their packets again (see
 * ctsync_fence_all). iptables-legacy rules send no notification and are not seen.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>

#include "common.h"
#include "firewall_watch.h"

#define FW_BUF_SIZE MNL_SOCKET_BUFFER_SIZE

int firewall_open(struct fp_firewall *fw)
{
	int group = NFNLGRP_NFTABLES;

	memset(fw, 0, sizeof(*fw));
	fw->buf = malloc(FW_BUF_SIZE);
	fw->nl = mnl_socket_open2(NETLINK_NETFILTER, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (!fw->buf || !fw->nl || mnl_socket_bind(fw->nl, 0, MNL_SOCKET_AUTOPID) ||
	    mnl_socket_setsockopt(fw->nl, NETLINK_ADD_MEMBERSHIP, &group, sizeof(group))) {
		fp_err("cannot watch the nftables ruleset: %s", strerror(errno));
		firewall_close(fw);
		return -errno;
	}
	return 0;
}

void firewall_close(struct fp_firewall *fw)
{
	if (fw->nl)
		mnl_socket_close(fw->nl);
	free(fw->buf);
	memset(fw, 0, sizeof(*fw));
}

int firewall_fd(const struct fp_firewall *fw)
{
	return mnl_socket_get_fd(fw->nl);
}

bool firewall_changed(struct fp_firewall *fw)
{
	bool changed = false;

	for (;;) {
		/* What changed does not matter: any change may reject an offloaded flow. */
		ssize_t n = mnl_socket_recvfrom(fw->nl, fw->buf, FW_BUF_SIZE);

		if (n > 0 || (n < 0 && errno == ENOBUFS))
			changed = true;
		else if (n < 0 && errno == EINTR)
			continue;
		else
			return changed; /* EAGAIN: drained */
	}
}
