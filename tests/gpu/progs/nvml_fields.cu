// NVML as frameworks ask it beside CUDA: the device of CUDA ordinal 0 found
// by its PCI bus id, field values of the kind NCCL and XLA read (NVLink link
// count, each link's state and version, C2C links) and an unknown field in
// one call, each NVLink's state, version, P2P capability and far end as NCCL
// reads them, and the NVLink fabric state XLA asks on Hopper. libnvidia-ml.so.1
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
typedef int (*link_fn)(nvmlDevice_t, unsigned, unsigned *);
typedef int (*cap_fn)(nvmlDevice_t, unsigned, unsigned, unsigned *);
typedef int (*remote_fn)(nvmlDevice_t, unsigned, void *);

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

    // Link by link, as NCCL builds its topology: P2P capability, state,
    // far end (nvmlPciInfo_t: busId at offset 36), and the version.
    link_fn state = sym<link_fn>(h, "nvmlDeviceGetNvLinkState");
    link_fn version = sym<link_fn>(h, "nvmlDeviceGetNvLinkVersion");
    cap_fn cap = sym<cap_fn>(h, "nvmlDeviceGetNvLinkCapability");
    remote_fn remote = sym<remote_fn>(h, "nvmlDeviceGetNvLinkRemotePciInfo");
    int up = 0;
    for (unsigned l = 0; l < LINKS; l++) {
        unsigned st = 9, ver = 0, p2p = 9;
        unsigned char pci[68];
        memset(pci, 0, sizeof pci);
        int rs = state(d, l, &st), rv = version(d, l, &ver), rc2 = cap(d, l, 0, &p2p), rr = remote(d, l, pci);
        printf("link %u: state %d/%u version %d/%u p2p %d/%u remote %d/%.32s\n", l, rs, rs ? 9 : st, rv, rv ? 0 : ver,
               rc2, rc2 ? 9 : p2p, rr, rr ? "-" : (const char *)pci + 36);
        up += rs == 0 && st == 1;
    }
    printf("links_up=%d\n", up);
    // The layouts: the unversioned names write the first nvmlPciInfo_t
    // (52 bytes: legacy bus id, ids, reserved words), the _v2/_v3 names
    // the 68-byte one; bytes past what is written keep their 0xEE.
    remote_fn remote2 = sym<remote_fn>(h, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
    typedef int (*pci_fn)(nvmlDevice_t, void *);
    pci_fn pci0 = sym<pci_fn>(h, "nvmlDeviceGetPciInfo");
    pci_fn pci3 = sym<pci_fn>(h, "nvmlDeviceGetPciInfo_v3");
    const char *names[] = {"remote link 0", "remote_v2 link 0", "pci", "pci_v3"};
    for (int k = 0; k < 4; k++) {
        unsigned char b[80];
        memset(b, 0xEE, sizeof b);
        int r = k == 0 ? remote(d, 0, b) : k == 1 ? remote2(d, 0, b) : k == 2 ? pci0(d, b) : pci3(d, b);
        int end = (int)sizeof b;
        while (end > 0 && b[end - 1] == 0xEE)
            end--;
        if (r)
            printf("%s: %d\n", names[k], r);
        else
            printf("%s: %d, written %d, [0] %.16s, [36] %.32s\n", names[k], r, end, (const char *)b,
                   end > 36 ? (const char *)b + 36 : "-");
    }

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
