/* SPDX-License-Identifier: MIT */
/*
 * vt_kernels.h - kernels the transport-level tests launch, as PTX that the
 * driver JIT-compiles for whatever GPU it has.
 *
 * vc_standin_store(dst, value) stores the 4 bytes of value at dst (4-byte
 * aligned) when it runs: on a GPU this PTX runs; over the CI stand-in the
 * function of that name is a test double with the same effect
 * (host-backend/standin/standin.h, VC_STANDIN_STORE_NAME). So a test that
 * launches it checks its parameters end to end, the same on both.
 */
#ifndef VT_KERNELS_H
#define VT_KERNELS_H

#define VT_STORE_KERNEL "vc_standin_store"

static const char vt_store_ptx[] =
	".version 8.0\n"
	".target sm_75\n"
	".address_size 64\n"
	"\n"
	".visible .entry vc_standin_store(\n"
	"\t.param .u64 vc_standin_store_param_0,\n"
	"\t.param .u32 vc_standin_store_param_1\n"
	")\n"
	"{\n"
	"\t.reg .b32 %r<2>;\n"
	"\t.reg .b64 %rd<3>;\n"
	"\n"
	"\tld.param.u64 %rd1, [vc_standin_store_param_0];\n"
	"\tld.param.u32 %r1, [vc_standin_store_param_1];\n"
	"\tcvta.to.global.u64 %rd2, %rd1;\n"
	"\tst.global.u32 [%rd2], %r1;\n"
	"\tret;\n"
	"}\n";

#endif /* VT_KERNELS_H */
