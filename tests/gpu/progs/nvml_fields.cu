// NVML as frameworks ask it beside CUDA: the device of CUDA ordinal 0 found
// by its PCI bus id, field values of the kind NCCL and XLA read (NVLink link
// count, each link's state and version, C2C links) and an unknown field in
// one call, and the NVLink fabric state XLA asks on Hopper. libnvidia-ml.so.1
// is loaded at run time, as frameworks do: through vcuda it is the guest's.
// The fields are the GPU's own and do not move while the program runs, so
// the output is the same natively and through vcuda; the fabric state is
// printed only as "a state NVML defines" (a VM's GPU is in no fabric).
#include <dlfcn.h>

#include "common.h"

// The part of nvml.h this program uses (layouts as NVIDIA's public header).
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef union {
    double dVal;
    int siVal;
    unsigned int uiVal;
    unsigned long ulVal;
    unsigned long long ullVal;
    long long sllVal;
} nvmlValue_t;
typedef struct {
    unsigned int fieldId;
    unsigned int scopeId;
    long long timestamp;
    long long latencyUsec;
    unsigned int valueType;
    int nvmlReturn;
    nvmlValue_t value;
} nvmlFieldValue_t;
typedef struct {
    unsigned int version;
    unsigned char clusterUuid[16];
    int status;
    unsigned int cliqueId;
    unsigned char state;
    unsigned int healthMask;
    unsigned char healthSummary;
} nvmlGpuFabricInfoV_t;
static_assert(sizeof(nvmlFieldValue_t) == 40, "nvmlFieldValue_t");
static_assert(sizeof(nvmlGpuFabricInfoV_t) == 40, "nvmlGpuFabricInfo_v3_t");

enum { FI_NVLINK_LINK_COUNT = 91, FI_NVLINK_GET_STATE = 165, FI_NVLINK_GET_VERSION = 166,
       FI_C2C_LINK_COUNT = 170, FI_UNKNOWN = 60000, LINKS = 18 };

typedef int (*init_fn)(void);
typedef int (*by_bus_fn)(const char *, nvmlDevice_t *);
typedef int (*fields_fn)(nvmlDevice_t, int, nvmlFieldValue_t *);
typedef int (*fabric_fn)(nvmlDevice_t, nvmlGpuFabricInfoV_t *);

template <typename T> static T sym(void *h, const char *name)
{
    void *p = dlsym(h, name);
    if (!p)
        fail_now("libnvidia-ml.so.1 has no %s", name);
    T f;
    memcpy(&f, &p, sizeof p);
    return f;
}

// An integer value as its type says (uiVal, ullVal, sllVal, siVal).
static unsigned long long as_int(const nvmlFieldValue_t &f)
{
    switch (f.valueType) {
    case 1: return f.value.uiVal;
    case 2: return f.value.ulVal;
    case 3: return f.value.ullVal;
    case 4: return (unsigned long long)f.value.sllVal;
    case 5: return (unsigned long long)(long long)f.value.siVal;
    default: return (unsigned long long)f.value.dVal;
    }
}

int main(void)
{
    char bus[32];
    CK(cudaDeviceGetPCIBusId(bus, sizeof bus, 0));
    void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW);
    if (!h)
        fail_now("dlopen libnvidia-ml.so.1: %s", dlerror());
    init_fn init = sym<init_fn>(h, "nvmlInit_v2");
    init_fn shutdown = sym<init_fn>(h, "nvmlShutdown");
    by_bus_fn by_bus = sym<by_bus_fn>(h, "nvmlDeviceGetHandleByPciBusId_v2");
    fields_fn fields = sym<fields_fn>(h, "nvmlDeviceGetFieldValues");
    fabric_fn fabric = sym<fabric_fn>(h, "nvmlDeviceGetGpuFabricInfoV");
    EXPECT(init() == 0, "nvmlInit_v2");
    nvmlDevice_t d = NULL;
    int rc = by_bus(bus, &d);
    printf("handle_by_bus=%d\n", rc);
    if (rc)
        fail_now("no NVML device for CUDA device 0 (%s): %d", bus, rc);

    // One call for every field, as monitors make it.
    nvmlFieldValue_t v[3 + 2 * LINKS];
    memset(v, 0, sizeof v);
    int n = 0;
    v[n++].fieldId = FI_NVLINK_LINK_COUNT;
    v[n++].fieldId = FI_C2C_LINK_COUNT;
    v[n++].fieldId = FI_UNKNOWN;
    for (int l = 0; l < LINKS; l++) {
        v[n].fieldId = FI_NVLINK_GET_STATE;
        v[n++].scopeId = l;
        v[n].fieldId = FI_NVLINK_GET_VERSION;
        v[n++].scopeId = l;
    }
    for (int i = 0; i < n; i++)
        v[i].nvmlReturn = -1;
    rc = fields(d, n, v);
    printf("field_values=%d\n", rc);
    EXPECT(rc == 0, "nvmlDeviceGetFieldValues %d", rc);
    int answered = 0;
    for (int i = 0; i < n; i++) {
        EXPECT(v[i].nvmlReturn >= 0, "field %u scope %u: no code", v[i].fieldId, v[i].scopeId);
        printf("field %u scope %u: ret %d", v[i].fieldId, v[i].scopeId, v[i].nvmlReturn);
        if (v[i].nvmlReturn == 0) {
            answered++;
            printf(" type %u value %llu", v[i].valueType, as_int(v[i]));
            EXPECT(v[i].timestamp > 0, "field %u: no timestamp", v[i].fieldId);
        }
        printf("\n");
    }
    EXPECT(v[2].nvmlReturn != 0, "an unknown field answered");
    // NCCL's way: one link's state at a time.
    nvmlFieldValue_t one;
    memset(&one, 0, sizeof one);
    one.fieldId = FI_NVLINK_GET_STATE;
    rc = fields(d, 1, &one);
    EXPECT(rc == 0 && one.nvmlReturn == v[3].nvmlReturn, "one field: %d / %d", rc, one.nvmlReturn);
    EXPECT(fields(d, 1, NULL) == 2, "NULL values not INVALID_ARGUMENT");
    printf("answered_gt_0=%d\n", answered > 0);

    nvmlGpuFabricInfoV_t fi;
    memset(&fi, 0, sizeof fi);
    fi.version = (unsigned)sizeof fi | (3u << 24);
    rc = fabric(d, &fi);
    printf("fabric_info=%d\n", rc);
    EXPECT(rc == 0, "nvmlDeviceGetGpuFabricInfoV %d", rc);
    printf("fabric_state_defined=%d\n", fi.state <= 3);
    fi.version = 7;
    EXPECT(fabric(d, &fi) == 25, "a bad version not ARGUMENT_VERSION_MISMATCH");
    EXPECT(shutdown() == 0, "nvmlShutdown");
    return finish();
}
