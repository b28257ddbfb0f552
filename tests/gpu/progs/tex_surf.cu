// Texture and surface objects: textures on a CUDA array (point filtering,
// unnormalized; linear filtering, normalized coordinates), on linear memory
// (tex1Dfetch), on pitched memory (pitch2D) and on a mipmapped array
// (tex2DLod per level), checked against a CPU reference; a surface object
// written by one kernel and read by another, then copied back; the objects'
// descriptors read back; destroyed objects and arrays.
#include <math.h>
#include <vector>
#include "common.h"

__global__ void fetch2d(cudaTextureObject_t t, float *out, int w, int h, float dx, float dy, int norm)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) {
        float u = x + dx, v = y + dy;
        if (norm) {
            u /= w;
            v /= h;
        }
        out[y * w + x] = tex2D<float>(t, u, v);
    }
}

__global__ void fetch1d(cudaTextureObject_t t, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = tex1Dfetch<float>(t, i);
}

__global__ void fetch_lod(cudaTextureObject_t t, float *out, int w, int h, float level)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h)
        out[y * w + x] = tex2DLod<float>(t, (x + 0.5f) / w, (y + 0.5f) / h, level);
}

__global__ void surf_write(cudaSurfaceObject_t s, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h)
        surf2Dwrite(make_float2(x * 0.5f, y * 2.0f + 1.0f), s, x * (int)sizeof(float2), y);
}

__global__ void surf_scale(cudaSurfaceObject_t s, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) {
        float2 v = surf2Dread<float2>(s, x * (int)sizeof(float2), y);
        surf2Dwrite(make_float2(v.x * 3.0f, v.y - 1.0f), s, x * (int)sizeof(float2), y);
    }
}

static float val(int x, int y)
{
    return (float)((x * 37 + y * 101) % 997) / 16.0f;
}

static cudaTextureObject_t make_tex(const cudaResourceDesc &r, cudaTextureFilterMode f, int norm,
                                    cudaTextureAddressMode am = cudaAddressModeClamp)
{
    cudaTextureDesc t = {};
    t.addressMode[0] = t.addressMode[1] = am;
    t.filterMode = f;
    t.readMode = cudaReadModeElementType;
    t.normalizedCoords = norm;
    cudaTextureObject_t o;
    CK(cudaCreateTextureObject(&o, &r, &t, NULL));
    return o;
}

// CPU bilinear filtering as the texture unit does it (9-bit weights aside).
static float bilinear(const std::vector<float> &img, int w, int h, float u, float v)
{
    float xb = u - 0.5f, yb = v - 0.5f;
    int x0 = (int)floorf(xb), y0 = (int)floorf(yb);
    float a = xb - x0, b = yb - y0;
    auto at = [&](int x, int y) {
        x = x < 0 ? 0 : x >= w ? w - 1 : x;
        y = y < 0 ? 0 : y >= h ? h - 1 : y;
        return img[y * w + x];
    };
    return (1 - a) * (1 - b) * at(x0, y0) + a * (1 - b) * at(x0 + 1, y0) + (1 - a) * b * at(x0, y0 + 1) +
           a * b * at(x0 + 1, y0 + 1);
}

