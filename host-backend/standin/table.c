/* SPDX-License-Identifier: MIT */
/*
 * table.c - the CI STAND-IN's driver table (see standin.h), made once per
 * process: every entry answers CUDA_ERROR_NOT_SUPPORTED, then each API
 * family's file sets its own. Apart from core.c so that the state every
 * family uses does not itself call the families.
 */
#include <stdlib.h>

#include "standin/standin_priv.h"

#define VA_BASE 0x7e0000000000ull

static struct vc_cuda_driver g_drv;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static uint64_t g_req_limit;

static void build(void)
{
	struct vc_cuda_driver *d = &g_drv;

	g_limit = g_req_limit ? g_req_limit : (1ull << 30);
	vc_cuda_driver_fill_unsupported(d);
	vc_smem_init(&g_mem, VA_BASE, g_limit);
	/* Each family sets only its own entries: the order is free. */
	vc_si_fill_device(d);
	vc_si_fill_ctx(d);
	vc_si_fill_memory(d);
	vc_si_fill_hostreg(d);
	vc_si_fill_pool(d);
	vc_si_fill_module(d);
	vc_si_fill_launch(d);
	vc_si_fill_graph(d);
	vc_si_fill_graph_run(d);
	vc_si_fill_graph_get(d);
	vc_si_fill_stream(d);
	vc_si_fill_export(d);
	vc_si_fill_link(d);
	vc_si_fill_managed(d);
	vc_si_fill_vmm(d);
	vc_si_fill_memops(d);
	vc_si_fill_tensormap(d);
	vc_si_fill_ctxdev(d);
	vc_si_fill_array(d);
	vc_si_fill_memmisc(d); /* after pool.c's: it keeps the current pool */
	vc_si_fill_green(d); /* after ctxdev: streams of green contexts */
	vc_si_fill_logs(d);
	vc_si_fill_texref(d); /* last: it wraps the module loads module.c and link.c set */
}

const struct vc_cuda_driver *vc_cuda_driver_standin(uint64_t mem_limit)
{
	g_req_limit = mem_limit;
	vc_si_sim_setup();
	pthread_once(&g_once, build);
	return &g_drv;
}
