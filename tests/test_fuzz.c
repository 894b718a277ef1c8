// SPDX-License-Identifier: GPL-2.0-only
#include "tests.h"
void test_fuzz(unsigned long iterations, unsigned int seed) { (void)iterations; (void)seed; }
