/* SPDX-License-Identifier: MIT */
/*
 * trace.h - nvml-trace, a research tool: a libnvidia-ml.so.1 that forwards
 * every call to another NVML (NVML_TRACE_TARGET: the host's real one or
 * vcuda's guest NVML) and logs each call, its first arguments and its
 * answer, and each call into nvidia-smi's private export table by slot.
 * Run the same program through it against both libraries and compare.
 */
#ifndef VC_NVML_TRACE_H
#define VC_NVML_TRACE_H

typedef unsigned long vc_word;
typedef vc_word (*vc_trace_fn)(vc_word, vc_word, vc_word, vc_word, vc_word, vc_word, vc_word, vc_word);

extern const char *const vc_trace_names[];
extern const unsigned vc_trace_count;
extern const unsigned vc_trace_idx_nvmlInternalGetExportTable;
extern const unsigned vc_trace_idx_nvmlErrorString;

/** vc_trace_target() - entry point @idx of the traced library (exits when it has none). */
vc_trace_fn vc_trace_target(unsigned idx);

/** vc_trace_log() - one line: @name(a0, a1, a2, a3) = @rc. */
void vc_trace_log(const char *name, const vc_word *a, vc_word rc);

/* A wrapper that forwards all eight argument registers/slots and logs. */
#define VC_TRACE_FN(name, idx)                                                                       \
	__attribute__((visibility("default"))) vc_word name(vc_word a0, vc_word a1, vc_word a2,      \
							     vc_word a3, vc_word a4, vc_word a5,      \
							     vc_word a6, vc_word a7)                  \
	{                                                                                            \
		vc_word a[4] = {a0, a1, a2, a3};                                                     \
		vc_word rc = vc_trace_target(idx)(a0, a1, a2, a3, a4, a5, a6, a7);                   \
		vc_trace_log(#name, a, rc);                                                          \
		return rc;                                                                           \
	}

#endif /* VC_NVML_TRACE_H */
