/* SPDX-License-Identifier: MIT */
/*
 * driver.c - loading the host's real CUDA driver at run time.
 *
 * vcuda-server is built without linking libcuda, so that the same binary runs
 * (with the CI stand-in) where there is no driver, and so that it can refuse
 * to load vcuda's own guest libcuda.so.1 by mistake (a server forwarding to
 * itself would deadlock).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "vc_cuda_driver_gen.h"
#include "vcuda/server.h"

static const char *const candidates[] = {
	"/usr/local/nvidia/lib64/libcuda.so.1",
	"/usr/lib/x86_64-linux-gnu/libcuda.so.1",
	"/lib/x86_64-linux-gnu/libcuda.so.1",
	"/usr/lib64/libcuda.so.1",
	"libcuda.so.1",
};

static void *sym(void *h, const char *name)
{
	return dlsym(h, name);
}

struct vc_cuda_driver *vc_cuda_driver_open(const char *path, char *err, size_t errlen)
{
	struct vc_cuda_driver *d;
	const char *missing = "?";
	void *h = NULL;
	CUresult rc;

	for (size_t i = 0; !h && i < (path ? 1 : sizeof(candidates) / sizeof(candidates[0])); i++)
		h = dlopen(path ? path : candidates[i], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(err, errlen, "no CUDA driver (libcuda.so.1) found%s%s: is the NVIDIA driver installed?",
			 path ? " at " : "", path ? path : "");
		return NULL;
	}
	if (dlsym(h, "vcuda_guest_library")) {
		snprintf(err, errlen, "the libcuda.so.1 found is vcuda's guest library, not NVIDIA's driver; "
				      "give the real one with --driver PATH");
		goto err_close;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		snprintf(err, errlen, "out of memory");
		goto err_close;
	}
	if (vc_cuda_driver_resolve(d, sym, h, &missing)) {
		snprintf(err, errlen, "the CUDA driver lacks %s: vcuda needs a CUDA 13 driver (580 or later)",
			 missing);
		goto err_free;
	}
	rc = d->cuInit(0);
	if (rc != CUDA_SUCCESS) {
		snprintf(err, errlen, "cuInit failed with CUDA error %d: no usable GPU?", (int)rc);
		goto err_free;
	}
	return d; /* the library stays loaded for the life of the process */

err_free:
	free(d);
err_close:
	dlclose(h);
	return NULL;
}
