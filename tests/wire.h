/* SPDX-License-Identifier: GPL-2.0-only */
/* Frames over the fixture's veths, where BPF_PROG_TEST_RUN takes no XDP context (wire.c). */
#ifndef FP_TEST_WIRE_H
#define FP_TEST_WIRE_H

#include <stdbool.h>
#include <stdint.h>

extern bool fx_wire; /* fx_run() sends frames over the wire */

void fx_wire_setup(void);
/* Takes the program off the fixture's ports, for a test that attaches it itself. */
void fx_wire_release(void);
int fx_wire_run(const uint8_t *in, uint32_t in_len, int ingress, uint8_t *out, uint32_t *out_len);

#endif
