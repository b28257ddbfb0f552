/* SPDX-License-Identifier: MIT */
/*
 * hold_mem.c - a CUDA process for the guest's nvidia-smi test
 * (tests/vm/gpu-run.sh): allocates MIB MiB of device memory, prints what
 * cuMemGetInfo says (free and total MiB), and holds the memory until a byte
 * (or end of file) arrives on stdin.
 *
 *   hold_mem MIB
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	CUdevice d;
	CUcontext c;
	CUdeviceptr p;
	size_t f, t;
	char b;

	if (argc != 2) {
		fprintf(stderr, "usage: hold_mem MIB\n");
		return 2;
	}
	if (cuInit(0) || cuDeviceGet(&d, 0) || cuDevicePrimaryCtxRetain(&c, d) || cuCtxSetCurrent(c) ||
	    cuMemAlloc(&p, strtoull(argv[1], NULL, 0) << 20) || cuMemGetInfo(&f, &t)) {
		fprintf(stderr, "hold_mem: a CUDA call failed\n");
		return 1;
	}
	printf("%zu %zu\n", f >> 20, t >> 20);
	fflush(stdout);
	return read(0, &b, 1) < 0;
}
