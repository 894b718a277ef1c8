// SPDX-License-Identifier: GPL-2.0-only
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "packet.h"

uint32_t csum_partial(const void *data, size_t len, uint32_t sum)
{
	const uint8_t *p = data;

	for (; len > 1; len -= 2, p += 2)
		sum += (uint32_t)(p[0] << 8 | p[1]);
	if (len)
		sum += (uint32_t)(p[0] << 8);
	return sum;
}

uint16_t csum_fold32(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

static uint32_t pseudo_sum(int family, const uint8_t *l3, uint8_t proto, size_t l4_len)
{
	uint32_t sum = 0;

	if (family == 4)
		sum = csum_partial(l3 + 12, 8, 0);
	else
		sum = csum_partial(l3 + 8, 32, 0);
	return sum + proto + (uint32_t)l4_len;
}

/* Computes and stores the checksum of the L4 header at l4 (field at csum_off). */
static void l4_fill_csum(int family, uint8_t *l3, uint8_t *l4, size_t l4_len, uint8_t proto,
			 size_t csum_off)
{
	uint16_t check;

	put16(l4 + csum_off, 0);
	check = ~csum_fold32(csum_partial(l4, l4_len, pseudo_sum(family, l3, proto, l4_len)));
	if (proto == IPPROTO_UDP && check == 0)
		check = 0xffff; /* RFC 768: a computed zero is sent as all ones */
	put16(l4 + csum_off, check);
}

size_t pkt_build(const struct pkt_spec *s, uint8_t *buf)
{
	uint8_t *p = buf, *l3, *l4, *pppoe = NULL;
	size_t l4_len, hdr_len, opt_len, l3_len, len;
	uint8_t l4_proto = s->proto, first_next;

	memset(buf, 0, PKT_MAX);
	memcpy(p, s->dmac, 6);
	memcpy(p + 6, s->smac, 6);
	p += 12;
	if (s->vlan_id) {
		put16(p, 0x8100);
		put16(p + 2, s->vlan_id);
		p += 4;
	}
	if (s->pppoe_sid) {
		pppoe = p + 2;
		put16(p, 0x8864);
		pppoe[0] = 0x11;
		pppoe[1] = 0;
		put16(pppoe + 2, s->pppoe_sid);
		/* length at pppoe + 4, once the IP length is known */
		put16(pppoe + 6, s->ethertype ? s->ethertype : (s->family == 6 ? 0x0057 : 0x0021));
		p += 10;
	} else {
		put16(p, s->ethertype ? s->ethertype : (s->family == 6 ? 0x86dd : 0x0800));
		p += 2;
	}
	l3 = p;

	hdr_len = l4_proto == IPPROTO_TCP ? 20 : 8;
	l4_len = hdr_len + s->payload_len;
	if (s->family == 4) {
		opt_len = s->ip_opt_words * 4;
		l3_len = 20 + opt_len + l4_len;
		l3[0] = 0x40 | (5 + s->ip_opt_words);
		l3[1] = s->tos;
		put16(l3 + 2, l3_len);
		put16(l3 + 4, 0x1234);
		put16(l3 + 6, s->frag);
		l3[8] = s->ttl ? s->ttl : 64;
		l3[9] = s->proto;
		inet_pton(AF_INET, s->saddr, l3 + 12);
		inet_pton(AF_INET, s->daddr, l3 + 16);
		memset(l3 + 20, 1, opt_len); /* NOP options */
		put16(l3 + 10, ~csum_fold32(csum_partial(l3, 20 + opt_len, 0)));
		l4 = l3 + 20 + opt_len;
	} else {
		/* Extension headers: a fragment header (8 bytes) and/or destination options. */
		size_t ext = (s->frag ? 8 : 0) + (s->ip_opt_words ? 8 : 0);
		uint8_t *e = l3 + 40;

		l3_len = 40 + ext + l4_len;
		l3[0] = 0x60 | (s->tos >> 4);
		l3[1] = (uint8_t)(s->tos << 4);
		put16(l3 + 4, l3_len - 40);
		first_next = s->proto;
		if (s->ip_opt_words) {
			first_next = IPPROTO_DSTOPTS;
			e[0] = s->frag ? IPPROTO_FRAGMENT : s->proto;
			e[1] = 0; /* 8 bytes: PadN */
			e[2] = 1;
			e[3] = 4;
			e += 8;
		} else if (s->frag) {
			first_next = IPPROTO_FRAGMENT;
		}
		if (s->frag) {
			e[0] = s->proto;
			put16(e + 2, s->frag);
			e += 8;
		}
		l3[6] = first_next;
		l3[7] = s->ttl ? s->ttl : 64;
		inet_pton(AF_INET6, s->saddr, l3 + 8);
		inet_pton(AF_INET6, s->daddr, l3 + 24);
		l4 = e;
	}

	put16(l4, s->sport);
	put16(l4 + 2, s->dport);
	if (s->payload_len) {
		for (size_t i = 0; i < s->payload_len; i++)
			l4[hdr_len + i] = (uint8_t)(i * 7 + 3);
		if (s->payload_len >= 2)
			put16(l4 + hdr_len, s->payload_word);
	}
	if (l4_proto == IPPROTO_TCP) {
		put16(l4 + 4, 0x0102);
		put16(l4 + 6, 0x0304); /* seq */
		put16(l4 + 8, 0x0506);
		put16(l4 + 10, 0x0708); /* ack */
		l4[12] = 5 << 4;
		l4[13] = s->tcp_flags ? s->tcp_flags : 0x10;
		put16(l4 + 14, 65535);
		l4_fill_csum(s->family, l3, l4, l4_len, IPPROTO_TCP, 16);
	} else if (l4_proto == IPPROTO_UDP) {
		put16(l4 + 4, l4_len);
		if (s->udp_no_csum && s->family == 4)
			put16(l4 + 6, 0);
		else
			l4_fill_csum(s->family, l3, l4, l4_len, IPPROTO_UDP, 6);
	}

	if (pppoe)
		put16(pppoe + 4, l3_len + 2);
	len = (size_t)(l3 - buf) + l3_len;
	if (s->pad_to > len)
		len = s->pad_to;
	return len;
}

bool pkt_view(const uint8_t *buf, size_t len, struct pkt_view *v)
{
	size_t off = 14;
	const uint8_t *l3;
	uint16_t type;

	if (len < 14)
		return false;
	type = buf[12] << 8 | buf[13];
	if (type == 0x8100) {
		if (len < 18)
			return false;
		type = buf[16] << 8 | buf[17];
		off = 18;
	}
	if (type == 0x8864) {
		uint16_t ppp;

		if (len < off + 8)
			return false;
		ppp = buf[off + 6] << 8 | buf[off + 7];
		type = ppp == 0x0021 ? 0x0800 : ppp == 0x0057 ? 0x86dd : 0;
		off += 8;
	}
	l3 = buf + off;
	v->l2_len = v->l3_off = off;
	if (type == 0x0800) {
		if (len < off + 20 || (l3[0] >> 4) != 4 || (l3[0] & 15) < 5)
			return false;
		v->family = 4;
		v->l3_len = l3[2] << 8 | l3[3];
		v->l4_off = off + (l3[0] & 15) * 4;
		v->proto = l3[9];
	} else if (type == 0x86dd) {
		if (len < off + 40)
			return false;
		v->family = 6;
		v->l3_len = 40 + (l3[4] << 8 | l3[5]);
		v->l4_off = off + 40;
		v->proto = l3[6];
	} else {
		return false;
	}
	if (v->l3_len < v->l4_off - off || off + v->l3_len > len)
		return false;
	return true;
}

bool pkt_ipv4_csum_ok(const uint8_t *buf, size_t len)
{
	struct pkt_view v;
	size_t ihl;

	if (!pkt_view(buf, len, &v) || v.family != 4)
		return false;
	ihl = (buf[v.l3_off] & 15) * 4;
	return csum_fold32(csum_partial(buf + v.l3_off, ihl, 0)) == 0xffff;
}

size_t pkt_l4_csum_off(const struct pkt_view *v)
{
	if (v->proto == IPPROTO_TCP)
		return v->l4_off + 16;
	if (v->proto == IPPROTO_UDP)
		return v->l4_off + 6;
	return 0;
}

bool pkt_l4_csum_ok(const uint8_t *buf, size_t len)
{
	struct pkt_view v;
	size_t l4_len, off;

	if (!pkt_view(buf, len, &v))
		return false;
	off = pkt_l4_csum_off(&v);
	if (!off)
		return false;
	l4_len = v.l3_len - (v.l4_off - v.l3_off);
	if (off + 2 > v.l3_off + v.l3_len)
		return false;
	if (v.family == 4 && v.proto == IPPROTO_UDP && buf[off] == 0 && buf[off + 1] == 0)
		return true;
	return csum_fold32(csum_partial(buf + v.l4_off, l4_len,
					pseudo_sum(v.family, buf + v.l3_off, v.proto, l4_len))) ==
	       0xffff;
}

bool pkt_l4_csum_seed(uint8_t *buf, size_t len)
{
	struct pkt_view v;
	size_t off;

	if (!pkt_view(buf, len, &v) || !(off = pkt_l4_csum_off(&v)))
		return false;
	put16(buf + off, csum_fold32(pseudo_sum(v.family, buf + v.l3_off, v.proto,
						v.l3_len - (v.l4_off - v.l3_off))));
	return true;
}
