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

// One n's buffers: A, B and C on the host (written, or calloc'd and left
// zero) and on the device.
struct sgemm_bufs {
	size_t n, bytes;
	float *a, *b, *c, *da, *db, *dc;
};

static sgemm_bufs sgemm_make(size_t n, bool zeroed) {
	sgemm_bufs s = {n, n * n * sizeof(float), nullptr, nullptr, nullptr, nullptr, nullptr, nullptr};
	float **host[3] = {&s.a, &s.b, &s.c};

	for (float **p : host)
		*p = (float *)(zeroed ? calloc(n * n, sizeof(float)) : malloc(s.bytes));
	if (!s.a || !s.b || !s.c) {
		fprintf(stderr, "seed_bench: out of host memory at n = %zu\n", n);
		exit(1);
	}
	CK(cudaMalloc(&s.da, s.bytes));
	CK(cudaMalloc(&s.db, s.bytes));
	CK(cudaMalloc(&s.dc, s.bytes));
	return s;
}

static void sgemm_free(sgemm_bufs &s) {
	CK(cudaFree(s.da));
	CK(cudaFree(s.db));
	CK(cudaFree(s.dc));
	free(s.a);
	free(s.b);
	free(s.c);
}

// H2D A and B, the GEMM, D2H C, as a user times them: @ts[0] before, @ts[4]
// after, and with @each the return of every step in between.
static void sgemm_once(cublasHandle_t h, const sgemm_bufs &s, double ts[5], bool each) {
	const float one = 1.0f, zero = 0.0f;
	const int n = (int)s.n;

	ts[0] = now_us();
	CK(cudaMemcpy(s.da, s.a, s.bytes, cudaMemcpyHostToDevice));
	if (each)
		ts[1] = now_us();
	CK(cudaMemcpy(s.db, s.b, s.bytes, cudaMemcpyHostToDevice));
	if (each)
		ts[2] = now_us();
	CKL(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, s.da, n, s.db, n, &zero, s.dc, n));
	if (each)
		ts[3] = now_us();
	CK(cudaMemcpy(s.c, s.dc, s.bytes, cudaMemcpyDeviceToHost));
	ts[4] = now_us();
}

static void sgemm_totals(cublasHandle_t h) {
	for (size_t n : {1024, 2048, 4096, 8192, 16384}) {
		sgemm_bufs s = sgemm_make(n, false);
		int reps = n >= 16384 ? 3 : n >= 8192 ? 5 : 10;
		std::vector<double> v;
		double ts[5];

		for (size_t i = 0; i < n * n; i++) {
			s.a[i] = (float)(i % 7) * 0.25f;
			s.b[i] = (float)(i % 5) * 0.5f;
		}
		for (int r = 0; r <= reps; r++) {
			sgemm_once(h, s, ts, false);
			if (r)
				v.push_back(ts[4] - ts[0]);
		}
		// C[0][0] = sum over k of A[0][k] * B[k][0] (column-major): checked,
		// so that a wrong result cannot pass for a fast one.
		double want = 0;
		for (size_t k = 0; k < n; k++)
			want += (double)s.a[k * n] * (double)s.b[k];
		if (s.c[0] < want * 0.999 - 1e-3 || s.c[0] > want * 1.001 + 1e-3) {
			fprintf(stderr, "seed_bench: sgemm n = %zu: C[0] = %g, want %g\n", n, s.c[0], want);
			exit(1);
		}
		printf("sgemm_total_%zu_ms\t%.3f\tms\n", n, median(v) / 1e3);
		sgemm_free(s);
	}
}

// The sgemm total at one n cut into its steps (not run by default: `seed_bench
// split [N]`, N = 1024 unless given): each step's median time, as the program
// sees it return, to tell which of them a remoting layer makes slower.
static void sgemm_split(cublasHandle_t h, size_t n) {
	sgemm_bufs s = sgemm_make(n, true);
	std::vector<double> t[4];
	static const char *name[4] = {"h2d_a", "h2d_b", "gemm_call", "d2h_c"};
	double ts[5];

	for (int r = 0; r <= 50; r++) {
		sgemm_once(h, s, ts, true);
		for (int i = 0; r && i < 4; i++)
			t[i].push_back(ts[i + 1] - ts[i]);
	}
	for (int i = 0; i < 4; i++)
		printf("sgemm_split_%zu_%s_us\t%.1f\tus\n", n, name[i], median(t[i]));
	sgemm_free(s);
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
