/* SPDX-License-Identifier: GPL-2.0-only */
/* nftables ruleset changes, as the daemon hears of them (firewall_watch.c). */
#ifndef FP_FIREWALL_WATCH_H
#define FP_FIREWALL_WATCH_H

#include <stdbool.h>

struct mnl_socket;

struct fp_firewall {
	struct mnl_socket *nl; /* NFNLGRP_NFTABLES notifications */
	char *buf;
};

int firewall_open(struct fp_firewall *fw);
void firewall_close(struct fp_firewall *fw);
int firewall_fd(const struct fp_firewall *fw);
/* Reads every pending notification: true if the ruleset changed or notifications were lost. */
bool firewall_changed(struct fp_firewall *fw);

#endif
