/* SPDX-License-Identifier: GPL-2.0-only */
/* The suites of fp-test. */
#ifndef FP_TESTS_H
#define FP_TESTS_H

void test_datapath(void);
void test_differential(unsigned long iterations, unsigned int seed);
void test_attach(void);
void test_conntable(void);
void test_slottable(void);
void test_topology(void);
void test_veth_peer(void);
void test_ipsec(void);
void test_clock(void);
/* make bench-prog; @ceiling_obj: build/bench.bpf.o, for the ceiling's line (NULL: none). */
void prog_cost(const char *ceiling_obj);

#endif
