// cuda_bench.cu - what vcuda's CUDA path is measured on, printed as
// "metric<TAB>value<TAB>unit" lines; ci/bench-gpu.sh runs it natively and
// through vcuda-server in the same run and prints the ratios.
#include <cstring>

#include "bench_common.h"

__global__ void empty() {}

// One training step's call pattern as a framework makes it (PyTorch: the
// caching allocator's capture checks, pointer and function attributes,
// launches, event hand-offs between streams, the loss read back).
static void step_pattern() {
	static cudaStream_t side;
	static cudaEvent_t ev;
	static float *dloss;
	float loss;
	if (!side) {
		CK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
		CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
		CK(cudaMalloc(&dloss, sizeof(float)));
	}
	for (int k = 0; k < 30; k++) {
		cudaStreamCaptureStatus st;
		cudaPointerAttributes pa;
		CK(cudaStreamIsCapturing(0, &st));
		CK(cudaPointerGetAttributes(&pa, dloss));
		empty<<<1, 32>>>();
		if (k % 10 == 0) {
			cudaFuncAttributes fa;
			unsigned long long id;
			CK(cudaFuncGetAttributes(&fa, empty));
			CK(cudaStreamGetCaptureInfo(0, &st, &id));
		}
	}
	CK(cudaEventRecord(ev, 0));
	CK(cudaStreamWaitEvent(side, ev, 0));
	empty<<<1, 32, 0, side>>>();
	CK(cudaEventRecord(ev, side));
	CK(cudaStreamWaitEvent(0, ev, 0));
	(void)cudaEventQuery(ev);
	CK(cudaMemcpyAsync(&loss, dloss, sizeof(loss), cudaMemcpyDeviceToHost, 0));
	CK(cudaStreamSynchronize(0));
	(void)cudaEventQuery(ev);
}

// Page-locked memory of 1 GiB, more than vcuda's pinned pool: the time to
// allocate and register it, and copies from and to it, synchronous and
// asynchronous (PyTorch's non_blocking copies), at pinned speed.
static void pinned_gib() {
	const size_t n = size_t(1) << 30;
	void *dev, *h;
	cudaStream_t s;
	CK(cudaMalloc(&dev, n));
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	double a = now_us();
	CK(cudaMallocHost(&h, n));
	printf("pinned_alloc_1GiB_us\t%.1f\tus\n", now_us() - a);
	memset(h, 1, n);
	for (int async = 0; async <= 1; async++) {
		std::vector<double> up, down;
		for (int r = 0; r < 4; r++) {
			double t0 = now_us();
			if (async) {
				CK(cudaMemcpyAsync(dev, h, n, cudaMemcpyHostToDevice, s));
				CK(cudaStreamSynchronize(s));
			} else {
				CK(cudaMemcpy(dev, h, n, cudaMemcpyHostToDevice));
			}
			double t1 = now_us();
			if (async) {
				CK(cudaMemcpyAsync(h, dev, n, cudaMemcpyDeviceToHost, s));
				CK(cudaStreamSynchronize(s));
			} else {
				CK(cudaMemcpy(h, dev, n, cudaMemcpyDeviceToHost));
			}
			double t2 = now_us();
			if (r) { // the first round warms up
				up.push_back(t1 - t0);
				down.push_back(t2 - t1);
			}
		}
		printf("h2d_pinned%s_1GiB_GBps\t%.2f\tGB/s\n", async ? "_async" : "", n / median(up) / 1e3);
		printf("d2h_pinned%s_1GiB_GBps\t%.2f\tGB/s\n", async ? "_async" : "", n / median(down) / 1e3);
	}
	a = now_us();
	CK(cudaFreeHost(h));
	printf("pinned_free_1GiB_us\t%.1f\tus\n", now_us() - a);
	// The program's own memory, registered: first right after the free
	// above (vcuda parks the freed segment and takes it for this), then a
	// second gigabyte while the first is held (vcuda makes new pages).
	h = malloc(n);
	memset(h, 2, n);
	a = now_us();
	CK(cudaHostRegister(h, n, cudaHostRegisterDefault));
	printf("host_register_1GiB_us\t%.1f\tus\n", now_us() - a);
	void *h2 = malloc(n);
	memset(h2, 3, n);
	a = now_us();
	CK(cudaHostRegister(h2, n, cudaHostRegisterDefault));
	printf("host_register_fresh_1GiB_us\t%.1f\tus\n", now_us() - a);
	CK(cudaHostUnregister(h2));
	free(h2);
	std::vector<double> up;
	for (int r = 0; r < 4; r++) {
		double t0 = now_us();
		CK(cudaMemcpyAsync(dev, h, n, cudaMemcpyHostToDevice, s));
		CK(cudaStreamSynchronize(s));
		if (r)
			up.push_back(now_us() - t0);
	}
	printf("h2d_registered_1GiB_GBps\t%.2f\tGB/s\n", n / median(up) / 1e3);
	CK(cudaHostUnregister(h));
	free(h);
	CK(cudaStreamDestroy(s));
	CK(cudaFree(dev));
}

