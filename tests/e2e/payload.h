/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The end-to-end tests' UDP payloads (fp-udp, fp-tap): @len bytes derived from sequence
 * number @seq, which they start with, so that an echo is checked byte for byte.
 */
#ifndef FP_E2E_PAYLOAD_H
#define FP_E2E_PAYLOAD_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline void payload_fill(uint8_t *buf, uint32_t seq, size_t len)
{
	uint32_t x = seq * 2654435761u + 1;

	memcpy(buf, &seq, 4);
	for (size_t i = 4; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		buf[i] = (uint8_t)x;
	}
}

static inline uint32_t payload_seq(const uint8_t *buf)
{
	uint32_t seq;

	memcpy(&seq, buf, 4);
	return seq;
}

#endif
