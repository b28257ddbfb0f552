// CUDA arrays and 3D copies through the runtime: cudaMallocArray and
// cudaMalloc3DArray, cudaMemcpy2DToArray / 2DFromArray / 2DArrayToArray
// (sync and async), cudaMemcpy3D(Async) between pitched host memory, pitched
// device memory (cudaMalloc3D) and 3D arrays with offsets, pinned and pageable
// host sides, a box larger than vcuda's staging pieces, the batch copies
// (cudaMemcpyBatchAsync, cudaMemcpy3DBatchAsync), and the error names of a
// copy past an array's end and into a freed array (printed, compared with
// the native run).
#include <vector>
#include "common.h"

static unsigned char pat(size_t i, unsigned seed)
{
    return (unsigned char)(i * 131 + seed + (i >> 9));
}

int main(void)
{
    CK(cudaSetDevice(0));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

    // ---- 2D arrays: host -> array -> array -> host, sub-rectangles -------------------
    const int W = 300, H = 77; // float elements
    cudaChannelFormatDesc f1 = cudaCreateChannelDesc<float>();
    cudaArray_t a, b;
    CK(cudaMallocArray(&a, &f1, W, H));
    CK(cudaMallocArray(&b, &f1, W, H));
    const size_t hp = (W + 5) * sizeof(float);
    std::vector<unsigned char> h(hp * H), back(hp * H, 0xee);
    for (size_t i = 0; i < h.size(); i++)
        h[i] = pat(i, 1);
    CK(cudaMemcpy2DToArray(a, 0, 0, h.data(), hp, W * sizeof(float), H, cudaMemcpyHostToDevice));
    CK(cudaMemcpy2DArrayToArray(b, 0, 0, a, 0, 0, W * sizeof(float), H, cudaMemcpyDeviceToDevice));
    // A device-to-device copy on the legacy stream returns before it is done,
    // and s does not wait for that stream (non-blocking): wait here.
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy2DFromArrayAsync(back.data(), hp, b, 4 * sizeof(float), 3, (W - 4) * sizeof(float), H - 3,
                                  cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    int bad = 0;
    for (int y = 0; y < H - 3; y++)
        bad += memcmp(&back[y * hp], &h[(y + 3) * hp + 4 * sizeof(float)], (W - 4) * sizeof(float)) != 0;
    printf("array2d_sub_bad_rows=%d\n", bad);
    EXPECT(bad == 0, "2D array round trip: %d rows wrong", bad);

    // device <-> array (pitched device memory)
    float *dp;
    size_t dpitch;
    CK(cudaMallocPitch((void **)&dp, &dpitch, W * sizeof(float), H));
    CK(cudaMemcpy2DFromArray(dp, dpitch, a, 0, 0, W * sizeof(float), H, cudaMemcpyDeviceToDevice));
    CK(cudaDeviceSynchronize()); // as above: s would not wait for it
    CK(cudaMemcpy2DToArrayAsync(b, 0, 0, dp, dpitch, W * sizeof(float), H, cudaMemcpyDeviceToDevice, s));
    std::fill(back.begin(), back.end(), 0);
    CK(cudaMemcpy2DFromArrayAsync(back.data(), hp, b, 0, 0, W * sizeof(float), H, cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    bad = 0;
    for (int y = 0; y < H; y++)
        bad += memcmp(&back[y * hp], &h[y * hp], W * sizeof(float)) != 0;
    printf("array2d_device_bad_rows=%d\n", bad);
    EXPECT(bad == 0, "array/device round trip: %d rows wrong", bad);

    // ---- 3D: a uchar4 array, pitched host and device boxes with offsets ------------------
    const int X = 129, Y = 61, Z = 37; // 1.16 MB: several staging pieces, rows cut mid-way
    cudaChannelFormatDesc f4 = cudaCreateChannelDesc<uchar4>();
    cudaArray_t v;
    CK(cudaMalloc3DArray(&v, &f4, make_cudaExtent(X, Y, Z)));
    const size_t rp = X * 4 + 24, rh = Y + 2;
    std::vector<unsigned char> h3(rp * rh * Z), b3(rp * rh * Z, 0);
    for (size_t i = 0; i < h3.size(); i++)
        h3[i] = pat(i, 7);
    cudaMemcpy3DParms p = {};
    p.srcPtr = make_cudaPitchedPtr(h3.data(), rp, X * 4, rh);
    p.dstArray = v;
    p.extent = make_cudaExtent(X, Y, Z);
    p.kind = cudaMemcpyHostToDevice;
    CK(cudaMemcpy3D(&p));
    cudaPitchedPtr dd;
    CK(cudaMalloc3D(&dd, make_cudaExtent(X * 4, Y, Z)));
    p = cudaMemcpy3DParms{};
    p.srcArray = v;
    p.dstPtr = dd;
    p.extent = make_cudaExtent(X, Y, Z);
    p.kind = cudaMemcpyDeviceToDevice;
    CK(cudaMemcpy3DAsync(&p, s));
    // a sub-box of the device copy back to pageable host memory
    p = cudaMemcpy3DParms{};
    p.srcPtr = dd;
    p.srcPos = make_cudaPos(8, 5, 3); // bytes for linear memory
    p.dstPtr = make_cudaPitchedPtr(b3.data(), rp, X * 4, rh);
    p.dstPos = make_cudaPos(8, 5, 3);
    p.extent = make_cudaExtent(X * 4 - 8, Y - 5, Z - 3);
    p.kind = cudaMemcpyDeviceToHost;
    CK(cudaMemcpy3DAsync(&p, s));
    CK(cudaStreamSynchronize(s));
    bad = 0;
    for (int z = 3; z < Z; z++)
        for (int y = 5; y < Y; y++)
            bad += memcmp(&b3[(z * rh + y) * rp + 8], &h3[(z * rh + y) * rp + 8], X * 4 - 8) != 0;
    printf("box3d_bad_rows=%d untouched_ok=%d\n", bad, b3[0] == 0 && b3[(3 * rh + 5) * rp + 7] == 0);
    EXPECT(bad == 0, "3D box round trip: %d rows wrong", bad);

    // array -> pinned host, element offsets in the array
    unsigned char *pin;
    CK(cudaMallocHost((void **)&pin, (size_t)X * 4 * Y * Z));
    memset(pin, 0, (size_t)X * 4 * Y * Z);
    p = cudaMemcpy3DParms{};
    p.srcArray = v;
    p.srcPos = make_cudaPos(2, 1, 4); // elements for arrays
    p.dstPtr = make_cudaPitchedPtr(pin, X * 4, X * 4, Y);
    p.extent = make_cudaExtent(X - 2, Y - 1, Z - 4);
    p.kind = cudaMemcpyDeviceToHost;
    CK(cudaMemcpy3DAsync(&p, s));
    CK(cudaStreamSynchronize(s));
    bad = 0;
    for (int z = 0; z < Z - 4; z++)
        for (int y = 0; y < Y - 1; y++)
            bad += memcmp(&pin[((size_t)z * Y + y) * X * 4], &h3[((z + 4) * rh + y + 1) * rp + 8], (X - 2) * 4) != 0;
    printf("array_to_pinned_bad_rows=%d\n", bad);
    EXPECT(bad == 0, "array to pinned: %d rows wrong", bad);

    // ---- batches ---------------------------------------------------------------------------
    const size_t N = 100000;
    std::vector<unsigned char> hs(N), hb(N, 0);
    for (size_t i = 0; i < N; i++)
        hs[i] = pat(i, 11);
    unsigned char *d1, *d2;
    CK(cudaMalloc((void **)&d1, N));
    CK(cudaMalloc((void **)&d2, N));
    void *dsts[2] = {d1, d2};
    const void *srcs[2] = {hs.data(), hs.data()};
    size_t sizes[2] = {N, N / 2}, idx[1] = {0};
    cudaMemcpyAttributes at = {};
    at.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
    CK(cudaMemcpyBatchAsync(dsts, srcs, sizes, 2, &at, idx, 1, s));
    CK(cudaMemcpyAsync(hb.data(), d1, N, cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    printf("batch_ok=%d\n", memcmp(hb.data(), hs.data(), N) == 0);
    EXPECT(memcmp(hb.data(), hs.data(), N) == 0, "batch copy wrong");
    cudaMemcpy3DBatchOp op = {};
    op.src.type = cudaMemcpyOperandTypePointer;
    op.src.op.ptr.ptr = d2;
    op.src.op.ptr.rowLength = 40;
    op.dst.type = cudaMemcpyOperandTypeArray;
    op.dst.op.array.array = b;
    op.dst.op.array.offset.x = 1;
    op.dst.op.array.offset.y = 2;
    op.extent = make_cudaExtent(40, 10, 1);
    op.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
    CK(cudaMemcpy3DBatchAsync(1, &op, 0, s));
    std::vector<float> row(40);
    CK(cudaMemcpy2DFromArrayAsync(row.data(), 40 * sizeof(float), b, sizeof(float), 2 + 9, 40 * sizeof(float), 1,
                                  cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    printf("batch3d_row_ok=%d\n", memcmp(row.data(), hs.data() + 9 * 40 * 4, 40 * 4) == 0);
    EXPECT(memcmp(row.data(), hs.data() + 9 * 40 * 4, 40 * 4) == 0, "3D batch copy wrong");
    CK_EXPECT(cudaMemcpyBatchAsync(dsts, srcs, sizes, 2, &at, idx, 1, 0), cudaErrorInvalidValue);

    // ---- refusals: printed, so that the two runs compare --------------------------------
    cudaError_t e = cudaMemcpy2DToArray(a, 0, 1, h.data(), hp, W * sizeof(float), H, cudaMemcpyHostToDevice);
    printf("past_end=%s\n", cudaGetErrorName(e));
    EXPECT(e != cudaSuccess, "a copy past the array's end succeeded");
    cudaGetLastError();
    CK(cudaFreeArray(b));

    CK(cudaFreeHost(pin));
    CK(cudaFree(dd.ptr));
    CK(cudaFree(dp));
    CK(cudaFree(d1));
    CK(cudaFree(d2));
    CK(cudaFreeArray(a));
    CK(cudaFreeArray(v));
    CK(cudaStreamDestroy(s));
    return finish();
}
