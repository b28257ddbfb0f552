// Legacy texture and surface references through the driver API: a hand-written
// PTX module declaring .texref and .surfref (CUDA 12 removed them from the
// compiler, not from PTX or the driver), loaded with cuModuleLoadData (JIT);
// cuModuleGetTexRef/GetSurfRef; a 2D CUDA array read through a texture
// reference (point filtering, clamped coordinates); linear memory bound with
// cuTexRefSetAddress and read with tex.1d, launched the legacy way
// (cuParamSet*, cuParamSetTexRef, cuLaunchGrid); pitched memory bound with
// cuTexRefSetAddress2D and read with linear filtering; a surface array
// written by sust and read back by suld and by a copy; cuTexRefCreate's
// set/get round trips and cuTexRefDestroy. Every result against a CPU
// reference.
#define CUDA_ENABLE_DEPRECATED 1 // the texture reference API is deprecated, and what this tests
#include <cuda.h>
#include <math.h>
#include "common.h"

static const char k_ptx[] =
    ".version 8.0\n"
    ".target sm_75\n"
    ".address_size 64\n"
    "\n"
    ".global .texref tex_arr;\n"
    ".global .texref tex_lin;\n"
    ".global .texref tex_p;\n"
    ".global .surfref surf_out;\n"
    "\n"
    // out[y * (w + 4) + i] = tex2D(tex_arr, i - 2 + 0.5, y + 0.5): columns -2 .. w + 1, clamped
    ".visible .entry tex_array_k(.param .u64 out, .param .u32 w, .param .u32 h)\n"
    "{\n"
    "\t.reg .pred %p;\n\t.reg .b32 %r<10>;\n\t.reg .f32 %f<7>;\n\t.reg .b64 %rd<4>;\n"
    "\tld.param.u64 %rd1, [out];\n\tld.param.u32 %r1, [w];\n\tld.param.u32 %r2, [h];\n"
    "\tmov.u32 %r3, %ctaid.x;\n\tmov.u32 %r4, %ntid.x;\n\tmov.u32 %r5, %tid.x;\n"
    "\tmad.lo.u32 %r6, %r3, %r4, %r5;\n"
    "\tadd.u32 %r7, %r1, 4;\n\tmul.lo.u32 %r8, %r7, %r2;\n"
    "\tsetp.ge.u32 %p, %r6, %r8;\n\t@%p bra DONE;\n"
    "\trem.u32 %r9, %r6, %r7;\n\tdiv.u32 %r8, %r6, %r7;\n"
    "\tcvt.rn.f32.u32 %f1, %r9;\n\tsub.f32 %f1, %f1, 0f3FC00000;\n"
    "\tcvt.rn.f32.u32 %f2, %r8;\n\tadd.f32 %f2, %f2, 0f3F000000;\n"
    "\ttex.2d.v4.f32.f32 {%f3, %f4, %f5, %f6}, [tex_arr, {%f1, %f2}];\n"
    "\tcvta.to.global.u64 %rd2, %rd1;\n\tmul.wide.u32 %rd3, %r6, 4;\n\tadd.s64 %rd2, %rd2, %rd3;\n"
    "\tst.global.f32 [%rd2], %f3;\n"
    "DONE:\n\tret;\n}\n"
    "\n"
    // out[i] = tex1Dfetch(tex_lin, i) * 3 + 1
    ".visible .entry tex_lin_k(.param .u64 out, .param .u32 n)\n"
    "{\n"
    "\t.reg .pred %p;\n\t.reg .b32 %r<12>;\n\t.reg .b64 %rd<4>;\n"
    "\tld.param.u64 %rd1, [out];\n\tld.param.u32 %r1, [n];\n"
    "\tmov.u32 %r3, %ctaid.x;\n\tmov.u32 %r4, %ntid.x;\n\tmov.u32 %r5, %tid.x;\n"
    "\tmad.lo.u32 %r6, %r3, %r4, %r5;\n"
    "\tsetp.ge.u32 %p, %r6, %r1;\n\t@%p bra DONE;\n"
    "\ttex.1d.v4.s32.s32 {%r7, %r8, %r9, %r10}, [tex_lin, {%r6}];\n"
    "\tmad.lo.s32 %r11, %r7, 3, 1;\n"
    "\tcvta.to.global.u64 %rd2, %rd1;\n\tmul.wide.u32 %rd3, %r6, 4;\n\tadd.s64 %rd2, %rd2, %rd3;\n"
    "\tst.global.u32 [%rd2], %r11;\n"
    "DONE:\n\tret;\n}\n"
    "\n"
    // out[y * w + x] = tex2D(tex_p, x + 1.0, y + 0.5): halfway between texels x and x + 1 (linear)
    ".visible .entry tex_pitch_k(.param .u64 out, .param .u32 w, .param .u32 h)\n"
    "{\n"
    "\t.reg .pred %p;\n\t.reg .b32 %r<10>;\n\t.reg .f32 %f<7>;\n\t.reg .b64 %rd<4>;\n"
    "\tld.param.u64 %rd1, [out];\n\tld.param.u32 %r1, [w];\n\tld.param.u32 %r2, [h];\n"
    "\tmov.u32 %r3, %ctaid.x;\n\tmov.u32 %r4, %ntid.x;\n\tmov.u32 %r5, %tid.x;\n"
    "\tmad.lo.u32 %r6, %r3, %r4, %r5;\n"
    "\tmul.lo.u32 %r8, %r1, %r2;\n"
    "\tsetp.ge.u32 %p, %r6, %r8;\n\t@%p bra DONE;\n"
    "\trem.u32 %r9, %r6, %r1;\n\tdiv.u32 %r8, %r6, %r1;\n"
    "\tcvt.rn.f32.u32 %f1, %r9;\n\tadd.f32 %f1, %f1, 0f3F800000;\n"
    "\tcvt.rn.f32.u32 %f2, %r8;\n\tadd.f32 %f2, %f2, 0f3F000000;\n"
    "\ttex.2d.v4.f32.f32 {%f3, %f4, %f5, %f6}, [tex_p, {%f1, %f2}];\n"
    "\tcvta.to.global.u64 %rd2, %rd1;\n\tmul.wide.u32 %rd3, %r6, 4;\n\tadd.s64 %rd2, %rd2, %rd3;\n"
    "\tst.global.f32 [%rd2], %f3;\n"
    "DONE:\n\tret;\n}\n"
    "\n"
    // surf_out(x, y) = x * 1000 + y
    ".visible .entry surf_write_k(.param .u32 w, .param .u32 h)\n"
    "{\n"
    "\t.reg .pred %p;\n\t.reg .b32 %r<12>;\n"
    "\tld.param.u32 %r1, [w];\n\tld.param.u32 %r2, [h];\n"
    "\tmov.u32 %r3, %ctaid.x;\n\tmov.u32 %r4, %ntid.x;\n\tmov.u32 %r5, %tid.x;\n"
    "\tmad.lo.u32 %r6, %r3, %r4, %r5;\n"
    "\tmul.lo.u32 %r8, %r1, %r2;\n"
    "\tsetp.ge.u32 %p, %r6, %r8;\n\t@%p bra DONE;\n"
    "\trem.u32 %r9, %r6, %r1;\n\tdiv.u32 %r8, %r6, %r1;\n"
    "\tmad.lo.u32 %r10, %r9, 1000, %r8;\n"
    "\tshl.b32 %r11, %r9, 2;\n"
    "\tsust.b.2d.b32.trap [surf_out, {%r11, %r8}], {%r10};\n"
    "DONE:\n\tret;\n}\n"
    "\n"
    // out[y * w + x] = surf_out(x, y) + 1
    ".visible .entry surf_read_k(.param .u64 out, .param .u32 w, .param .u32 h)\n"
    "{\n"
    "\t.reg .pred %p;\n\t.reg .b32 %r<12>;\n\t.reg .b64 %rd<4>;\n"
    "\tld.param.u64 %rd1, [out];\n\tld.param.u32 %r1, [w];\n\tld.param.u32 %r2, [h];\n"
    "\tmov.u32 %r3, %ctaid.x;\n\tmov.u32 %r4, %ntid.x;\n\tmov.u32 %r5, %tid.x;\n"
    "\tmad.lo.u32 %r6, %r3, %r4, %r5;\n"
    "\tmul.lo.u32 %r8, %r1, %r2;\n"
    "\tsetp.ge.u32 %p, %r6, %r8;\n\t@%p bra DONE;\n"
    "\trem.u32 %r9, %r6, %r1;\n\tdiv.u32 %r8, %r6, %r1;\n"
    "\tshl.b32 %r11, %r9, 2;\n"
    "\tsuld.b.2d.b32.trap {%r10}, [surf_out, {%r11, %r8}];\n"
    "\tadd.u32 %r10, %r10, 1;\n"
    "\tcvta.to.global.u64 %rd2, %rd1;\n\tmul.wide.u32 %rd3, %r6, 4;\n\tadd.s64 %rd2, %rd2, %rd3;\n"
    "\tst.global.u32 [%rd2], %r10;\n"
    "DONE:\n\tret;\n}\n";

