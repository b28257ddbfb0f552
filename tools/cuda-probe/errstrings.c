#include <cuda.h>
#include <stdio.h>
int main(void) {
	cuInit(0);
	for (int e = 0; e < 1000; e++) {
		const char *n = NULL, *s = NULL;
		if (cuGetErrorName((CUresult)e, &n) == CUDA_SUCCESS && cuGetErrorString((CUresult)e, &s) == CUDA_SUCCESS)
			printf("%d\t%s\t%s\n", e, n, s);
	}
	return 0;
}
