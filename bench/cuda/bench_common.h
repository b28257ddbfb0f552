// bench_common.h - what the CUDA benchmark programs share: the runtime-call
// check (a failure ends the program with the call and its error name), a
// monotonic clock in microseconds and the median of a sample.
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define CK(x)                                                                       \
	do {                                                                        \
		cudaError_t e_ = (x);                                               \
		if (e_ != cudaSuccess) {                                            \
			fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x,   \
				cudaGetErrorName(e_));                              \
			exit(1);                                                    \
		}                                                                   \
	} while (0)

static inline double now_us() {
	return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

static inline double median(std::vector<double> v) {
	std::sort(v.begin(), v.end());
	return v[v.size() / 2];
}

#endif
