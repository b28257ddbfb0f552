/* SPDX-License-Identifier: MIT */
/*
 * nvrtc_cache.c - NVIDIA's NVRTC over the guest library: it must find the
 * driver's compile cache (export table da9151d3, exptab_nvvm.c), store what
 * NVVM and ptxas made, and take it back on the next compilation.
 *
 *   nvrtc_cache DIR     (run with LD_LIBRARY_PATH naming the guest library
 *                        and VCUDA_SOCKET a server; DIR an empty folder)
 *
 * 1. compile with CUDA_CACHE_DISABLE=1 (no cache: the reference PTX/CUBIN);
 * 2. compile with the cache in DIR: the same PTX and CUBIN, and two entries
 *    (NVVM's PTX and ptxas's ELF) in DIR/vcuda-nvrtc;
 * 3. mark the cached PTX (its first comment line rewritten, the file's hash
 *    mended) and compile again in a new process: the PTX NVRTC returns
 *    carries the mark, so it came from the cache and not from NVVM.
 * Each step runs in a child process, as the cache's settings are read once.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nvrtc.h>

static const char src[] =
	"#include <cuda_fp16.h>\n"
	"extern \"C\" __global__ void axpy(const __half *x, __half *y, float a, int n) {\n"
	"  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
	"  if (i < n) y[i] = __float2half(a * __half2float(x[i]) + __half2float(y[i]));\n"
	"}\n";

static const char mark[] = "// vcuda cache mark";

#define FAIL(...)                                                  \
	do {                                                       \
		fprintf(stderr, "nvrtc_cache: FAIL: " __VA_ARGS__); \
		fputc('\n', stderr);                               \
		exit(1);                                           \
	} while (0)

/* Compile src; write the PTX and CUBIN to PREFIX.ptx / PREFIX.cubin. */
static void compile(const char *prefix)
{
	const char *opts[] = {"--gpu-architecture=sm_90", "-I" CUDA_INC};
	nvrtcProgram p;
	size_t n;
	char *buf, path[512];
	FILE *f;
	nvrtcResult r;

	if (nvrtcCreateProgram(&p, src, "axpy.cu", 0, NULL, NULL) != NVRTC_SUCCESS)
		FAIL("nvrtcCreateProgram");
	r = nvrtcCompileProgram(p, 2, opts);
	if (r != NVRTC_SUCCESS) {
		nvrtcGetProgramLogSize(p, &n);
		buf = malloc(n + 1);
		nvrtcGetProgramLog(p, buf);
		FAIL("compile: %s: %s", nvrtcGetErrorString(r), buf);
	}
	for (int k = 0; k < 2; k++) {
		if ((k ? nvrtcGetCUBINSize(p, &n) : nvrtcGetPTXSize(p, &n)) != NVRTC_SUCCESS)
			FAIL("size");
		buf = malloc(n);
		if (!buf || (k ? nvrtcGetCUBIN(p, buf) : nvrtcGetPTX(p, buf)) != NVRTC_SUCCESS)
			FAIL("get");
		snprintf(path, sizeof(path), "%s.%s", prefix, k ? "cubin" : "ptx");
		f = fopen(path, "wb");
		if (!f || fwrite(buf, 1, n, f) != n || fclose(f))
			FAIL("write %s", path);
		free(buf);
	}
	nvrtcDestroyProgram(&p);
}

static void in_child(const char *prefix, const char *cache_dir, int disable)
{
	pid_t pid;
	int st;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		setenv("CUDA_CACHE_PATH", cache_dir, 1);
		if (disable)
			setenv("CUDA_CACHE_DISABLE", "1", 1);
		else
			unsetenv("CUDA_CACHE_DISABLE");
		compile(prefix);
		exit(0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		FAIL("compiling %s", prefix);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *b;
	long n;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET))
		FAIL("read %s", path);
	b = malloc((size_t)n + 1);
	if (!b || fread(b, 1, (size_t)n, f) != (size_t)n)
		FAIL("read %s", path);
	fclose(f);
	b[n] = 0;
	*len = (size_t)n;
	return b;
}

