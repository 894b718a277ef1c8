// SPDX-License-Identifier: GPL-2.0-only
/*
 * A libFuzzer target's inputs without libFuzzer: each file named runs through the target
 * once. For machines the fuzzers are not built for (the cross builds run the command line
 * target under qemu-user, tests/cross/run.sh). Prints "N passed, 0 failed"; a failing
 * input aborts, as under libFuzzer.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
	int inputs = 0;

	LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		uint8_t *data;
		long size;

		if (!f || fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
			fprintf(stderr, "replay: cannot read %s\n", argv[i]);
			return 2;
		}
		data = malloc(size ? size : 1);
		if (!data || fread(data, 1, size, f) != (size_t)size) {
			fprintf(stderr, "replay: cannot read %s\n", argv[i]);
			return 2;
		}
		fclose(f);
		LLVMFuzzerTestOneInput(data, size);
		free(data);
		inputs++;
	}
	/* The target sent stdout to /dev/null: the count goes to stderr. */
	fprintf(stderr, "replay: %d passed, 0 failed\n", inputs);
	return 0;
}