int main(void)
{
    CK(cudaSetDevice(0));
    const int W = 64, H = 48;
    std::vector<float> img(W * H), got(W * H);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            img[y * W + x] = val(x, y);
    float *dout;
    CK(cudaMalloc((void **)&dout, W * H * sizeof(float)));
    dim3 blk(16, 8), grd((W + 15) / 16, (H + 7) / 8);

    // ---- an array: point filtering, then linear filtering with normalized coordinates --------
    cudaChannelFormatDesc fd = cudaCreateChannelDesc<float>();
    cudaArray_t arr;
    CK(cudaMallocArray(&arr, &fd, W, H));
    CK(cudaMemcpy2DToArray(arr, 0, 0, img.data(), W * sizeof(float), W * sizeof(float), H, cudaMemcpyHostToDevice));
    cudaResourceDesc r = {};
    r.resType = cudaResourceTypeArray;
    r.res.array.array = arr;
    cudaTextureObject_t tp = make_tex(r, cudaFilterModePoint, 0);
    fetch2d<<<grd, blk>>>(tp, dout, W, H, 0.5f, 0.5f, 0);
    CKL();
    CK(cudaMemcpy(got.data(), dout, W * H * sizeof(float), cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < W * H; i++)
        bad += got[i] != img[i];
    printf("array_point_bad=%d\n", bad);
    EXPECT(bad == 0, "array point fetch: %d wrong", bad);

    cudaTextureObject_t tl = make_tex(r, cudaFilterModeLinear, 1);
    fetch2d<<<grd, blk>>>(tl, dout, W, H, 0.25f, 0.75f, 1);
    CKL();
    CK(cudaMemcpy(got.data(), dout, W * H * sizeof(float), cudaMemcpyDeviceToHost));
    bad = 0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            bad += fabsf(got[y * W + x] - bilinear(img, W, H, x + 0.25f, y + 0.75f)) > 0.25f;
    printf("array_linear_norm_bad=%d\n", bad);
    EXPECT(bad == 0, "array linear fetch: %d beyond tolerance", bad);

    cudaResourceDesc rg;
    CK(cudaGetTextureObjectResourceDesc(&rg, tl));
    cudaTextureDesc tg;
    CK(cudaGetTextureObjectTextureDesc(&tg, tl));
    printf("desc_restype_array=%d same_array=%d filter_linear=%d normalized=%d\n", rg.resType == cudaResourceTypeArray,
           rg.res.array.array == arr, tg.filterMode == cudaFilterModeLinear, tg.normalizedCoords);
    EXPECT(rg.res.array.array == arr, "resource descriptor names another array");

    // ---- linear memory: tex1Dfetch ---------------------------------------------------------
    float *lin;
    CK(cudaMalloc((void **)&lin, W * H * sizeof(float)));
    CK(cudaMemcpy(lin, img.data(), W * H * sizeof(float), cudaMemcpyHostToDevice));
    cudaResourceDesc rl = {};
    rl.resType = cudaResourceTypeLinear;
    rl.res.linear.devPtr = lin;
    rl.res.linear.desc = fd;
    rl.res.linear.sizeInBytes = W * H * sizeof(float);
    cudaTextureObject_t t1 = make_tex(rl, cudaFilterModePoint, 0);
    fetch1d<<<(W * H + 255) / 256, 256>>>(t1, dout, W * H);
    CKL();
    CK(cudaMemcpy(got.data(), dout, W * H * sizeof(float), cudaMemcpyDeviceToHost));
    bad = 0;
    for (int i = 0; i < W * H; i++)
        bad += got[i] != img[i];
    printf("linear_fetch_bad=%d\n", bad);
    EXPECT(bad == 0, "linear fetch: %d wrong", bad);

    // ---- pitched memory: pitch2D ----------------------------------------------------------
    float *pd;
    size_t pitch;
    CK(cudaMallocPitch((void **)&pd, &pitch, W * sizeof(float), H));
    CK(cudaMemcpy2D(pd, pitch, img.data(), W * sizeof(float), W * sizeof(float), H, cudaMemcpyHostToDevice));
    cudaResourceDesc rp = {};
    rp.resType = cudaResourceTypePitch2D;
    rp.res.pitch2D.devPtr = pd;
    rp.res.pitch2D.desc = fd;
    rp.res.pitch2D.width = W;
    rp.res.pitch2D.height = H;
    rp.res.pitch2D.pitchInBytes = pitch;
    cudaTextureObject_t t2 = make_tex(rp, cudaFilterModePoint, 0);
    fetch2d<<<grd, blk>>>(t2, dout, W, H, 0.5f, 0.5f, 0);
    CKL();
    CK(cudaMemcpy(got.data(), dout, W * H * sizeof(float), cudaMemcpyDeviceToHost));
    bad = 0;
    for (int i = 0; i < W * H; i++)
        bad += got[i] != img[i];
    printf("pitch2d_fetch_bad=%d\n", bad);
    EXPECT(bad == 0, "pitch2D fetch: %d wrong", bad);

    // ---- a mipmapped array: each level its own values, read with tex2DLod --------------------
    cudaMipmappedArray_t mip;
    const int LV = 3;
    CK(cudaMallocMipmappedArray(&mip, &fd, make_cudaExtent(W, H, 0), LV));
    for (int l = 0; l < LV; l++) {
        cudaArray_t la;
        CK(cudaGetMipmappedArrayLevel(&la, mip, l));
        int lw = W >> l, lh = H >> l;
        std::vector<float> lv(lw * lh);
        for (int i = 0; i < lw * lh; i++)
            lv[i] = (float)(l * 1000 + i);
        CK(cudaMemcpy2DToArray(la, 0, 0, lv.data(), lw * sizeof(float), lw * sizeof(float), lh,
                               cudaMemcpyHostToDevice));
    }
    cudaResourceDesc rm = {};
    rm.resType = cudaResourceTypeMipmappedArray;
    rm.res.mipmap.mipmap = mip;
    cudaTextureDesc tdm = {};
    tdm.addressMode[0] = tdm.addressMode[1] = cudaAddressModeClamp;
    tdm.filterMode = cudaFilterModePoint;
    tdm.mipmapFilterMode = cudaFilterModePoint;
    tdm.readMode = cudaReadModeElementType;
    tdm.normalizedCoords = 1;
    tdm.maxMipmapLevelClamp = LV - 1;
    cudaTextureObject_t tm;
    CK(cudaCreateTextureObject(&tm, &rm, &tdm, NULL));
    for (int l = 0; l < LV; l++) {
        int lw = W >> l, lh = H >> l;
        fetch_lod<<<grd, blk>>>(tm, dout, lw, lh, (float)l);
        CKL();
        CK(cudaMemcpy(got.data(), dout, lw * lh * sizeof(float), cudaMemcpyDeviceToHost));
        bad = 0;
        for (int i = 0; i < lw * lh; i++)
            bad += got[i] != (float)(l * 1000 + i);
        printf("mip_level%d_bad=%d\n", l, bad);
        EXPECT(bad == 0, "mipmap level %d: %d wrong", l, bad);
    }

    // ---- a surface: written by one kernel, read and rewritten by another ---------------------
    cudaChannelFormatDesc f2 = cudaCreateChannelDesc<float2>();
    cudaArray_t sa;
    CK(cudaMallocArray(&sa, &f2, W, H, cudaArraySurfaceLoadStore));
    cudaResourceDesc rs = {};
    rs.resType = cudaResourceTypeArray;
    rs.res.array.array = sa;
    cudaSurfaceObject_t so;
    CK(cudaCreateSurfaceObject(&so, &rs));
    surf_write<<<grd, blk>>>(so, W, H);
    CKL();
    surf_scale<<<grd, blk>>>(so, W, H);
    CKL();
    std::vector<float2> sv(W * H);
    CK(cudaMemcpy2DFromArray(sv.data(), W * sizeof(float2), sa, 0, 0, W * sizeof(float2), H, cudaMemcpyDeviceToHost));
    bad = 0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            bad += sv[y * W + x].x != x * 1.5f || sv[y * W + x].y != y * 2.0f;
    printf("surface_bad=%d\n", bad);
    EXPECT(bad == 0, "surface: %d wrong", bad);
    CK(cudaGetSurfaceObjectResourceDesc(&rg, so));
    printf("surf_same_array=%d\n", rg.res.array.array == sa);

    // ---- a surface needs an array made for it; objects go -------------------------------------
    cudaSurfaceObject_t so2;
    cudaError_t e = cudaCreateSurfaceObject(&so2, &r);
    printf("surface_on_plain_array=%s\n", cudaGetErrorName(e));
    // (the driver makes it all the same: the flag matters to the hardware's writes)
    cudaGetLastError();
    if (e == cudaSuccess)
        CK(cudaDestroySurfaceObject(so2));
    CK(cudaDestroySurfaceObject(so));
    CK(cudaDestroyTextureObject(tp));
    CK(cudaDestroyTextureObject(tl));
    CK(cudaDestroyTextureObject(t1));
    CK(cudaDestroyTextureObject(t2));
    CK(cudaDestroyTextureObject(tm));
    CK(cudaFreeMipmappedArray(mip));
    CK(cudaFreeArray(sa));
    CK(cudaFreeArray(arr));
    CK(cudaFree(pd));
    CK(cudaFree(lin));
    CK(cudaFree(dout));
    return finish();
}
