// seed_bench.cu - whole small programs' totals, as a user times them: the
// host data in, NVIDIA's library at work, the result out, from and to
// pageable host buffers (malloc'd, as most programs have them). Printed as
// "metric<TAB>value<TAB>unit" lines; ci/bench-gpu.sh runs it natively and
// through vcuda-server in the same run and prints the ratios.
//
//   sgemm_total_N: cudaMemcpy of A and B to the device, cublasSgemm (N x N,
//   fp32), cudaMemcpy of C back, N = 1024 .. 16384;
//   fft2d_total_N: cudaMemcpy of an N x N complex grid to the device,
//   cufftExecC2C forward, cudaMemcpy back, N = 8 .. 8192.
//
// The handle and the plans are made once, outside the timed loop (a program
// that repeats the work keeps them); each figure is the median of its reps,
// after one untimed rep.
#include <cstring>
#include <cublas_v2.h>
#include <cufft.h>

#include "bench_common.h"

#define CKL(x)                                                                      \
	do {                                                                        \
		int e_ = (int)(x);                                                  \
		if (e_ != 0) {                                                      \
			fprintf(stderr, "%s:%d %s: status %d\n", __FILE__, __LINE__, \
				#x, e_);                                            \
			exit(1);                                                    \
		}                                                                   \
	} while (0)

static void sgemm_totals(cublasHandle_t h) {
	for (size_t n : {1024, 2048, 4096, 8192, 16384}) {
		const size_t bytes = n * n * sizeof(float);
		float *a = (float *)malloc(bytes), *b = (float *)malloc(bytes), *c = (float *)malloc(bytes);
		float *da, *db, *dc;
		const float one = 1.0f, zero = 0.0f;
		int reps = n >= 16384 ? 3 : n >= 8192 ? 5 : 10;
		std::vector<double> v;

		if (!a || !b || !c) {
			fprintf(stderr, "seed_bench: out of host memory at n = %zu\n", n);
			exit(1);
		}
		for (size_t i = 0; i < n * n; i++) {
			a[i] = (float)(i % 7) * 0.25f;
			b[i] = (float)(i % 5) * 0.5f;
		}
		CK(cudaMalloc(&da, bytes));
		CK(cudaMalloc(&db, bytes));
		CK(cudaMalloc(&dc, bytes));
		for (int r = 0; r <= reps; r++) {
			double t0 = now_us();
			CK(cudaMemcpy(da, a, bytes, cudaMemcpyHostToDevice));
			CK(cudaMemcpy(db, b, bytes, cudaMemcpyHostToDevice));
			CKL(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)n, (int)n, &one, da, (int)n, db, (int)n,
					&zero, dc, (int)n));
			CK(cudaMemcpy(c, dc, bytes, cudaMemcpyDeviceToHost));
			if (r)
				v.push_back(now_us() - t0);
		}
		// C[0][0] = sum over k of A[0][k] * B[k][0] (column-major): checked,
		// so that a wrong result cannot pass for a fast one.
		double want = 0;
		for (size_t k = 0; k < n; k++)
			want += (double)a[k * n] * (double)b[k];
		if (c[0] < want * 0.999 - 1e-3 || c[0] > want * 1.001 + 1e-3) {
			fprintf(stderr, "seed_bench: sgemm n = %zu: C[0] = %g, want %g\n", n, c[0], want);
			exit(1);
		}
		printf("sgemm_total_%zu_ms\t%.3f\tms\n", n, median(v) / 1e3);
		CK(cudaFree(da));
		CK(cudaFree(db));
		CK(cudaFree(dc));
		free(a);
		free(b);
		free(c);
	}
}

