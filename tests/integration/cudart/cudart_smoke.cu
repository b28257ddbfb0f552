// cudart_smoke.cu - NVIDIA's CUDA runtime (static or shared) over the guest
// libcuda.so.1, checking everything that does not depend on a kernel having
// run, so that CI can run it against the CI stand-in: initialisation (the
// runtime's export-table integrity check), device properties, memory and
// copies (verified byte for byte), memsets, streams, events, launches
// (accepted), pinned host memory, pointer attributes, error reporting.
#include <cstdio>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>

#define CK(x)                                                                        \
	do {                                                                         \
		cudaError_t e_ = (x);                                                \
		if (e_ != cudaSuccess) {                                             \
			printf("FAIL %s:%d %s: %s\n", __FILE__, __LINE__, #x,        \
			       cudaGetErrorName(e_));                                \
			return 1;                                                    \
		}                                                                    \
	} while (0)
#define EXPECT(c)                                                                    \
	do {                                                                         \
		if (!(c)) {                                                          \
			printf("FAIL %s:%d %s\n", __FILE__, __LINE__, #c);           \
			return 1;                                                    \
		}                                                                    \
	} while (0)

__global__ void touch(int *p, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) p[i] += 1;
}

int main() {
	int n = 0, rt = 0, drv = 0;
	cudaDeviceProp p;

	CK(cudaGetDeviceCount(&n));
	EXPECT(n >= 1);
	CK(cudaRuntimeGetVersion(&rt));
	CK(cudaDriverGetVersion(&drv));
	EXPECT(drv >= rt);
	CK(cudaGetDeviceProperties(&p, 0));
	EXPECT(p.warpSize == 32 && p.maxThreadsPerBlock == 1024 && p.major >= 7);
	CK(cudaSetDevice(0));

	for (size_t size : {size_t(1), size_t(4096), size_t(5000), size_t(1) << 20, (size_t(33) << 20) + 5}) {
		std::vector<unsigned char> a(size), b(size);
		for (size_t i = 0; i < size; i++) a[i] = (unsigned char)(i * 7 + size);
		void *d;
		CK(cudaMalloc(&d, size));
		CK(cudaMemcpy(d, a.data(), size, cudaMemcpyHostToDevice));
		CK(cudaMemcpy(b.data(), d, size, cudaMemcpyDeviceToHost));
		EXPECT(a == b);
		CK(cudaFree(d));
	}

	int *d1, *d2, *h;
	const int N = 1 << 16;
	cudaStream_t s;
	cudaEvent_t e0, e1;
	CK(cudaMalloc(&d1, N * sizeof(int)));
	CK(cudaMalloc(&d2, N * sizeof(int)));
	CK(cudaMallocHost(&h, N * sizeof(int)));
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	CK(cudaMemsetAsync(d1, 0x5a, N * sizeof(int), s));
	CK(cudaEventRecord(e0, s));
	touch<<<N / 256, 256, 0, s>>>(d2, N); // accepted; its result is not checked here
	CK(cudaGetLastError());
	CK(cudaEventRecord(e1, s));
	CK(cudaMemcpyAsync(d2, d1, N * sizeof(int), cudaMemcpyDeviceToDevice, s));
	CK(cudaMemcpyAsync(h, d2, N * sizeof(int), cudaMemcpyDeviceToHost, s));
	CK(cudaStreamSynchronize(s));
	for (int i = 0; i < N; i++) EXPECT(h[i] == 0x5a5a5a5a);
	float ms = -1;
	CK(cudaEventElapsedTime(&ms, e0, e1));
	EXPECT(ms >= 0);
	cudaPointerAttributes pa;
	CK(cudaPointerGetAttributes(&pa, d1));
	EXPECT(pa.type == cudaMemoryTypeDevice);
	CK(cudaPointerGetAttributes(&pa, h));
	EXPECT(pa.type == cudaMemoryTypeHost);

	// Shape errors come back at once, as natively (measured on CUDA 13.0:
	// the driver refuses with CUDA_ERROR_INVALID_VALUE, the runtime says
	// cudaErrorInvalidValue).
	touch<<<1, 4096>>>(d1, N);
	EXPECT(cudaGetLastError() == cudaErrorInvalidValue);
	EXPECT(cudaMemcpy(h, (void *)0x10, 8, cudaMemcpyDeviceToHost) != cudaSuccess);
	EXPECT(strcmp(cudaGetErrorName(cudaErrorMemoryAllocation), "cudaErrorMemoryAllocation") == 0);

	CK(cudaEventDestroy(e0));
	CK(cudaEventDestroy(e1));
	CK(cudaStreamDestroy(s));
	CK(cudaFreeHost(h));
	CK(cudaFree(d1));
	CK(cudaFree(d2));
	CK(cudaDeviceSynchronize());
	printf("PASS cudart_smoke\n");
	return 0;
}