// @n bytes from @h to @dev and back, @reps times after one copy up that
// warms up: "h2d_@what_GBps" and "d2h_@what_GBps", each the median.
static void copy_pair(void *dev, void *h, size_t n, int reps, const char *what) {
	std::vector<double> up, down;
	CK(cudaMemcpy(dev, h, n, cudaMemcpyHostToDevice));
	for (int r = 0; r < reps; r++) {
		double a = now_us();
		CK(cudaMemcpy(dev, h, n, cudaMemcpyHostToDevice));
		double b = now_us();
		CK(cudaMemcpy(h, dev, n, cudaMemcpyDeviceToHost));
		double c = now_us();
		up.push_back(b - a);
		down.push_back(c - b);
	}
	printf("h2d_%s_GBps\t%.2f\tGB/s\n", what, n / median(up) / 1e3);
	printf("d2h_%s_GBps\t%.2f\tGB/s\n", what, n / median(down) / 1e3);
}

// As copy_pair(), the way PyTorch copies to and from pageable memory:
// cudaMemcpyAsync on a stream of its own, then cudaStreamSynchronize.
// "h2d_@what_GBps" and "d2h_@what_GBps", each the median.
static void copy_pair_async(void *dev, void *h, size_t n, int reps, const char *what) {
	std::vector<double> up, down;
	cudaStream_t s;

	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaMemcpyAsync(dev, h, n, cudaMemcpyHostToDevice, s));
	CK(cudaStreamSynchronize(s));
	for (int r = 0; r < reps; r++) {
		double a = now_us();
		CK(cudaMemcpyAsync(dev, h, n, cudaMemcpyHostToDevice, s));
		CK(cudaStreamSynchronize(s));
		double b = now_us();
		CK(cudaMemcpyAsync(h, dev, n, cudaMemcpyDeviceToHost, s));
		CK(cudaStreamSynchronize(s));
		double c = now_us();
		up.push_back(b - a);
		down.push_back(c - b);
	}
	CK(cudaStreamDestroy(s));
	printf("h2d_%s_GBps\t%.2f\tGB/s\n", what, n / median(up) / 1e3);
	printf("d2h_%s_GBps\t%.2f\tGB/s\n", what, n / median(down) / 1e3);
}

// Pageable copies of 1 GiB, each way (the largest size the issue names).
static void pageable_gib() {
	const size_t n = size_t(1) << 30;
	void *dev, *h = malloc(n);

	if (!h) {
		fprintf(stderr, "cuda_bench: out of host memory\n");
		exit(1);
	}
	memset(h, 3, n);
	CK(cudaMalloc(&dev, n));
	copy_pair(dev, h, n, 3, "pageable_1024MiB");
	CK(cudaFree(dev));
	free(h);
}

// The sections named on the command line (launch, copies, pageable_gib,
// pinned_gib, and pageable_sweep, which only runs when named), or all of
// them.
static bool want(int argc, char **argv, const char *name, bool by_default = true) {
	if (argc < 2)
		return by_default;
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], name))
			return true;
	return false;
}

static void launches();
static void copies();
static void pageable_sweep();

int main(int argc, char **argv) {
	CK(cudaFree(0));
	for (int i = 0; i < 1000; i++) empty<<<1, 32>>>(); // warm-up
	CK(cudaDeviceSynchronize());
	if (want(argc, argv, "launch"))
		launches();
	if (want(argc, argv, "copies"))
		copies();
	if (want(argc, argv, "pageable_gib"))
		pageable_gib();
	if (want(argc, argv, "pinned_gib"))
		pinned_gib();
	if (want(argc, argv, "pageable_sweep", false))
		pageable_sweep();
	return 0;
}