// The sgemm total at one n cut into its steps (not run by default: `seed_bench
// split [N]`, N = 1024 unless given): each step's median time, as the program
// sees it return, to tell which of them a remoting layer makes slower.
static void sgemm_split(cublasHandle_t h, size_t n) {
	const size_t bytes = n * n * sizeof(float);
	float *a = (float *)calloc(n * n, sizeof(float)), *b = (float *)calloc(n * n, sizeof(float)),
	      *c = (float *)calloc(n * n, sizeof(float));
	float *da, *db, *dc;
	const float one = 1.0f, zero = 0.0f;
	std::vector<double> t[4];
	static const char *name[4] = {"h2d_a", "h2d_b", "gemm_call", "d2h_c"};

	if (!a || !b || !c) {
		fprintf(stderr, "seed_bench: out of host memory at n = %zu\n", n);
		exit(1);
	}
	CK(cudaMalloc(&da, bytes));
	CK(cudaMalloc(&db, bytes));
	CK(cudaMalloc(&dc, bytes));
	for (int r = 0; r <= 50; r++) {
		double t0 = now_us(), t1, t2, t3, t4;

		CK(cudaMemcpy(da, a, bytes, cudaMemcpyHostToDevice));
		t1 = now_us();
		CK(cudaMemcpy(db, b, bytes, cudaMemcpyHostToDevice));
		t2 = now_us();
		CKL(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)n, (int)n, &one, da, (int)n, db, (int)n,
				&zero, dc, (int)n));
		t3 = now_us();
		CK(cudaMemcpy(c, dc, bytes, cudaMemcpyDeviceToHost));
		t4 = now_us();
		if (!r)
			continue;
		t[0].push_back(t1 - t0);
		t[1].push_back(t2 - t1);
		t[2].push_back(t3 - t2);
		t[3].push_back(t4 - t3);
	}
	for (int i = 0; i < 4; i++)
		printf("sgemm_split_%zu_%s_us\t%.1f\tus\n", n, name[i], median(t[i]));
	CK(cudaFree(da));
	CK(cudaFree(db));
	CK(cudaFree(dc));
	free(a);
	free(b);
	free(c);
}

static void fft_totals(void) {
	for (size_t n = 8; n <= 8192; n *= 4) {
		const size_t bytes = n * n * sizeof(cufftComplex);
		cufftComplex *x = (cufftComplex *)malloc(bytes), *y = (cufftComplex *)malloc(bytes), *dx;
		cufftHandle plan;
		int reps = n >= 2048 ? 5 : n >= 512 ? 20 : 200;
		std::vector<double> v;

		if (!x || !y) {
			fprintf(stderr, "seed_bench: out of host memory at n = %zu\n", n);
			exit(1);
		}
		for (size_t i = 0; i < n * n; i++) {
			x[i].x = (float)(i % 3);
			x[i].y = 0;
		}
		CK(cudaMalloc(&dx, bytes));
		CKL(cufftPlan2d(&plan, (int)n, (int)n, CUFFT_C2C));
		for (int r = 0; r <= reps; r++) {
			double t0 = now_us();
			CK(cudaMemcpy(dx, x, bytes, cudaMemcpyHostToDevice));
			CKL(cufftExecC2C(plan, dx, dx, CUFFT_FORWARD));
			CK(cudaMemcpy(y, dx, bytes, cudaMemcpyDeviceToHost));
			if (r)
				v.push_back(now_us() - t0);
		}
		// The DC term is the sum of the input.
		double want = 0;
		for (size_t i = 0; i < n * n; i++)
			want += x[i].x;
		if (y[0].x < want * 0.999 - 1e-2 || y[0].x > want * 1.001 + 1e-2) {
			fprintf(stderr, "seed_bench: fft n = %zu: Y[0] = %g, want %g\n", n, y[0].x, want);
			exit(1);
		}
		printf("fft2d_total_%zu_us\t%.1f\tus\n", n, median(v));
		CKL(cufftDestroy(plan));
		CK(cudaFree(dx));
		free(x);
		free(y);
	}
}

// seed_bench [sgemm] [fft] [split [N]]: the sections named, or the first two.
int main(int argc, char **argv) {
	bool sgemm = argc < 2, fft = argc < 2;
	size_t split = 0;
	cublasHandle_t h;

	for (int i = 1; i < argc; i++) {
		sgemm |= !strcmp(argv[i], "sgemm");
		fft |= !strcmp(argv[i], "fft");
		if (!strcmp(argv[i], "split"))
			split = i + 1 < argc && atoi(argv[i + 1]) > 0 ? (size_t)atoi(argv[++i]) : 1024;
	}
	CK(cudaFree(0));
	if (sgemm || split) {
		CKL(cublasCreate(&h));
		if (sgemm)
			sgemm_totals(h);
		if (split)
			sgemm_split(h, split);
		CKL(cublasDestroy(h));
	}
	if (fft)
		fft_totals();
	return 0;
}