static unsigned blocks(unsigned n)
{
    return (n + 127) / 128;
}

static int clampi(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

// A 2D array of @w x @h elements of @fmt (one channel) with @flags.
static CUarray array2d(unsigned w, unsigned h, CUarray_format fmt, unsigned flags)
{
    CUDA_ARRAY3D_DESCRIPTOR d;
    memset(&d, 0, sizeof d);
    d.Width = w;
    d.Height = h;
    d.Format = fmt;
    d.NumChannels = 1;
    d.Flags = flags;
    CUarray a;
    CKD(cuArray3DCreate(&a, &d));
    return a;
}

static void copy_host_array(CUarray a, const void *host, size_t row, unsigned h, int to_array)
{
    CUDA_MEMCPY2D c;
    memset(&c, 0, sizeof c);
    if (to_array) {
        c.srcMemoryType = CU_MEMORYTYPE_HOST;
        c.srcHost = host;
        c.srcPitch = row;
        c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
        c.dstArray = a;
    } else {
        c.srcMemoryType = CU_MEMORYTYPE_ARRAY;
        c.srcArray = a;
        c.dstMemoryType = CU_MEMORYTYPE_HOST;
        c.dstHost = (void *)host;
        c.dstPitch = row;
    }
    c.WidthInBytes = row;
    c.Height = h;
    CKD(cuMemcpy2D(&c));
}

// A 2D CUDA array read through tex_arr: point filtering, columns past both
// edges clamped.
static void array_texture(CUmodule mod)
{
    const unsigned w = 16, h = 8, ow = w + 4;
    CUtexref t;
    CUfunction f;
    CKD(cuModuleGetTexRef(&t, mod, "tex_arr"));
    CKD(cuModuleGetFunction(&f, mod, "tex_array_k"));
    float host[8][16], out[8 * 20];
    for (unsigned y = 0; y < h; y++)
        for (unsigned x = 0; x < w; x++)
            host[y][x] = (float)(y * 100 + x);
    CUarray a = array2d(w, h, CU_AD_FORMAT_FLOAT, 0);
    copy_host_array(a, host, w * 4, h, 1);
    CKD(cuTexRefSetArray(t, a, CU_TRSA_OVERRIDE_FORMAT));
    CKD(cuTexRefSetFormat(t, CU_AD_FORMAT_FLOAT, 1));
    CKD(cuTexRefSetAddressMode(t, 0, CU_TR_ADDRESS_MODE_CLAMP));
    CKD(cuTexRefSetAddressMode(t, 1, CU_TR_ADDRESS_MODE_CLAMP));
    CKD(cuTexRefSetFilterMode(t, CU_TR_FILTER_MODE_POINT));
    CKD(cuTexRefSetFlags(t, 0));
    CUarray ga = NULL;
    CKD(cuTexRefGetArray(&ga, t));
    printf("array_get_array_same=%d\n", ga == a);
    EXPECT(ga == a, "cuTexRefGetArray names another array");
    CUarray_format fmt;
    int nch = 0;
    CKD(cuTexRefGetFormat(&fmt, &nch, t));
    printf("array_format=%d channels=%d\n", (int)fmt, nch);
    EXPECT(fmt == CU_AD_FORMAT_FLOAT && nch == 1, "format %d x %d", (int)fmt, nch);
    CUaddress_mode am;
    CKD(cuTexRefGetAddressMode(&am, t, 1));
    CUfilter_mode fm;
    CKD(cuTexRefGetFilterMode(&fm, t));
    printf("array_address_mode=%d filter_mode=%d\n", (int)am, (int)fm);

    CUdeviceptr dout;
    CKD(cuMemAlloc(&dout, sizeof out));
    CKD(cuMemsetD32(dout, 0, sizeof out / 4));
    void *args[] = {&dout, (void *)&w, (void *)&h};
    CKD(cuLaunchKernel(f, blocks(ow * h), 1, 1, 128, 1, 1, 0, NULL, args, NULL));
    CKD(cuCtxSynchronize());
    CKD(cuMemcpyDtoH(out, dout, sizeof out));
    int bad = 0;
    double sum = 0;
    for (unsigned y = 0; y < h; y++)
        for (unsigned i = 0; i < ow; i++) {
            float want = host[y][clampi((int)i - 2, 0, (int)w - 1)];
            bad += out[y * ow + i] != want;
            sum += out[y * ow + i];
        }
    printf("array_texture_bad=%d sum=%.1f\n", bad, sum);
    EXPECT(bad == 0, "array texture: %d wrong", bad);
    CKD(cuMemFree(dout));
    CKD(cuArrayDestroy(a));
}

// Linear memory bound with cuTexRefSetAddress, read with tex.1d, launched
// through the legacy execution control.
static void linear_texture(CUmodule mod)
{
    const unsigned n = 1000;
    CUtexref t;
    CUfunction f;
    CKD(cuModuleGetTexRef(&t, mod, "tex_lin"));
    CKD(cuModuleGetFunction(&f, mod, "tex_lin_k"));
    int *host = (int *)malloc(n * 4), *out = (int *)malloc(n * 4);
    for (unsigned i = 0; i < n; i++)
        host[i] = (int)(i * 7) - 500;
    CUdeviceptr din, dout;
    CKD(cuMemAlloc(&din, n * 4));
    CKD(cuMemAlloc(&dout, n * 4));
    CKD(cuMemcpyHtoD(din, host, n * 4));
    CKD(cuTexRefSetFormat(t, CU_AD_FORMAT_SIGNED_INT32, 1));
    CKD(cuTexRefSetFlags(t, CU_TRSF_READ_AS_INTEGER));
    size_t off = 99;
    CKD(cuTexRefSetAddress(&off, t, din, n * 4));
    printf("linear_byte_offset=%zu\n", off);
    EXPECT(off == 0, "an allocation's own address has offset %zu", off);
    CUdeviceptr got = 0;
    CKD(cuTexRefGetAddress(&got, t));
    printf("linear_get_address_same=%d\n", got == din);
    EXPECT(got == din, "cuTexRefGetAddress differs");
    unsigned flags = 0;
    CKD(cuTexRefGetFlags(&flags, t));
    printf("linear_flags=%u\n", flags);
    EXPECT(flags == CU_TRSF_READ_AS_INTEGER, "flags %u", flags);

    CKD(cuFuncSetBlockShape(f, 128, 1, 1));
    CKD(cuParamSetv(f, 0, &dout, sizeof dout));
    CKD(cuParamSeti(f, 8, n));
    CKD(cuParamSetSize(f, 12));
    CKD(cuParamSetTexRef(f, CU_PARAM_TR_DEFAULT, t));
    CKD(cuLaunchGrid(f, (int)blocks(n), 1));
    CKD(cuCtxSynchronize());
    CKD(cuMemcpyDtoH(out, dout, n * 4));
    int bad = 0;
    long long sum = 0;
    for (unsigned i = 0; i < n; i++) {
        bad += out[i] != host[i] * 3 + 1;
        sum += out[i];
    }
    printf("linear_texture_bad=%d sum=%lld\n", bad, sum);
    EXPECT(bad == 0, "linear texture: %d wrong", bad);
    CKD(cuMemFree(din));
    CKD(cuMemFree(dout));
    free(host);
    free(out);
}

// Pitched memory bound with cuTexRefSetAddress2D, read halfway between
// texels with linear filtering (weights of 1/2: exact), the last column clamped.
static void pitch_texture(CUmodule mod)
{
    const unsigned w = 40, h = 12;
    CUtexref t;
    CUfunction f;
    CKD(cuModuleGetTexRef(&t, mod, "tex_p"));
    CKD(cuModuleGetFunction(&f, mod, "tex_pitch_k"));
    float host[12][40], out[12 * 40];
    for (unsigned y = 0; y < h; y++)
        for (unsigned x = 0; x < w; x++)
            host[y][x] = (float)((x * 3 + y * 7) % 50);
    CUdeviceptr dp, dout;
    size_t pitch = 0;
    CKD(cuMemAllocPitch(&dp, &pitch, w * 4, h, 4));
    CUDA_MEMCPY2D c;
    memset(&c, 0, sizeof c);
    c.srcMemoryType = CU_MEMORYTYPE_HOST;
    c.srcHost = host;
    c.srcPitch = w * 4;
    c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    c.dstDevice = dp;
    c.dstPitch = pitch;
    c.WidthInBytes = w * 4;
    c.Height = h;
    CKD(cuMemcpy2D(&c));
    CUDA_ARRAY_DESCRIPTOR d;
    memset(&d, 0, sizeof d);
    d.Width = w;
    d.Height = h;
    d.Format = CU_AD_FORMAT_FLOAT;
    d.NumChannels = 1;
    CKD(cuTexRefSetAddress2D(t, &d, dp, pitch));
    CKD(cuTexRefSetAddressMode(t, 0, CU_TR_ADDRESS_MODE_CLAMP));
    CKD(cuTexRefSetAddressMode(t, 1, CU_TR_ADDRESS_MODE_CLAMP));
    CKD(cuTexRefSetFilterMode(t, CU_TR_FILTER_MODE_LINEAR));
    CKD(cuTexRefSetFlags(t, 0));
    CUdeviceptr got = 0;
    CKD(cuTexRefGetAddress(&got, t));
    printf("pitch_get_address_same=%d\n", got == dp);
    EXPECT(got == dp, "cuTexRefGetAddress differs");

    CKD(cuMemAlloc(&dout, sizeof out));
    void *args[] = {&dout, (void *)&w, (void *)&h};
    CKD(cuLaunchKernel(f, blocks(w * h), 1, 1, 128, 1, 1, 0, NULL, args, NULL));
    CKD(cuCtxSynchronize());
    CKD(cuMemcpyDtoH(out, dout, sizeof out));
    int bad = 0;
    double sum = 0;
    for (unsigned y = 0; y < h; y++)
        for (unsigned x = 0; x < w; x++) {
            float want = (host[y][x] + host[y][x + 1 < w ? x + 1 : w - 1]) / 2;
            bad += fabsf(out[y * w + x] - want) > 1e-3f;
            sum += want;
        }
    printf("pitch_texture_bad=%d sum=%.1f\n", bad, sum);
    EXPECT(bad == 0, "pitch2D texture: %d wrong", bad);
    CKD(cuMemFree(dp));
    CKD(cuMemFree(dout));
}

// A surface array written by one kernel, read back by a copy and by another.
static void surface(CUmodule mod)
{
    const unsigned w = 32, h = 16;
    CUsurfref s;
    CUfunction fw, fr;
    CKD(cuModuleGetSurfRef(&s, mod, "surf_out"));
    CKD(cuModuleGetFunction(&fw, mod, "surf_write_k"));
    CKD(cuModuleGetFunction(&fr, mod, "surf_read_k"));
    CUarray a = array2d(w, h, CU_AD_FORMAT_UNSIGNED_INT32, CUDA_ARRAY3D_SURFACE_LDST);
    CKD(cuSurfRefSetArray(s, a, 0));
    CUarray ga = NULL;
    CKD(cuSurfRefGetArray(&ga, s));
    printf("surface_get_array_same=%d\n", ga == a);
    EXPECT(ga == a, "cuSurfRefGetArray names another array");
    void *wargs[] = {(void *)&w, (void *)&h};
    CKD(cuLaunchKernel(fw, blocks(w * h), 1, 1, 128, 1, 1, 0, NULL, wargs, NULL));
    CKD(cuCtxSynchronize());
    unsigned host[16][32], out[16 * 32];
    copy_host_array(a, host, w * 4, h, 0);
    CUdeviceptr dout;
    CKD(cuMemAlloc(&dout, sizeof out));
    void *rargs[] = {&dout, (void *)&w, (void *)&h};
    CKD(cuLaunchKernel(fr, blocks(w * h), 1, 1, 128, 1, 1, 0, NULL, rargs, NULL));
    CKD(cuCtxSynchronize());
    CKD(cuMemcpyDtoH(out, dout, sizeof out));
    int bad_copy = 0, bad_read = 0;
    for (unsigned y = 0; y < h; y++)
        for (unsigned x = 0; x < w; x++) {
            bad_copy += host[y][x] != x * 1000 + y;
            bad_read += out[y * w + x] != x * 1000 + y + 1;
        }
    printf("surface_write_bad=%d read_bad=%d checksum=%016llx\n", bad_copy, bad_read,
           (unsigned long long)fnv1a(host, sizeof host));
    EXPECT(bad_copy == 0 && bad_read == 0, "surface: %d written, %d read wrong", bad_copy, bad_read);
    CKD(cuMemFree(dout));
    CKD(cuArrayDestroy(a));
}

// A reference of the program's own: what is set comes back.
static void created_reference(void)
{
    CUtexref t;
    CKD(cuTexRefCreate(&t));
    CKD(cuTexRefSetFormat(t, CU_AD_FORMAT_UNSIGNED_INT16, 2));
    CKD(cuTexRefSetAddressMode(t, 0, CU_TR_ADDRESS_MODE_MIRROR));
    CKD(cuTexRefSetFilterMode(t, CU_TR_FILTER_MODE_LINEAR));
    CKD(cuTexRefSetFlags(t, CU_TRSF_NORMALIZED_COORDINATES));
    float border[4] = {0.25f, 0.5f, 0.75f, 1.0f}, bgot[4] = {0, 0, 0, 0};
    CKD(cuTexRefSetBorderColor(t, border));
    CUarray_format fmt;
    int nch = 0;
    CUaddress_mode am;
    CUfilter_mode fm;
    unsigned flags = 0;
    CKD(cuTexRefGetFormat(&fmt, &nch, t));
    CKD(cuTexRefGetAddressMode(&am, t, 0));
    CKD(cuTexRefGetFilterMode(&fm, t));
    CKD(cuTexRefGetFlags(&flags, t));
    CKD(cuTexRefGetBorderColor(bgot, t));
    printf("created format=%d channels=%d address_mode=%d filter=%d flags=%u border=%.2f,%.2f,%.2f,%.2f\n",
           (int)fmt, nch, (int)am, (int)fm, flags, bgot[0], bgot[1], bgot[2], bgot[3]);
    EXPECT(fmt == CU_AD_FORMAT_UNSIGNED_INT16 && nch == 2, "format %d x %d", (int)fmt, nch);
    EXPECT(am == CU_TR_ADDRESS_MODE_MIRROR && fm == CU_TR_FILTER_MODE_LINEAR, "modes %d %d", (int)am, (int)fm);
    EXPECT(flags == CU_TRSF_NORMALIZED_COORDINATES, "flags %u", flags);
    EXPECT(!memcmp(border, bgot, sizeof border), "border colour differs");
    // Bound to nothing: the driver's answer, printed (not judged) so both
    // ways must agree.
    CUarray ga;
    printf("created_unbound_get_array=%s\n", drv_err_name(cuTexRefGetArray(&ga, t)));
    CKD(cuTexRefDestroy(t));
}

int main(void)
{
    CKD(cuInit(0));
    CUdevice dev;
    CKD(cuDeviceGet(&dev, 0));
    CUcontext ctx;
    CKD(cuDevicePrimaryCtxRetain(&ctx, dev));
    CKD(cuCtxSetCurrent(ctx));

    CUmodule mod;
    CKD(cuModuleLoadData(&mod, k_ptx));
    CUtexref none;
    CKD_EXPECT(cuModuleGetTexRef(&none, mod, "no_such_texref"), CUDA_ERROR_NOT_FOUND);
    CUsurfref snone;
    CKD_EXPECT(cuModuleGetSurfRef(&snone, mod, "tex_arr"), CUDA_ERROR_NOT_FOUND);
    CUtexref t1, t2;
    CKD(cuModuleGetTexRef(&t1, mod, "tex_arr"));
    CKD(cuModuleGetTexRef(&t2, mod, "tex_arr"));
    printf("module_texref_stable=%d\n", t1 == t2);
    EXPECT(t1 == t2, "two handles for one texture reference");

    array_texture(mod);
    linear_texture(mod);
    pitch_texture(mod);
    surface(mod);
    created_reference();

    CKD(cuModuleUnload(mod));
    CKD(cuDevicePrimaryCtxRelease(dev));
    return finish();
}
