/* procaddr_map.c - ask the real driver what cuGetProcAddress_v2 returns for
 * every (name, cudaVersion, flags) that cudaTypedefs.h knows, and name the
 * exported symbol it is (dladdr). Output: name<TAB>version<TAB>flags<TAB>symbol
 * (or "-" with the status when not found). Run on the GPU machine. */
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>

#include "procaddr_list.h"

int main(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	CUresult (*gpa)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);

	if (!h) {
		fprintf(stderr, "no libcuda.so.1: %s\n", dlerror());
		return 1;
	}
	gpa = (CUresult(*)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *))dlsym(h, "cuGetProcAddress_v2");
	if (!gpa)
		return 1;
	for (size_t i = 0; i < sizeof(PAIRS) / sizeof(PAIRS[0]); i++) {
		for (int f = 0; f < 2; f++) {
			cuuint64_t flags = f ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : CU_GET_PROC_ADDRESS_DEFAULT;
			CUdriverProcAddressQueryResult st = 0;
			void *fn = NULL;
			CUresult rc = gpa(PAIRS[i].name, &fn, PAIRS[i].ver, flags, &st);
			Dl_info di;

			if (rc == CUDA_SUCCESS && st == CU_GET_PROC_ADDRESS_SUCCESS && fn && dladdr(fn, &di) && di.dli_sname)
				printf("%s\t%d\t%d\t%s\n", PAIRS[i].name, PAIRS[i].ver, (int)flags, di.dli_sname);
			else
				printf("%s\t%d\t%d\t-\trc=%d status=%d\n", PAIRS[i].name, PAIRS[i].ver, (int)flags, rc, (int)st);
		}
	}
	return 0;
}