// Launch and synchronisation latency, and a training step's call pattern.
static void launches() {

	// Asynchronous launch: enqueue rate (the host must not wait for replies).
	const int nl = 20000;
	double t0 = now_us();
	for (int i = 0; i < nl; i++) empty<<<1, 32>>>();
	double t1 = now_us();
	CK(cudaDeviceSynchronize());
	printf("launch_async_us\t%.3f\tus\n", (t1 - t0) / nl);

	// Launch throughput: the same launches with the wait for them to run,
	// what a loop of launches takes once the device (or vcuda's server)
	// has to keep up. The median of five blocks.
	std::vector<double> blk;
	for (int r = 0; r < 5; r++) {
		double a = now_us();
		for (int i = 0; i < nl; i++) empty<<<1, 32>>>();
		CK(cudaDeviceSynchronize());
		blk.push_back((now_us() - a) / nl);
	}
	printf("launch_throughput_us\t%.3f\tus\n", median(blk));

	std::vector<double> v;
	for (int i = 0; i < 2000; i++) {
		double a = now_us();
		empty<<<1, 32>>>();
		CK(cudaDeviceSynchronize());
		v.push_back(now_us() - a);
	}
	printf("launch_sync_us\t%.3f\tus\n", median(v));

	// Synchronisation with nothing pending (the second of two in a row).
	cudaStream_t s0 = 0;
	v.clear();
	for (int i = 0; i < 2000; i++) {
		double a = now_us();
		CK(cudaStreamSynchronize(s0));
		v.push_back(now_us() - a);
	}
	printf("stream_sync_empty_us\t%.3f\tus\n", median(v));
	v.clear();
	for (int i = 0; i < 2000; i++) {
		double a = now_us();
		CK(cudaDeviceSynchronize());
		v.push_back(now_us() - a);
	}
	printf("device_sync_empty_us\t%.3f\tus\n", median(v));
	v.clear();
	for (int i = 0; i < 2000; i++) {
		double a = now_us();
		empty<<<1, 32>>>();
		CK(cudaStreamSynchronize(s0));
		v.push_back(now_us() - a);
	}
	printf("launch_stream_sync_us\t%.3f\tus\n", median(v));
	v.clear();
	for (int i = 0; i < 200; i++) {
		double a = now_us();
		step_pattern();
		v.push_back(now_us() - a);
	}
	printf("step_pattern_us\t%.3f\tus\n", median(v));

	int *d4, h4 = 0;
	CK(cudaMalloc(&d4, 4));
	v.clear();
	for (int i = 0; i < 5000; i++) {
		double a = now_us();
		CK(cudaMemcpy(&h4, d4, 4, cudaMemcpyDeviceToHost));
		v.push_back(now_us() - a);
	}
	printf("memcpy4_dtoh_us\t%.3f\tus\n", median(v));
	CK(cudaFree(d4));
}

// Copies of 1, 4, 16 and 256 MiB, pinned and pageable, each way; and pageable
// ones as PyTorch makes them (copy_pair_async), but for 4 MiB.
static void copies() {

	const size_t maxn = size_t(256) << 20;
	void *dev, *pinned, *pageable = malloc(maxn);
	CK(cudaMalloc(&dev, maxn));
	CK(cudaMallocHost(&pinned, maxn));
	memset(pageable, 1, maxn);
	memset(pinned, 1, maxn);
	for (size_t mib : {1, 4, 16, 256}) {
		size_t n = mib << 20;
		int reps = mib >= 256 ? 3 : mib >= 16 ? 10 : 30;
		for (int pin = 1; pin >= 0; pin--) {
			char what[32];
			snprintf(what, sizeof(what), "%s_%zuMiB", pin ? "pinned" : "pageable", mib);
			copy_pair(dev, pin ? pinned : pageable, n, reps, what);
		}
		if (mib != 4) {
			char what[32];
			snprintf(what, sizeof(what), "pageable_async_%zuMiB", mib);
			copy_pair_async(dev, pageable, n, reps, what);
		}
	}
	CK(cudaFree(dev));
	CK(cudaFreeHost(pinned));
	free(pageable);
}

// Pageable copies from 256 KiB to 64 MiB, each way, the median of 30: where
// the guest library's thresholds (pieces, helper threads) sit.
static void pageable_sweep() {
	const size_t maxn = size_t(64) << 20;
	void *dev, *h = malloc(maxn);
	CK(cudaMalloc(&dev, maxn));
	memset(h, 1, maxn);
	for (size_t n = size_t(256) << 10; n <= maxn; n *= 2) {
		char what[32];
		snprintf(what, sizeof(what), "pageable_%zuKiB", n >> 10);
		copy_pair(dev, h, n, 30, what);
	}
	CK(cudaFree(dev));
	free(h);
}
