/* SPDX-License-Identifier: MIT */
/* cu_out.h - where a CUDA operation's results go (decoder <-> CUDA executor). */
#ifndef VC_CU_OUT_H
#define VC_CU_OUT_H

#include <stdbool.h>
#include <stdint.h>

struct vc_ring_host;

/*
 * A reply slot holds the operation's reply struct in its first VC_CU_REP_MAX
 * bytes and bulk data after them. Asynchronous operations have no slot: rep
 * points at scratch memory and data is NULL.
 */
struct vc_cu_out {
	uint8_t *rep;      /* VC_CU_REP_MAX bytes */
	uint32_t rep_len;
	uint8_t *data;     /* reply data area, NULL when asynchronous */
	uint32_t data_cap;
	uint32_t data_len;
	struct vc_ring_host *ring; /* for staging-arena ranges */
	bool bulk;         /* it moved arena data: publish progress right after it */
	bool console;      /* it may have flushed device printf: collect before the reply */
	void (*wake)(void *arg); /* signal the guest's sleeping threads */
	void *wake_arg;
	int mem_fd;        /* the region's memfd, -1 when unknown */
	uint64_t mem_off;  /* the region's offset in mem_fd */
	bool has_slot;     /* a synchronous command: slot and seq below */
	uint32_t slot;
	uint64_t seq;
};

/* An executor's answer meaning "the reply will be written later". */
#define VC_CU_DEFERRED 0x7fff0001

#endif /* VC_CU_OUT_H */
