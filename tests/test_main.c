// SPDX-License-Identifier: GPL-2.0-only
/*
 * fp-test: the datapath tests. Needs root; runs in a network namespace of its own.
 *   fp-test                 every suite
 *   fp-test --suite NAME    datapath | differential | attach | conntable | slottable |
 *                           topology | veth | ipsec | clock
 *   fp-test --bench [OBJ]   per-packet cost, stage by stage (BPF_PROG_TEST_RUN repeat),
 *                           and that of make bench's ceiling program if given its object
 * FP_FUZZ_ITERATIONS and FP_FUZZ_SEED tune the randomized test. The conntable and slottable
 * suites need neither root nor BPF: they run under qemu-user for other architectures
 * (tests/cross/run.sh).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "common.h"
#include "fixture.h"
#include "testlib.h"
#include "tests.h"
#include "wire.h"

int main(int argc, char **argv)
{
	const char *suite = NULL;
	unsigned long iterations = 100000;
	unsigned int seed = (unsigned int)time(NULL);
	const char *env, *ceiling_obj = NULL;

	if (argc == 3 && !strcmp(argv[1], "--suite"))
		suite = argv[2];
	else if ((argc == 2 || argc == 3) && !strcmp(argv[1], "--bench")) {
		suite = "bench";
		ceiling_obj = argc == 3 ? argv[2] : NULL;
	} else if (argc != 1) {
		fprintf(stderr, "usage: fp-test [--suite "
				"datapath|differential|attach|conntable|slottable|topology|veth|"
				"ipsec|clock] "
				"[--bench [build/bench.bpf.o]]\n");
		return 2;
	}
	if (suite && (!strcmp(suite, "conntable") || !strcmp(suite, "slottable"))) {
		setvbuf(stdout, NULL, _IOLBF, 0);
		if (!strcmp(suite, "conntable"))
			test_conntable();
		else
			test_slottable();
		printf("fp-test: %d passed, %d failed\n", tl_passed, tl_failed);
		return tl_failed ? 1 : 0;
	}
	if (geteuid() != 0) {
		fprintf(stderr, "fp-test: needs root (BPF and network namespaces)\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* libbpf's messages as the command shows them: on MIPS, not a line per IFLA_PAD. */
	libbpf_set_print(fp_libbpf_print);
	fx_setup();
	if (fx_wire) /* a frame over the wire costs what a thousand test runs do */
		iterations = 5000;
	if ((env = getenv("FP_FUZZ_ITERATIONS")))
		iterations = strtoul(env, NULL, 0);
	if ((env = getenv("FP_FUZZ_SEED")))
		seed = strtoul(env, NULL, 0);

	if (suite && !strcmp(suite, "bench")) {
		prog_cost(ceiling_obj);
		fx_teardown();
		return 0;
	}
	if (!suite || !strcmp(suite, "datapath"))
		test_datapath();
	if (!suite || !strcmp(suite, "differential"))
		test_differential(iterations, seed);
	if (!suite || !strcmp(suite, "attach"))
		test_attach();
	if (!suite || !strcmp(suite, "conntable"))
		test_conntable();
	if (!suite)
		test_slottable();
	if (!suite || !strcmp(suite, "topology"))
		test_topology();
	if (!suite || !strcmp(suite, "veth"))
		test_veth_peer();
	if (!suite || !strcmp(suite, "ipsec"))
		test_ipsec();
	if (!suite || !strcmp(suite, "clock"))
		test_clock();
	fx_teardown();

	printf("fp-test: %d passed, %d failed\n", tl_passed, tl_failed);
	return tl_failed ? 1 : 0;
}