static void same(const char *a, const char *b)
{
	size_t la, lb;
	char *x = slurp(a, &la), *y = slurp(b, &lb);

	if (la != lb || memcmp(x, y, la))
		FAIL("%s and %s differ (%zu and %zu bytes)", a, b, la, lb);
	free(x);
	free(y);
}

/* jitcache.c's file: magic[8], key_len, data_len, data_hash (FNV-1a 64), key, data. */
static int mark_ptx_entry(const char *dir)
{
	char path[1024];
	DIR *d = opendir(dir);
	struct dirent *e;
	int found = 0, entries = 0;

	if (!d)
		FAIL("no folder %s", dir);
	while ((e = readdir(d))) {
		size_t n;
		char *b;
		uint64_t hdr[4], h = 1469598103934665603ull;

		if (!strstr(e->d_name, ".vcjc"))
			continue;
		entries++;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		b = slurp(path, &n);
		memcpy(hdr, b, sizeof(hdr));
		if (n != sizeof(hdr) + hdr[1] + hdr[2])
			FAIL("%s: %zu bytes, header says %llu", path, n, (unsigned long long)(32 + hdr[1] + hdr[2]));
		char *data = b + sizeof(hdr) + hdr[1];
		if (hdr[2] > sizeof(mark) && !memcmp(data, "//", 2)) {
			memcpy(data, mark, sizeof(mark) - 1); /* over the first comment */
			for (uint64_t i = 0; i < hdr[2]; i++)
				h = (h ^ (unsigned char)data[i]) * 1099511628211ull;
			hdr[3] = h;
			memcpy(b, hdr, sizeof(hdr));
			FILE *f = fopen(path, "wb");
			if (!f || fwrite(b, 1, n, f) != n || fclose(f))
				FAIL("rewrite %s", path);
			found++;
		}
		free(b);
	}
	closedir(d);
	if (entries != 2)
		FAIL("%d entries in %s, expected 2 (PTX and ELF)", entries, dir);
	return found;
}

int main(int argc, char **argv)
{
	char p[512], q[512], sub[512];
	size_t n;
	char *ptx;

	if (argc != 2)
		FAIL("usage: nvrtc_cache DIR");
	snprintf(p, sizeof(p), "%s/ref", argv[1]);
	in_child(p, argv[1], 1);
	snprintf(sub, sizeof(sub), "%s/vcuda-nvrtc", argv[1]);
	if (!access(sub, F_OK))
		FAIL("CUDA_CACHE_DISABLE=1, yet %s exists", sub);
	printf("nvrtc_cache: reference compiled with CUDA_CACHE_DISABLE=1\n");

	snprintf(q, sizeof(q), "%s/cached", argv[1]);
	in_child(q, argv[1], 0);
	snprintf(p, sizeof(p), "%s/ref.ptx", argv[1]);
	snprintf(q, sizeof(q), "%s/cached.ptx", argv[1]);
	same(p, q);
	snprintf(p, sizeof(p), "%s/ref.cubin", argv[1]);
	snprintf(q, sizeof(q), "%s/cached.cubin", argv[1]);
	same(p, q);
	if (mark_ptx_entry(sub) != 1)
		FAIL("no PTX entry in %s", sub);
	printf("nvrtc_cache: first compilation stored NVVM's PTX and ptxas's ELF, output as without the cache\n");

	snprintf(q, sizeof(q), "%s/again", argv[1]);
	in_child(q, argv[1], 0);
	snprintf(q, sizeof(q), "%s/again.ptx", argv[1]);
	ptx = slurp(q, &n);
	if (strncmp(ptx, mark, sizeof(mark) - 1))
		FAIL("the second compilation's PTX did not come from the cache: %.60s", ptx);
	snprintf(p, sizeof(p), "%s/ref.cubin", argv[1]);
	snprintf(q, sizeof(q), "%s/again.cubin", argv[1]);
	same(p, q);
	printf("PASS nvrtc_cache: a new process took the PTX from the guest's cache\n");
	return 0;
}
