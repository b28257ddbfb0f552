/* SPDX-License-Identifier: MIT */
/*
 * test_arrays.c - CUDA arrays, mipmapped arrays, texture and surface objects
 * and every copy with an array or a 3D box, through a running vcuda-server
 * (Check; each test forks). With the CI stand-in behind the server arrays
 * live in host RAM and every copy moves real bytes, so the data is checked;
 * on a GPU the same tests run against the real driver.
 */
#define _DEFAULT_SOURCE
#include <check.h>
#include <cuda.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_fixture.h"

static CUarray array2d(size_t w, size_t h, CUarray_format f, unsigned ch, unsigned flags)
{
	CUDA_ARRAY3D_DESCRIPTOR d = {.Width = w, .Height = h, .Format = f, .NumChannels = ch, .Flags = flags};
	CUarray a;

	CK(cuArray3DCreate(&a, &d));
	return a;
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 131 + seed + (i >> 8));
}

START_TEST(create_describe_destroy)
{
	CUDA_ARRAY_DESCRIPTOR d2 = {.Width = 100, .Height = 50, .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 2}, g2;
	CUDA_ARRAY3D_DESCRIPTOR d3 = {.Width = 16, .Height = 8, .Depth = 4, .Format = CU_AD_FORMAT_UNSIGNED_INT8,
				      .NumChannels = 4, .Flags = CUDA_ARRAY3D_SURFACE_LDST}, g3;
	CUDA_ARRAY3D_DESCRIPTOR dl = {.Width = 32, .Height = 32, .Depth = 3, .Format = CU_AD_FORMAT_HALF,
				      .NumChannels = 1, .Flags = CUDA_ARRAY3D_LAYERED};
	CUarray a, b, c, one;

	CK(cuArrayCreate(&a, &d2));
	CK(cuArrayGetDescriptor(&g2, a));
	ck_assert_uint_eq(g2.Width, 100);
	ck_assert_uint_eq(g2.Height, 50);
	ck_assert_int_eq(g2.Format, CU_AD_FORMAT_FLOAT);
	ck_assert_uint_eq(g2.NumChannels, 2);
	CK(cuArray3DGetDescriptor(&g3, a));
	ck_assert_uint_eq(g3.Depth, 0);
	CK(cuArray3DCreate(&b, &d3));
	CK(cuArray3DGetDescriptor(&g3, b));
	ck_assert_uint_eq(g3.Width, 16);
	ck_assert_uint_eq(g3.Height, 8);
	ck_assert_uint_eq(g3.Depth, 4);
	ck_assert_uint_eq(g3.NumChannels, 4);
	ck_assert(g3.Flags & CUDA_ARRAY3D_SURFACE_LDST);
	CK(cuArray3DCreate(&c, &dl));
	CK(cuArray3DGetDescriptor(&g3, c));
	ck_assert(g3.Flags & CUDA_ARRAY3D_LAYERED);
	ck_assert_uint_eq(g3.Depth, 3);
	d2.Height = 0; /* a 1D array */
	CK(cuArrayCreate(&one, &d2));
	CK(cuArrayGetDescriptor(&g2, one));
	ck_assert_uint_eq(g2.Height, 0);
	/* bad arguments */
	ck_assert_int_eq(cuArrayCreate(NULL, &d2), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuArrayCreate(&a, NULL), CUDA_ERROR_INVALID_VALUE);
	d2.Width = 0;
	ck_assert_int_eq(cuArrayCreate(&b, &d2), CUDA_ERROR_INVALID_VALUE);
	CK(cuArrayDestroy(a));
	CK(cuArrayDestroy(b));
	CK(cuArrayDestroy(c));
	CK(cuArrayDestroy(one));
	/* a destroyed array is no array: never a dangling pointer */
	ck_assert_int_eq(cuArrayGetDescriptor(&g2, a), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(cuArrayDestroy(a), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(cuArrayDestroy((CUarray)(uintptr_t)0x1234), CUDA_ERROR_INVALID_HANDLE);
}
END_TEST

START_TEST(copies_2d_every_direction)
{
	enum { W = 70, H = 33, E = 4, HP = 300 }; /* float elements; host pitch > row */
	uint8_t *src = malloc(HP * H), *dst = calloc(HP, H), *back = calloc(W * E, H);
	CUarray a = array2d(W, H, CU_AD_FORMAT_FLOAT, 1, 0), b = array2d(W, H, CU_AD_FORMAT_FLOAT, 1, 0);
	CUDA_MEMCPY2D c;
	CUdeviceptr d;
	size_t pitch;

	fill(src, HP * H, 1);
	/* host -> array, pitched host rows */
	memset(&c, 0, sizeof(c));
	c.srcMemoryType = CU_MEMORYTYPE_HOST;
	c.srcHost = src;
	c.srcPitch = HP;
	c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
	c.dstArray = a;
	c.WidthInBytes = W * E;
	c.Height = H;
	CK(cuMemcpy2D(&c));
	/* array -> array */
	memset(&c, 0, sizeof(c));
	c.srcMemoryType = CU_MEMORYTYPE_ARRAY;
	c.srcArray = a;
	c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
	c.dstArray = b;
	c.WidthInBytes = W * E;
	c.Height = H;
	CK(cuMemcpy2D(&c));
	/* array -> device (pitched) */
	CK(cuMemAllocPitch(&d, &pitch, W * E, H, 4));
	memset(&c, 0, sizeof(c));
	c.srcMemoryType = CU_MEMORYTYPE_ARRAY;
	c.srcArray = b;
	c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
	c.dstDevice = d;
	c.dstPitch = pitch;
	c.WidthInBytes = W * E;
	c.Height = H;
	CK(cuMemcpy2DUnaligned(&c));
	/* device -> array, then array -> host at an offset, asynchronously */
	memset(&c, 0, sizeof(c));
	c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
	c.srcDevice = d;
	c.srcPitch = pitch;
	c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
	c.dstArray = a;
	c.WidthInBytes = W * E;
	c.Height = H;
	CK(cuMemcpy2DAsync(&c, NULL));
	memset(&c, 0, sizeof(c));
	c.srcMemoryType = CU_MEMORYTYPE_ARRAY;
	c.srcArray = a;
	c.srcXInBytes = 2 * E;
	c.srcY = 3;
	c.dstMemoryType = CU_MEMORYTYPE_HOST;
	c.dstHost = dst;
	c.dstPitch = HP;
	c.WidthInBytes = (W - 2) * E;
	c.Height = H - 3;
	CK(cuMemcpy2DAsync(&c, NULL));
	CK(cuCtxSynchronize());
	for (int y = 0; y < H - 3; y++)
		ck_assert_mem_eq(dst + y * HP, src + (y + 3) * HP + 2 * E, (W - 2) * E);
	/* unified addresses resolve to host or device */
	memset(&c, 0, sizeof(c));
	c.srcMemoryType = CU_MEMORYTYPE_ARRAY;
	c.srcArray = b;
	c.dstMemoryType = CU_MEMORYTYPE_UNIFIED;
	c.dstDevice = (CUdeviceptr)(uintptr_t)back;
	c.dstPitch = W * E;
	c.WidthInBytes = W * E;
	c.Height = H;
	CK(cuMemcpy2D(&c));
	for (int y = 0; y < H; y++)
		ck_assert_mem_eq(back + y * W * E, src + y * HP, W * E);
	/* a box beyond the array, and a destroyed array */
	c.Height = H + 1;
	ck_assert_int_ne(cuMemcpy2D(&c), CUDA_SUCCESS);
	CK(cuArrayDestroy(b));
	c.Height = H;
	ck_assert_int_eq(cuMemcpy2D(&c), CUDA_ERROR_INVALID_VALUE);
	CK(cuArrayDestroy(a));
	CK(cuMemFree(d));
	free(src);
	free(dst);
	free(back);
}
END_TEST

START_TEST(copies_1d_forms)
{
	enum { N = 6000 };
	CUDA_ARRAY_DESCRIPTOR dd = {.Width = N, .Format = CU_AD_FORMAT_UNSIGNED_INT8, .NumChannels = 1};
	uint8_t *src = malloc(N), *dst = calloc(1, N);
	CUarray a, b;
	CUdeviceptr d;
	CUstream s;

	fill(src, N, 7);
	CK(cuArrayCreate(&a, &dd));
	CK(cuArrayCreate(&b, &dd));
	CK(cuMemAlloc(&d, N));
	CK(cuStreamCreate(&s, 0));
	CK(cuMemcpyHtoA(a, 0, src, N));
	CK(cuMemcpyAtoA(b, 100, a, 0, N - 100));
	CK(cuMemcpyAtoD(d, b, 0, N));
	CK(cuMemcpyDtoA(a, 0, d, N));
	CK(cuMemcpyAtoH(dst, a, 100, N - 100));
	ck_assert_mem_eq(dst, src, N - 100);
	memset(dst, 0, N);
	CK(cuMemcpyHtoAAsync(b, 0, src, N, s));
	CK(cuMemcpyAtoHAsync(dst, b, 0, N, s));
	CK(cuStreamSynchronize(s));
	ck_assert_mem_eq(dst, src, N);
	/* past the end of the array */
	ck_assert_int_ne(cuMemcpyHtoA(a, 1, src, N), CUDA_SUCCESS);
	/* peer copies on the one device are copies */
	CK(cuMemcpyPeer(d, g_ctx, d, g_ctx, 0));
	CK(cuStreamDestroy(s));
	CK(cuArrayDestroy(a));
	CK(cuArrayDestroy(b));
	CK(cuMemFree(d));
	free(src);
	free(dst);
}
END_TEST

/* A 3D box between host memory, device memory and a 3D array, large enough
 * (and with a row that no arena piece divides) to cross many pieces. */
START_TEST(copies_3d)
{
	enum { W = 131, H = 37, D = 45, E = 4 }; /* elements of a 1-channel float array */
	size_t bytes = (size_t)W * E * H * D, hp = W * E + 12, hh = H + 3;
	CUDA_ARRAY3D_DESCRIPTOR ad = {.Width = W, .Height = H, .Depth = D, .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 1};
	uint8_t *src = malloc(hp * hh * D), *dst = calloc(1, bytes), *pin;
	CUDA_MEMCPY3D c;
	CUdeviceptr dv;
	CUarray a;
	CUstream s;

	fill(src, hp * hh * D, 3);
	CK(cuArray3DCreate(&a, &ad));
	CK(cuStreamCreate(&s, 0));
	/* pitched host -> array */
	memset(&c, 0, sizeof(c));
	c.srcMemoryType = CU_MEMORYTYPE_HOST;
	c.srcHost = src;
	c.srcPitch = hp;
	c.srcHeight = hh;
	c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
	c.dstArray = a;
	c.WidthInBytes = W * E;
	c.Height = H;
	c.Depth = D;
	CK(cuMemcpy3D(&c));
	/* array -> dense device memory, asynchronously */
	CK(cuMemAlloc(&dv, bytes));
	memset(&c, 0, sizeof(c));
	c.srcMemoryType = CU_MEMORYTYPE_ARRAY;
	c.srcArray = a;
	c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
	c.dstDevice = dv;
	c.dstPitch = W * E;
	c.dstHeight = H;
	c.WidthInBytes = W * E;
	c.Height = H;
	c.Depth = D;
	CK(cuMemcpy3DAsync(&c, s));
	CK(cuStreamSynchronize(s));
	CK(cuMemcpyDtoH(dst, dv, bytes));
	for (int z = 0; z < D; z++)
		for (int y = 0; y < H; y++)
			ck_assert_mem_eq(dst + ((size_t)z * H + y) * W * E, src + ((size_t)z * hh + y) * hp, W * E);
	/* a sub-box of the array -> page-locked host memory, DMA */
	CK(cuMemHostAlloc((void **)&pin, bytes, 0));
	memset(pin, 0, bytes);
	memset(&c, 0, sizeof(c));
	c.srcMemoryType = CU_MEMORYTYPE_ARRAY;
	c.srcArray = a;
	c.srcXInBytes = 5 * E;
	c.srcY = 2;
	c.srcZ = 7;
	c.dstMemoryType = CU_MEMORYTYPE_HOST;
	c.dstHost = pin;
	c.dstPitch = W * E;
	c.dstHeight = H;
	c.WidthInBytes = (W - 5) * E;
	c.Height = H - 2;
	c.Depth = D - 7;
	CK(cuMemcpy3DAsync(&c, s));
	CK(cuStreamSynchronize(s));
	for (int z = 0; z < D - 7; z++)
		for (int y = 0; y < H - 2; y++)
			ck_assert_mem_eq(pin + ((size_t)z * H + y) * W * E, src + ((size_t)(z + 7) * hh + y + 2) * hp + 5 * E,
					 (W - 5) * E);
	/* device -> pageable host, 3D, through the arena */
	memset(dst, 0, bytes);
	memset(&c, 0, sizeof(c));
	c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
	c.srcDevice = dv;
	c.srcPitch = W * E;
	c.srcHeight = H;
	c.srcZ = 1;
	c.dstMemoryType = CU_MEMORYTYPE_HOST;
	c.dstHost = dst;
	c.dstPitch = W * E;
	c.dstHeight = H;
	c.WidthInBytes = W * E;
	c.Height = H;
	c.Depth = D - 1;
	CK(cuMemcpy3D(&c));
	for (int z = 0; z < D - 1; z++)
		ck_assert_mem_eq(dst + (size_t)z * H * W * E, src + (size_t)(z + 1) * hh * hp, W * E);
	/* a device box reaching past its allocation is refused */
	c.Depth = D;
	ck_assert_int_eq(cuMemcpy3D(&c), CUDA_ERROR_INVALID_VALUE);
	/* pitches that cannot hold the box */
	c.Depth = 2;
	c.dstPitch = W * E - 1;
	ck_assert_int_eq(cuMemcpy3D(&c), CUDA_ERROR_INVALID_VALUE);
	CK(cuMemFreeHost(pin));
	CK(cuMemFree(dv));
	CK(cuArrayDestroy(a));
	CK(cuStreamDestroy(s));
	free(src);
	free(dst);
}
END_TEST

START_TEST(texture_and_surface_objects)
{
	CUarray a = array2d(64, 32, CU_AD_FORMAT_FLOAT, 1, 0), sa = array2d(64, 32, CU_AD_FORMAT_FLOAT, 1, CUDA_ARRAY3D_SURFACE_LDST);
	CUDA_ARRAY3D_DESCRIPTOR md = {.Width = 64, .Height = 64, .Format = CU_AD_FORMAT_UNSIGNED_INT8, .NumChannels = 4};
	CUDA_RESOURCE_DESC r, g;
	CUDA_TEXTURE_DESC t, gt;
	CUDA_RESOURCE_VIEW_DESC v, gv;
	CUtexObject to[4];
	CUsurfObject so, so2;
	CUmipmappedArray m;
	CUdeviceptr d;
	size_t pitch;

	CK(cuMipmappedArrayCreate(&m, &md, 3));
	CK(cuMemAllocPitch(&d, &pitch, 64 * 4, 32, 4));
	memset(&t, 0, sizeof(t));
	t.addressMode[0] = t.addressMode[1] = CU_TR_ADDRESS_MODE_CLAMP;
	t.filterMode = CU_TR_FILTER_MODE_LINEAR;
	t.flags = CU_TRSF_NORMALIZED_COORDINATES;
	/* array */
	memset(&r, 0, sizeof(r));
	r.resType = CU_RESOURCE_TYPE_ARRAY;
	r.res.array.hArray = a;
	CK(cuTexObjectCreate(&to[0], &r, &t, NULL));
	CK(cuTexObjectGetResourceDesc(&g, to[0]));
	ck_assert_int_eq(g.resType, CU_RESOURCE_TYPE_ARRAY);
	ck_assert_ptr_eq(g.res.array.hArray, a);
	CK(cuTexObjectGetTextureDesc(&gt, to[0]));
	ck_assert_int_eq(gt.filterMode, CU_TR_FILTER_MODE_LINEAR);
	ck_assert_int_eq(gt.addressMode[1], CU_TR_ADDRESS_MODE_CLAMP);
	/* mipmapped array, with a view */
	memset(&r, 0, sizeof(r));
	r.resType = CU_RESOURCE_TYPE_MIPMAPPED_ARRAY;
	r.res.mipmap.hMipmappedArray = m;
	memset(&v, 0, sizeof(v));
	v.format = CU_RES_VIEW_FORMAT_UINT_4X8;
	v.width = 64;
	v.height = 64;
	v.lastMipmapLevel = 2;
	t.flags = CU_TRSF_READ_AS_INTEGER;
	t.filterMode = CU_TR_FILTER_MODE_POINT;
	t.maxMipmapLevelClamp = 2;
	CK(cuTexObjectCreate(&to[1], &r, &t, &v));
	CK(cuTexObjectGetResourceDesc(&g, to[1]));
	ck_assert_int_eq(g.resType, CU_RESOURCE_TYPE_MIPMAPPED_ARRAY);
	ck_assert_ptr_eq(g.res.mipmap.hMipmappedArray, m);
	CK(cuTexObjectGetResourceViewDesc(&gv, to[1]));
	ck_assert_uint_eq(gv.lastMipmapLevel, 2);
	/* linear and pitch2D over device memory of ours */
	memset(&r, 0, sizeof(r));
	r.resType = CU_RESOURCE_TYPE_LINEAR;
	r.res.linear.devPtr = d;
	r.res.linear.format = CU_AD_FORMAT_FLOAT;
	r.res.linear.numChannels = 1;
	r.res.linear.sizeInBytes = 1024;
	t.flags = 0;
	t.maxMipmapLevelClamp = 0;
	CK(cuTexObjectCreate(&to[2], &r, &t, NULL));
	CK(cuTexObjectGetResourceDesc(&g, to[2]));
	ck_assert_uint_eq(g.res.linear.devPtr, d);
	ck_assert_uint_eq(g.res.linear.sizeInBytes, 1024);
	memset(&r, 0, sizeof(r));
	r.resType = CU_RESOURCE_TYPE_PITCH2D;
	r.res.pitch2D.devPtr = d;
	r.res.pitch2D.format = CU_AD_FORMAT_FLOAT;
	r.res.pitch2D.numChannels = 1;
	r.res.pitch2D.width = 64;
	r.res.pitch2D.height = 32;
	r.res.pitch2D.pitchInBytes = pitch;
	CK(cuTexObjectCreate(&to[3], &r, &t, NULL));
	CK(cuTexObjectGetResourceDesc(&g, to[3]));
	ck_assert_uint_eq(g.res.pitch2D.height, 32);
	/* ranges outside the session's memory never reach the driver */
	r.res.pitch2D.height = 1u << 20;
	ck_assert_int_eq(cuTexObjectCreate(&to[3], &r, &t, NULL), CUDA_ERROR_INVALID_VALUE);
	r.res.pitch2D.height = 32;
	r.res.pitch2D.devPtr = 0x1000;
	ck_assert_int_eq(cuTexObjectCreate(&to[3], &r, &t, NULL), CUDA_ERROR_INVALID_VALUE);
	/* a surface on an array made for it */
	memset(&r, 0, sizeof(r));
	r.resType = CU_RESOURCE_TYPE_ARRAY;
	r.res.array.hArray = sa;
	CK(cuSurfObjectCreate(&so, &r));
	CK(cuSurfObjectGetResourceDesc(&g, so));
	ck_assert_ptr_eq(g.res.array.hArray, sa);
	r.res.array.hArray = a; /* not made for surfaces: the driver (580) makes it all the same */
	CK(cuSurfObjectCreate(&so2, &r));
	CK(cuSurfObjectDestroy(so2));
	/* forged values: not this session's, never the driver's to see */
	ck_assert_int_eq(cuTexObjectDestroy(0xdeadbeefull), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuSurfObjectDestroy(to[0] + 1000), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuTexObjectGetResourceDesc(&g, 0x7777), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuSurfObjectGetResourceDesc(&g, to[0] + 1000), CUDA_ERROR_INVALID_VALUE);
	for (int i = 0; i < 4; i++)
		CK(cuTexObjectDestroy(to[i]));
	ck_assert_int_eq(cuTexObjectDestroy(to[0]), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuTexObjectGetTextureDesc(&gt, to[1]), CUDA_ERROR_INVALID_VALUE);
	CK(cuSurfObjectDestroy(so));
	/* a destroyed array cannot be a resource */
	CK(cuArrayDestroy(a));
	memset(&r, 0, sizeof(r));
	r.resType = CU_RESOURCE_TYPE_ARRAY;
	r.res.array.hArray = a;
	ck_assert_int_eq(cuTexObjectCreate(&to[0], &r, &t, NULL), CUDA_ERROR_INVALID_VALUE);
	/* objects left behind go with the session (teardown) */
	r.res.array.hArray = sa;
	CK(cuTexObjectCreate(&to[0], &r, &t, NULL));
	CK(cuMipmappedArrayDestroy(m));
	CK(cuMemFree(d));
}
END_TEST

START_TEST(mipmap_levels)
{
	CUDA_ARRAY3D_DESCRIPTOR md = {.Width = 40, .Height = 20, .Format = CU_AD_FORMAT_UNSIGNED_INT8, .NumChannels = 1}, g;
	uint8_t src[20 * 10], dst[20 * 10];
	CUmipmappedArray m, m2;
	CUarray l0, l1, l1b;
	CUDA_MEMCPY2D c;

	CK(cuMipmappedArrayCreate(&m, &md, 3));
	CK(cuMipmappedArrayGetLevel(&l0, m, 0));
	CK(cuMipmappedArrayGetLevel(&l1, m, 1));
	CK(cuMipmappedArrayGetLevel(&l1b, m, 1));
	ck_assert_ptr_eq(l1, l1b);
	ck_assert_ptr_ne(l0, l1);
	ck_assert_int_eq(cuMipmappedArrayGetLevel(&l1b, m, 7), CUDA_ERROR_INVALID_VALUE);
	CK(cuArray3DGetDescriptor(&g, l1));
	ck_assert_uint_eq(g.Width, 20);
	ck_assert_uint_eq(g.Height, 10);
	fill(src, sizeof(src), 9);
	CK(cuMemcpyHtoA(l1, 0, src, 20));
	memset(&c, 0, sizeof(c));
	c.srcMemoryType = CU_MEMORYTYPE_HOST;
	c.srcHost = src;
	c.srcPitch = 20;
	c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
	c.dstArray = l1;
	c.WidthInBytes = 20;
	c.Height = 10;
	CK(cuMemcpy2D(&c));
	memset(&c, 0, sizeof(c));
	c.srcMemoryType = CU_MEMORYTYPE_ARRAY;
	c.srcArray = l1;
	c.dstMemoryType = CU_MEMORYTYPE_HOST;
	c.dstHost = dst;
	c.dstPitch = 20;
	c.WidthInBytes = 20;
	c.Height = 10;
	CK(cuMemcpy2D(&c));
	ck_assert_mem_eq(dst, src, sizeof(src));
	/* a level is its mipmapped array's: not destroyed alone, gone with it */
	ck_assert_int_eq(cuArrayDestroy(l1), CUDA_ERROR_INVALID_VALUE);
	/* more levels than the size allows: the driver (580) clamps them */
	CK(cuMipmappedArrayCreate(&m2, &md, 9));
	CK(cuMipmappedArrayDestroy(m2));
	CK(cuMipmappedArrayDestroy(m));
	ck_assert_int_eq(cuArray3DGetDescriptor(&g, l1), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(cuMipmappedArrayGetLevel(&l1, m, 0), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(cuMipmappedArrayDestroy(m), CUDA_ERROR_INVALID_HANDLE);
}
END_TEST

START_TEST(batches)
{
	enum { N = 3000 };
	uint8_t *h = malloc(N), *back = calloc(1, N);
	CUdeviceptr d1, d2, dsts[2], srcs[2];
	size_t sizes[2] = {N, N}, idx[1] = {0}, fail = 0;
	CUmemcpyAttributes at;
	CUDA_MEMCPY3D_BATCH_OP op;
	CUarray a = array2d(50, 60, CU_AD_FORMAT_UNSIGNED_INT8, 1, 0);
	CUstream s;

	fill(h, N, 5);
	CK(cuStreamCreate(&s, 0));
	CK(cuMemAlloc(&d1, N));
	CK(cuMemAlloc(&d2, N));
	memset(&at, 0, sizeof(at));
	at.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
	dsts[0] = d1;
	srcs[0] = (CUdeviceptr)(uintptr_t)h;
	CK(cuMemcpyBatchAsync(dsts, srcs, sizes, 1, &at, idx, 1, s));
	dsts[0] = d2;
	srcs[0] = d1;
	dsts[1] = (CUdeviceptr)(uintptr_t)back;
	srcs[1] = d1;
	at.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL;
	CK(cuMemcpyBatchAsync(dsts, srcs, sizes, 2, &at, idx, 1, s));
	ck_assert_mem_eq(back, h, N);
	/* attributes are checked, and the legacy stream refused */
	at.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_INVALID;
	ck_assert_int_eq(cuMemcpyBatchAsync(dsts, srcs, sizes, 2, &at, idx, 1, s), CUDA_ERROR_INVALID_VALUE);
	at.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
	ck_assert_int_eq(cuMemcpyBatchAsync(dsts, srcs, sizes, 0, &at, idx, 1, s), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuMemcpyBatchAsync(dsts, srcs, sizes, 2, &at, idx, 1, NULL), CUDA_ERROR_INVALID_VALUE);
	idx[0] = 1;
	ck_assert_int_eq(cuMemcpyBatchAsync(dsts, srcs, sizes, 2, &at, idx, 1, s), CUDA_ERROR_INVALID_VALUE);
	/* a 3D batch: device memory into an array, elements of the array's size */
	memset(&op, 0, sizeof(op));
	op.src.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
	op.src.op.ptr.ptr = d2;
	op.src.op.ptr.rowLength = 50;
	op.dst.type = CU_MEMCPY_OPERAND_TYPE_ARRAY;
	op.dst.op.array.array = a;
	op.extent.width = 50;
	op.extent.height = 60;
	op.extent.depth = 1;
	op.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
	CK(cuMemcpy3DBatchAsync(1, &op, 0, s));
	CK(cuStreamSynchronize(s));
	memset(back, 0, N);
	CK(cuMemcpyAtoH(back, a, 0, 50));
	ck_assert_mem_eq(back, h, 50);
	op.extent.depth = 0;
	ck_assert_int_eq(cuMemcpy3DBatchAsync(1, &op, 0, s), CUDA_ERROR_INVALID_VALUE);
	(void)fail;
	CK(cuArrayDestroy(a));
	CK(cuMemFree(d1));
	CK(cuMemFree(d2));
	CK(cuStreamDestroy(s));
	free(h);
	free(back);
}
END_TEST

/* Arrays live in their context: destroying it takes them and their ids. */
START_TEST(arrays_go_with_their_context)
{
	CUDA_ARRAY_DESCRIPTOR d = {.Width = 8, .Height = 8, .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 1}, g;
	CUcontext c;
	CUarray a;

	CK(cuCtxCreate(&c, NULL, 0, 0));
	CK(cuArrayCreate(&a, &d));
	CK(cuCtxDestroy(c));
	CK(cuCtxSetCurrent(g_ctx));
	ck_assert_int_eq(cuArrayGetDescriptor(&g, a), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(cuArrayDestroy(a), CUDA_ERROR_INVALID_HANDLE);
}
END_TEST

/* ---- first-version names (the driver still exports them; CUDA 13 headers
 * #define the plain names to _v2, so they are declared here by symbol) ---- */

typedef unsigned int devptr_v1;
typedef struct {
	unsigned int Width, Height;
	CUarray_format Format;
	unsigned int NumChannels;
} desc_v1;
typedef struct {
	unsigned int Width, Height, Depth;
	CUarray_format Format;
	unsigned int NumChannels, Flags;
} desc3d_v1;
typedef struct {
	unsigned int srcXInBytes, srcY, srcZ, srcLOD;
	CUmemorytype srcMemoryType;
	const void *srcHost;
	devptr_v1 srcDevice;
	CUarray srcArray;
	void *reserved0;
	unsigned int srcPitch, srcHeight;
	unsigned int dstXInBytes, dstY, dstZ, dstLOD;
	CUmemorytype dstMemoryType;
	void *dstHost;
	devptr_v1 dstDevice;
	CUarray dstArray;
	void *reserved1;
	unsigned int dstPitch, dstHeight;
	unsigned int WidthInBytes, Height, Depth;
} copy3d_v1;

CUresult v1_ArrayCreate(CUarray *, const desc_v1 *) __asm__("cuArrayCreate");
CUresult v1_CtxCreate(CUcontext *, unsigned int, CUdevice) __asm__("cuCtxCreate");
CUresult v1_ArrayGetDescriptor(desc_v1 *, CUarray) __asm__("cuArrayGetDescriptor");
CUresult v1_Array3DCreate(CUarray *, const desc3d_v1 *) __asm__("cuArray3DCreate");
CUresult v1_Array3DGetDescriptor(desc3d_v1 *, CUarray) __asm__("cuArray3DGetDescriptor");
CUresult v1_MemcpyHtoA(CUarray, unsigned int, const void *, unsigned int) __asm__("cuMemcpyHtoA");
CUresult v1_MemcpyAtoH(void *, CUarray, unsigned int, unsigned int) __asm__("cuMemcpyAtoH");
CUresult v1_MemcpyHtoAAsync(CUarray, unsigned int, const void *, unsigned int, CUstream) __asm__("cuMemcpyHtoAAsync");
CUresult v1_MemcpyAtoHAsync(void *, CUarray, unsigned int, unsigned int, CUstream) __asm__("cuMemcpyAtoHAsync");
CUresult v1_MemcpyAtoA(CUarray, unsigned int, CUarray, unsigned int, unsigned int) __asm__("cuMemcpyAtoA");
CUresult v1_MemcpyAtoD(devptr_v1, CUarray, unsigned int, unsigned int) __asm__("cuMemcpyAtoD");
CUresult v1_MemcpyDtoA(CUarray, unsigned int, devptr_v1, unsigned int) __asm__("cuMemcpyDtoA");
CUresult v1_Memcpy3D(const copy3d_v1 *) __asm__("cuMemcpy3D");
CUresult v1_Memcpy3DAsync(const copy3d_v1 *, CUstream) __asm__("cuMemcpy3DAsync");
CUresult v1_MemMapArrayAsync_ptsz(CUarrayMapInfo *, unsigned int, CUstream) __asm__("cuMemMapArrayAsync_ptsz");

START_TEST(legacy_v1_names)
{
	desc_v1 d = {.Width = 4000, .Format = CU_AD_FORMAT_UNSIGNED_INT8, .NumChannels = 1}, g;
	desc3d_v1 d3 = {.Width = 48, .Height = 10, .Depth = 3, .Format = CU_AD_FORMAT_UNSIGNED_INT8, .NumChannels = 1};
	uint8_t buf[64];
	copy3d_v1 cp;
	CUcontext v1c;
	CUarray a;

	/* First-version calls run in no context the driver makes today: in the
	 * runtime's (API 3020+) it answers CUDA_ERROR_INVALID_CONTEXT, and the
	 * first-version cuCtxCreate CUDA_ERROR_OUT_OF_MEMORY (measured on an
	 * H100). */
	memset(&cp, 0, sizeof(cp));
	ck_assert_int_eq(v1_ArrayCreate(&a, &d), CUDA_ERROR_INVALID_CONTEXT);
	ck_assert_int_eq(v1_Array3DCreate(&a, &d3), CUDA_ERROR_INVALID_CONTEXT);
	ck_assert_int_eq(v1_ArrayGetDescriptor(&g, NULL), CUDA_ERROR_INVALID_CONTEXT);
	ck_assert_int_eq(v1_MemcpyAtoH(buf, NULL, 0, sizeof(buf)), CUDA_ERROR_INVALID_CONTEXT);
	ck_assert_int_eq(v1_Memcpy3D(&cp), CUDA_ERROR_INVALID_CONTEXT);
	ck_assert_int_eq(v1_CtxCreate(&v1c, 0, 0), CUDA_ERROR_OUT_OF_MEMORY);
}
END_TEST

/* ---- sparse array mapping ---------------------------------------------------- */

static void map_info(CUarrayMapInfo *m, CUarray a, CUmemOperationType op, CUmemGenericAllocationHandle h,
		     unsigned x, unsigned y, unsigned long long off)
{
	memset(m, 0, sizeof(*m));
	m->resourceType = CU_RESOURCE_TYPE_ARRAY;
	m->resource.array = a;
	m->subresourceType = CU_ARRAY_SPARSE_SUBRESOURCE_TYPE_SPARSE_LEVEL;
	m->subresource.sparseLevel.offsetX = x;
	m->subresource.sparseLevel.offsetY = y;
	m->subresource.sparseLevel.extentDepth = 1;
	m->memOperationType = op;
	m->memHandleType = CU_MEM_HANDLE_TYPE_GENERIC;
	m->memHandle.memHandle = h;
	m->offset = off;
	m->deviceBitMask = 1;
}

START_TEST(sparse_array_mapping)
{
	CUmemAllocationProp prop = {.type = CU_MEM_ALLOCATION_TYPE_PINNED,
				    .location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0},
				    .allocFlags.usage = CU_MEM_CREATE_USAGE_TILE_POOL};
	CUDA_ARRAY_SPARSE_PROPERTIES sp;
	CUmemGenericAllocationHandle h;
	CUarrayMapInfo m[2];
	CUarray a, plain;
	size_t gran = 0;
	int sparse = 0;

	CK(cuDeviceGetAttribute(&sparse, CU_DEVICE_ATTRIBUTE_SPARSE_CUDA_ARRAY_SUPPORTED, 0));
	if (!sparse)
		return;
	a = array2d(512, 512, CU_AD_FORMAT_UNSIGNED_INT8, 4, CUDA_ARRAY3D_SPARSE);
	plain = array2d(64, 64, CU_AD_FORMAT_UNSIGNED_INT8, 4, 0);
	CK(cuArrayGetSparseProperties(&sp, a));
	CK(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	CK(cuMemCreate(&h, gran, &prop, 0));
	/* one tile mapped, then unmapped, on the legacy and the per-thread stream */
	map_info(&m[0], a, CU_MEM_OPERATION_TYPE_MAP, h, 0, 0, 0);
	m[0].subresource.sparseLevel.extentWidth = sp.tileExtent.width;
	m[0].subresource.sparseLevel.extentHeight = sp.tileExtent.height;
	CK(cuMemMapArrayAsync(m, 1, NULL));
	CK(cuStreamSynchronize(NULL));
	m[0].memOperationType = CU_MEM_OPERATION_TYPE_UNMAP;
	m[0].memHandle.memHandle = 0;
	CK(v1_MemMapArrayAsync_ptsz(m, 1, NULL));
	CK(cuStreamSynchronize(CU_STREAM_PER_THREAD));
	/* refused before the driver: a mapping past its allocation, an unknown
	 * resource type, operation or handle type, an unmap naming memory, an
	 * allocation or array that is not the session's, an empty list */
	map_info(&m[0], a, CU_MEM_OPERATION_TYPE_MAP, h, 0, 0, gran);
	m[0].subresource.sparseLevel.extentWidth = sp.tileExtent.width;
	m[0].subresource.sparseLevel.extentHeight = sp.tileExtent.height;
	ck_assert_int_eq(cuMemMapArrayAsync(m, 1, NULL), CUDA_ERROR_INVALID_VALUE);
	m[0].offset = 0;
	m[1] = m[0];
	m[1].resourceType = (CUresourcetype)77;
	ck_assert_int_eq(cuMemMapArrayAsync(m, 2, NULL), CUDA_ERROR_INVALID_VALUE);
	m[1] = m[0];
	m[1].memOperationType = (CUmemOperationType)9;
	ck_assert_int_eq(cuMemMapArrayAsync(m, 2, NULL), CUDA_ERROR_INVALID_VALUE);
	m[1] = m[0];
	m[1].memHandleType = (CUmemHandleType)3;
	ck_assert_int_eq(cuMemMapArrayAsync(m, 2, NULL), CUDA_ERROR_INVALID_VALUE);
	m[1] = m[0];
	m[1].memOperationType = CU_MEM_OPERATION_TYPE_UNMAP;
	CK(cuMemMapArrayAsync(&m[1], 1, NULL)); /* an unmap's handle is ignored, as by the driver (H100) */
	m[1].memOperationType = CU_MEM_OPERATION_TYPE_MAP;
	CK(cuMemMapArrayAsync(&m[1], 1, NULL)); /* mapped again for what follows */
	m[1] = m[0];
	m[1].memHandle.memHandle = h ^ 0x40;
	ck_assert_int_eq(cuMemMapArrayAsync(&m[1], 1, NULL), CUDA_ERROR_INVALID_VALUE);
	m[1] = m[0];
	m[1].resource.array = (CUarray)(uintptr_t)0x1234;
	ck_assert_int_eq(cuMemMapArrayAsync(&m[1], 1, NULL), CUDA_ERROR_INVALID_HANDLE);
	m[1] = m[0];
	m[1].resource.array = plain; /* neither sparse nor deferred */
	ck_assert_int_eq(cuMemMapArrayAsync(&m[1], 1, NULL), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuMemMapArrayAsync(m, 0, NULL), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuMemMapArrayAsync(NULL, 1, NULL), CUDA_ERROR_INVALID_VALUE);
	/* mapped, the handle released: the array holds the memory until it goes */
	CK(cuMemMapArrayAsync(m, 1, NULL));
	CK(cuMemRelease(h));
	CK(cuStreamSynchronize(NULL));
	ck_assert_int_eq(cuMemMapArrayAsync(m, 1, NULL), CUDA_ERROR_INVALID_VALUE); /* released: no handle */
	CK(cuArrayDestroy(a));
	CK(cuArrayDestroy(plain));
}
END_TEST
/* ---- legacy texture and surface references ------------------------------------------ */

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

/* A module that declares one texture and one surface reference (valid PTX:
 * a GPU JIT-compiles it; the stand-in finds the declarations by name). */
static const char texref_ptx[] = ".version 8.0\n.target sm_75\n.address_size 64\n"
				 ".global .texref tex_a;\n.global .surfref surf_a;\n"
				 ".visible .entry texref_k()\n{\n\tret;\n}\n";

START_TEST(texref_module_round_trips)
{
	CUDA_ARRAY_DESCRIPTOR d = {.Width = 16, .Height = 8, .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 1};
	float border[4] = {1.0f, 0.5f, 0.25f, 2.0f}, got[4] = {0}, lo, hi, bias;
	CUmodule m;
	CUfunction f;
	CUtexref t, t2;
	CUsurfref s;
	CUarray a, sa, ga;
	CUdeviceptr dp, gd;
	CUarray_format fmt;
	CUaddress_mode am;
	CUfilter_mode fm;
	unsigned flags;
	size_t off = 1;
	int n, aniso;

	CK(cuModuleLoadData(&m, texref_ptx));
	CK(cuModuleGetFunction(&f, m, "texref_k"));
	CK(cuModuleGetTexRef(&t, m, "tex_a"));
	CK(cuModuleGetTexRef(&t2, m, "tex_a"));
	ck_assert_ptr_eq(t, t2); /* one reference per name */
	CK(cuModuleGetSurfRef(&s, m, "surf_a"));
	ck_assert_int_eq(cuModuleGetTexRef(&t2, m, "no_such_texref"), CUDA_ERROR_NOT_FOUND);
	ck_assert_int_eq(cuModuleGetSurfRef(&s, m, "tex_a"), CUDA_ERROR_NOT_FOUND);
	CK(cuModuleGetSurfRef(&s, m, "surf_a"));
	ck_assert_int_eq(cuModuleGetTexRef(NULL, m, "tex_a"), CUDA_ERROR_INVALID_VALUE);
	/* what is set is what comes back */
	CK(cuTexRefSetFormat(t, CU_AD_FORMAT_FLOAT, 2));
	CK(cuTexRefGetFormat(&fmt, &n, t));
	ck_assert_int_eq(fmt, CU_AD_FORMAT_FLOAT);
	ck_assert_int_eq(n, 2);
	CK(cuTexRefSetAddressMode(t, 0, CU_TR_ADDRESS_MODE_CLAMP));
	CK(cuTexRefSetAddressMode(t, 1, CU_TR_ADDRESS_MODE_BORDER));
	CK(cuTexRefGetAddressMode(&am, t, 0));
	ck_assert_int_eq(am, CU_TR_ADDRESS_MODE_CLAMP);
	CK(cuTexRefGetAddressMode(&am, t, 1));
	ck_assert_int_eq(am, CU_TR_ADDRESS_MODE_BORDER);
	CK(cuTexRefSetFilterMode(t, CU_TR_FILTER_MODE_LINEAR));
	CK(cuTexRefGetFilterMode(&fm, t));
	ck_assert_int_eq(fm, CU_TR_FILTER_MODE_LINEAR);
	CK(cuTexRefSetFlags(t, CU_TRSF_NORMALIZED_COORDINATES));
	CK(cuTexRefGetFlags(&flags, t));
	ck_assert_uint_eq(flags, CU_TRSF_NORMALIZED_COORDINATES);
	CK(cuTexRefSetFlags(t, 0));
	CK(cuTexRefSetBorderColor(t, border));
	CK(cuTexRefGetBorderColor(got, t));
	ck_assert(!memcmp(got, border, sizeof(got)));
	CK(cuTexRefSetMipmapFilterMode(t, CU_TR_FILTER_MODE_LINEAR));
	CK(cuTexRefGetMipmapFilterMode(&fm, t));
	ck_assert_int_eq(fm, CU_TR_FILTER_MODE_LINEAR);
	CK(cuTexRefSetMipmapLevelBias(t, 0.5f));
	CK(cuTexRefGetMipmapLevelBias(&bias, t));
	ck_assert(bias == 0.5f);
	CK(cuTexRefSetMipmapLevelClamp(t, 0.0f, 4.0f));
	CK(cuTexRefGetMipmapLevelClamp(&lo, &hi, t));
	ck_assert(lo == 0.0f && hi == 4.0f);
	CK(cuTexRefSetMaxAnisotropy(t, 4));
	CK(cuTexRefGetMaxAnisotropy(&aniso, t));
	ck_assert_int_eq(aniso, 4);
	/* an array bound, then an address (which supersedes it) */
	CK(cuArrayCreate(&a, &d));
	CK(cuTexRefSetArray(t, a, CU_TRSA_OVERRIDE_FORMAT));
	CK(cuTexRefGetArray(&ga, t));
	ck_assert_ptr_eq(ga, a);
	CK(cuMemAlloc(&dp, 4096));
	CK(cuTexRefSetFormat(t, CU_AD_FORMAT_FLOAT, 1));
	CK(cuTexRefSetAddress(&off, t, dp, 4096));
	ck_assert_uint_eq(off, 0);
	CK(cuTexRefSetAddress(NULL, t, dp, 4096));
	CK(cuTexRefGetAddress(&gd, t));
	ck_assert_uint_eq(gd, dp);
	ck_assert_int_eq(cuTexRefGetArray(&ga, t), CUDA_ERROR_INVALID_VALUE);
	CK(cuParamSetTexRef(f, CU_PARAM_TR_DEFAULT, t));
	/* the surface reference */
	sa = array2d(16, 8, CU_AD_FORMAT_UNSIGNED_INT32, 1, CUDA_ARRAY3D_SURFACE_LDST);
	CK(cuSurfRefSetArray(s, sa, 0));
	CK(cuSurfRefGetArray(&ga, s));
	ck_assert_ptr_eq(ga, sa);
	/* a module's references are its own: never destroyed alone, gone with it */
	ck_assert_int_eq(cuTexRefDestroy(t), CUDA_ERROR_INVALID_VALUE);
	CK(cuModuleUnload(m));
	ck_assert_int_eq(cuTexRefGetFormat(&fmt, &n, t), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(cuTexRefSetAddress(NULL, t, dp, 4096), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(cuSurfRefGetArray(&ga, s), CUDA_ERROR_INVALID_HANDLE);
	CK(cuArrayDestroy(a));
	CK(cuArrayDestroy(sa));
	CK(cuMemFree(dp));
}
END_TEST

START_TEST(texref_create_bind_destroy)
{
	CUDA_ARRAY_DESCRIPTOR d = {.Width = 64, .Height = 16, .Format = CU_AD_FORMAT_UNSIGNED_INT8, .NumChannels = 4};
	CUtexref t;
	CUdeviceptr dp, gd;
	CUarray a, ga;
	CUarray_format fmt;
	size_t pitch;
	int n;

	ck_assert_int_eq(cuTexRefCreate(NULL), CUDA_ERROR_INVALID_VALUE);
	CK(cuTexRefCreate(&t));
	CK(cuTexRefSetFormat(t, CU_AD_FORMAT_SIGNED_INT32, 4));
	CK(cuTexRefGetFormat(&fmt, &n, t));
	ck_assert_int_eq(fmt, CU_AD_FORMAT_SIGNED_INT32);
	ck_assert_int_eq(n, 4);
	/* a pitched 2D binding: its whole extent is the session's */
	CK(cuMemAllocPitch(&dp, &pitch, 256, 16, 4));
	CK(cuTexRefSetAddress2D(t, &d, dp, pitch));
	CK(cuTexRefGetAddress(&gd, t));
	ck_assert_uint_eq(gd, dp);
	d.Height = 17; /* one row past the allocation */
	ck_assert_int_eq(cuTexRefSetAddress2D(t, &d, dp, pitch), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuTexRefSetAddress2D(t, NULL, dp, pitch), CUDA_ERROR_INVALID_VALUE);
	/* a 1D binding past the allocation's end, or outside the session */
	ck_assert_int_eq(cuTexRefSetAddress(NULL, t, dp, pitch * 16 + 1), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuTexRefSetAddress(NULL, t, 0x1000, 256), CUDA_ERROR_INVALID_VALUE);
	/* an array bound and destroyed is not answered as a handle */
	a = array2d(8, 8, CU_AD_FORMAT_FLOAT, 1, 0);
	CK(cuTexRefSetArray(t, a, CU_TRSA_OVERRIDE_FORMAT));
	CK(cuTexRefGetArray(&ga, t));
	ck_assert_ptr_eq(ga, a);
	CK(cuArrayDestroy(a));
	ck_assert_int_eq(cuTexRefGetArray(&ga, t), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuTexRefSetArray(t, a, CU_TRSA_OVERRIDE_FORMAT), CUDA_ERROR_INVALID_HANDLE);
	/* forged handles */
	ck_assert_int_eq(cuTexRefSetFlags((CUtexref)(uintptr_t)0x4242, 0), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(cuSurfRefSetArray((CUsurfref)(void *)t, a, 0), CUDA_ERROR_INVALID_HANDLE);
	CK(cuTexRefDestroy(t));
	ck_assert_int_eq(cuTexRefDestroy(t), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(cuTexRefGetFormat(&fmt, &n, t), CUDA_ERROR_INVALID_HANDLE);
	CK(cuMemFree(dp));
}
END_TEST

/* The first versions (32-bit addresses) and references of a destroyed context. */
START_TEST(texref_legacy_names_and_contexts)
{
	CUresult (*set1)(unsigned int *, CUtexref, unsigned int, unsigned int) =
		(CUresult(*)(unsigned int *, CUtexref, unsigned int, unsigned int))dlsym(RTLD_DEFAULT, "cuTexRefSetAddress");
	CUresult (*get1)(unsigned int *, CUtexref) =
		(CUresult(*)(unsigned int *, CUtexref))dlsym(RTLD_DEFAULT, "cuTexRefGetAddress");
	CUresult (*set2d1)(CUtexref, const void *, unsigned int, unsigned int) =
		(CUresult(*)(CUtexref, const void *, unsigned int, unsigned int))dlsym(RTLD_DEFAULT, "cuTexRefSetAddress2D");
	CUresult (*set2d2)(CUtexref, const CUDA_ARRAY_DESCRIPTOR *, CUdeviceptr, size_t) =
		(CUresult(*)(CUtexref, const CUDA_ARRAY_DESCRIPTOR *, CUdeviceptr, size_t))dlsym(RTLD_DEFAULT,
													"cuTexRefSetAddress2D_v2");
	struct { unsigned int w, h; CUarray_format f; unsigned int ch; } d1 = {16, 16, CU_AD_FORMAT_FLOAT, 1};
	CUDA_ARRAY_DESCRIPTOR d = {.Width = 16, .Height = 16, .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 1};
	unsigned int off = 7, addr = 0;
	CUdeviceptr dp;
	CUcontext c;
	CUtexref t;
	size_t pitch;

	ck_assert_ptr_nonnull(set1);
	ck_assert_ptr_nonnull(get1);
	ck_assert_ptr_nonnull(set2d1);
	ck_assert_ptr_nonnull(set2d2);
	CK(cuTexRefCreate(&t));
	CK(cuMemAllocPitch(&dp, &pitch, 64, 16, 4));
	CK(set2d2(t, &d, dp, pitch)); /* the same call as _v3 */
	if (dp > 0xffffffffull) {
		/* no 32-bit address names this memory */
		ck_assert_int_eq(get1(&addr, t), CUDA_ERROR_INVALID_VALUE);
		ck_assert_uint_eq(addr, 0);
		ck_assert_int_eq(set1(&off, t, (unsigned int)dp, 256), CUDA_ERROR_INVALID_VALUE);
		ck_assert_int_eq(set2d1(t, &d1, (unsigned int)dp, (unsigned int)pitch), CUDA_ERROR_INVALID_VALUE);
	}
	ck_assert_int_eq(set2d1(t, NULL, 0, 0), CUDA_ERROR_INVALID_VALUE);
	CK(cuMemFree(dp));
	CK(cuTexRefDestroy(t));
	/* a created reference belongs to its context */
	CK(cuCtxCreate(&c, NULL, 0, 0));
	CK(cuTexRefCreate(&t));
	CK(cuCtxDestroy(c));
	CK(cuCtxSetCurrent(g_ctx));
	ck_assert_int_eq(cuTexRefSetFlags(t, 0), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(cuTexRefDestroy(t), CUDA_ERROR_INVALID_HANDLE);
}
END_TEST

#pragma GCC diagnostic pop

int main(void)
{
	Suite *s = suite_create("arrays");
	TCase *t = tcase_create("arrays");
	SRunner *r;
	int failed;

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 60);
	tcase_add_test(t, create_describe_destroy);
	tcase_add_test(t, copies_2d_every_direction);
	tcase_add_test(t, copies_1d_forms);
	tcase_add_test(t, copies_3d);
	tcase_add_test(t, texture_and_surface_objects);
	tcase_add_test(t, mipmap_levels);
	tcase_add_test(t, batches);
	tcase_add_test(t, arrays_go_with_their_context);
	tcase_add_test(t, legacy_v1_names);
	tcase_add_test(t, sparse_array_mapping);
	tcase_add_test(t, texref_module_round_trips);
	tcase_add_test(t, texref_create_bind_destroy);
	tcase_add_test(t, texref_legacy_names_and_contexts);
	suite_add_tcase(s, t);
	r = srunner_create(s);
	srunner_run_all(r, CK_NORMAL);
	failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? 1 : 0;
}
