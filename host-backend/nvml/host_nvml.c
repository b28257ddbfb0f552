/* SPDX-License-Identifier: MIT */
/*
 * host_nvml.c - the host's NVML, loaded at run time (dlopen), queried by
 * name through a table of entry points grouped by their shape: every value
 * the guest may ask for (enum vc_nv_query) is one NVML entry point with a
 * device and at most two enum arguments, and outputs of a few fixed forms.
 * No nvml.h here: the shapes follow NVIDIA's public nvml.h (nvmlDevice_t an
 * opaque pointer, enums int-sized, outputs unsigned int or unsigned long
 * long, nvmlUtilization_t two unsigned ints, nvmlBAR1Memory_t three
 * unsigned long longs, nvmlPciInfo_t 68 bytes with its ids at offsets 28
 * and 32, nvmlFieldValue_t 40 bytes: fieldId, scopeId, timestamp,
 * latencyUsec, valueType, nvmlReturn, an 8-byte value).
 *
 * Never the guest's own library: a server started with the guest's
 * directory in its library path would otherwise load the vcuda
 * libnvidia-ml.so.1 and ask itself; a library exporting vcNvmlGuestLibrary
 * is refused.
 */
#include "nvml/host_nvml.h"

#include <assert.h>
#include <stdbool.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

typedef struct nvml_dev *ndev_t;
typedef int (*fn_init)(void);
typedef int (*fn_str)(char *, unsigned);
typedef int (*fn_handle)(const char *, ndev_t *);
typedef int (*fn_u1)(ndev_t, unsigned *);
typedef int (*fn_u2)(ndev_t, unsigned *, unsigned *);
typedef int (*fn_u3)(ndev_t, unsigned *, unsigned *, unsigned *);
typedef int (*fn_u4)(ndev_t, unsigned *, unsigned *, unsigned *, unsigned *);
typedef int (*fn_a_u1)(ndev_t, unsigned, unsigned *);
typedef int (*fn_a2_u1)(ndev_t, unsigned, unsigned, unsigned *);
typedef int (*fn_a_buf)(ndev_t, unsigned, void *);
typedef int (*fn_a2_ull)(ndev_t, unsigned, unsigned, unsigned long long *);
typedef int (*fn_ull)(ndev_t, unsigned long long *);
typedef int (*fn_buf)(ndev_t, void *);
typedef int (*fn_dstr)(ndev_t, char *, unsigned);
typedef int (*fn_p2p)(ndev_t, ndev_t, unsigned, unsigned *);
typedef int (*fn_fields)(ndev_t, int, void *);
typedef int (*fn_a3_ull)(ndev_t, unsigned, unsigned, unsigned, unsigned long long *);
typedef int (*fn_a_dstr)(ndev_t, unsigned, char *, unsigned);
typedef int (*fn_bufstr)(ndev_t, char *);
typedef int (*fn_none)(ndev_t);

/* nvmlFieldValue_t as nvml.h lays it out. */
struct field_value {
	uint32_t field_id, scope_id;
	int64_t timestamp, latency_us;
	int32_t value_type, ret;
	uint64_t value;
};
static_assert(sizeof(struct field_value) == 40, "nvmlFieldValue_t");

enum shape { U1 = 1, U2, U3, U4, A_U1, A2_U1, A2_ULL, ULL, UTIL, BAR1, PCI, A_PCI, STR, FIELD, A3_ULL, A_STR, STR64, NONE, RAW };

/* nvmlDeviceGetGspFirmwareVersion's buffer (NVML_GSP_FIRMWARE_VERSION_BUF_SIZE). */
#define GSP_VERSION_BUF 64

static const struct {
	uint32_t q;
	enum shape shape;
	const char *name;
} g_table[] = {
	{VC_NV_UTILIZATION, UTIL, "nvmlDeviceGetUtilizationRates"},
	{VC_NV_TEMPERATURE, A_U1, "nvmlDeviceGetTemperature"},
	{VC_NV_TEMP_THRESHOLD, A_U1, "nvmlDeviceGetTemperatureThreshold"},
	{VC_NV_FAN_SPEED, U1, "nvmlDeviceGetFanSpeed"},
	{VC_NV_POWER_USAGE, U1, "nvmlDeviceGetPowerUsage"},
	{VC_NV_POWER_LIMIT, U1, "nvmlDeviceGetPowerManagementLimit"},
	{VC_NV_POWER_DEFAULT_LIMIT, U1, "nvmlDeviceGetPowerManagementDefaultLimit"},
	{VC_NV_POWER_ENFORCED_LIMIT, U1, "nvmlDeviceGetEnforcedPowerLimit"},
	{VC_NV_POWER_CONSTRAINTS, U2, "nvmlDeviceGetPowerManagementLimitConstraints"},
	{VC_NV_TOTAL_ENERGY, ULL, "nvmlDeviceGetTotalEnergyConsumption"},
	{VC_NV_PERF_STATE, U1, "nvmlDeviceGetPerformanceState"},
	{VC_NV_POWER_STATE, U1, "nvmlDeviceGetPowerState"},
	{VC_NV_PERSISTENCE, U1, "nvmlDeviceGetPersistenceMode"},
	{VC_NV_COMPUTE_MODE, U1, "nvmlDeviceGetComputeMode"},
	{VC_NV_DISPLAY_MODE, U1, "nvmlDeviceGetDisplayMode"},
	{VC_NV_DISPLAY_ACTIVE, U1, "nvmlDeviceGetDisplayActive"},
	{VC_NV_ECC_MODE, U2, "nvmlDeviceGetEccMode"},
	{VC_NV_ECC_TOTAL, A2_ULL, "nvmlDeviceGetTotalEccErrors"},
	{VC_NV_MIG_MODE, U2, "nvmlDeviceGetMigMode"},
	{VC_NV_CLOCK, A_U1, "nvmlDeviceGetClockInfo"},
	{VC_NV_MAX_CLOCK, A_U1, "nvmlDeviceGetMaxClockInfo"},
	{VC_NV_APP_CLOCK, A_U1, "nvmlDeviceGetApplicationsClock"},
	{VC_NV_CLOCK_EVENTS, ULL, "nvmlDeviceGetCurrentClocksEventReasons"},
	{VC_NV_THROTTLE_REASONS, ULL, "nvmlDeviceGetCurrentClocksThrottleReasons"},
	{VC_NV_BRAND, U1, "nvmlDeviceGetBrand"},
	{VC_NV_ARCHITECTURE, U1, "nvmlDeviceGetArchitecture"},
	{VC_NV_PCIE_GEN, U1, "nvmlDeviceGetCurrPcieLinkGeneration"},
	{VC_NV_PCIE_MAX_GEN, U1, "nvmlDeviceGetMaxPcieLinkGeneration"},
	{VC_NV_PCIE_WIDTH, U1, "nvmlDeviceGetCurrPcieLinkWidth"},
	{VC_NV_PCIE_MAX_WIDTH, U1, "nvmlDeviceGetMaxPcieLinkWidth"},
	{VC_NV_ENCODER_UTIL, U2, "nvmlDeviceGetEncoderUtilization"},
	{VC_NV_DECODER_UTIL, U2, "nvmlDeviceGetDecoderUtilization"},
	{VC_NV_BAR1, BAR1, "nvmlDeviceGetBAR1MemoryInfo"},
	{VC_NV_PCI_IDS, PCI, "nvmlDeviceGetPciInfo_v3"},
	{VC_NV_SERIAL, STR, "nvmlDeviceGetSerial"},
	{VC_NV_VBIOS, STR, "nvmlDeviceGetVbiosVersion"},
	{VC_NV_BOARD_PART, STR, "nvmlDeviceGetBoardPartNumber"},
	{VC_NV_NUM_CORES, U1, "nvmlDeviceGetNumGpuCores"},
	{VC_NV_BUS_WIDTH, U1, "nvmlDeviceGetMemoryBusWidth"},
	{VC_NV_FIELD, FIELD, "nvmlDeviceGetFieldValues"},
	{VC_NV_NVLINK_STATE, A_U1, "nvmlDeviceGetNvLinkState"},
	{VC_NV_NVLINK_VERSION, A_U1, "nvmlDeviceGetNvLinkVersion"},
	{VC_NV_NVLINK_CAP, A2_U1, "nvmlDeviceGetNvLinkCapability"},
	{VC_NV_NVLINK_REMOTE_TYPE, A_U1, "nvmlDeviceGetNvLinkRemoteDeviceType"},
	{VC_NV_NVLINK_REMOTE_PCI, A_PCI, "nvmlDeviceGetNvLinkRemotePciInfo_v2"},
	{VC_NV_PCIE_REPLAY, U1, "nvmlDeviceGetPcieReplayCounter"},
	{VC_NV_PCIE_MAX_SPEED, U1, "nvmlDeviceGetPcieLinkMaxSpeed"},
	{VC_NV_PCIE_SPEED, U1, "nvmlDeviceGetPcieSpeed"},
	{VC_NV_PCIE_THROUGHPUT, A_U1, "nvmlDeviceGetPcieThroughput"},
	{VC_NV_NUM_FANS, U1, "nvmlDeviceGetNumFans"},
	{VC_NV_FAN_SPEED_OF, A_U1, "nvmlDeviceGetFanSpeed_v2"},
	{VC_NV_TARGET_FAN_SPEED, A_U1, "nvmlDeviceGetTargetFanSpeed"},
	{VC_NV_MIN_MAX_FAN, U2, "nvmlDeviceGetMinMaxFanSpeed"},
	{VC_NV_POWER_SOURCE, U1, "nvmlDeviceGetPowerSource"},
	{VC_NV_MULTI_GPU_BOARD, U1, "nvmlDeviceGetMultiGpuBoard"},
	{VC_NV_BOARD_ID, U1, "nvmlDeviceGetBoardId"},
	{VC_NV_BUS_TYPE, U1, "nvmlDeviceGetBusType"},
	{VC_NV_ADAPTIVE_CLOCK, U1, "nvmlDeviceGetAdaptiveClockInfoStatus"},
	{VC_NV_CLOCK_OF, A2_U1, "nvmlDeviceGetClock"},
	{VC_NV_MAX_BOOST_CLOCK, A_U1, "nvmlDeviceGetMaxCustomerBoostClock"},
	{VC_NV_AUTO_BOOST, U2, "nvmlDeviceGetAutoBoostedClocksEnabled"},
	{VC_NV_GSP_MODE, U2, "nvmlDeviceGetGspFirmwareMode"},
	{VC_NV_JPG_UTIL, U2, "nvmlDeviceGetJpgUtilization"},
	{VC_NV_OFA_UTIL, U2, "nvmlDeviceGetOfaUtilization"},
	{VC_NV_ENCODER_CAPACITY, A_U1, "nvmlDeviceGetEncoderCapacity"},
	{VC_NV_ENCODER_STATS, U3, "nvmlDeviceGetEncoderStats"},
	{VC_NV_REMAPPED_ROWS, U4, "nvmlDeviceGetRemappedRows"},
	{VC_NV_INFOROM_IMAGE, STR, "nvmlDeviceGetInforomImageVersion"},
	{VC_NV_SUPPORTED_CLOCK_EVENTS, ULL, "nvmlDeviceGetSupportedClocksEventReasons"},
	{VC_NV_SUPPORTED_THROTTLE, ULL, "nvmlDeviceGetSupportedClocksThrottleReasons"},
	{VC_NV_GPU_MAX_PCIE_GEN, U1, "nvmlDeviceGetGpuMaxPcieLinkGeneration"},
	{VC_NV_ACCOUNTING_MODE, U1, "nvmlDeviceGetAccountingMode"},
	{VC_NV_ACCOUNTING_BUFFER, U1, "nvmlDeviceGetAccountingBufferSize"},
	{VC_NV_MODULE_ID, U1, "nvmlDeviceGetModuleId"},
	{VC_NV_DEFAULT_APP_CLOCK, A_U1, "nvmlDeviceGetDefaultApplicationsClock"},
	{VC_NV_MEM_ERROR_COUNTER, A3_ULL, "nvmlDeviceGetMemoryErrorCounter"},
	{VC_NV_INFOROM_VERSION, A_STR, "nvmlDeviceGetInforomVersion"},
	{VC_NV_GSP_VERSION, STR64, "nvmlDeviceGetGspFirmwareVersion"},
	{VC_NV_VALIDATE_INFOROM, NONE, "nvmlDeviceValidateInforom"},
	{VC_NV_RAW_FBC_STATS, RAW, "nvmlDeviceGetFBCStats"},
	{VC_NV_RAW_REMAP_HISTOGRAM, RAW, "nvmlDeviceGetRowRemapperHistogram"},
	{VC_NV_RAW_C2C_MODE, RAW, "nvmlDeviceGetC2cModeInfoV"},
	{VC_NV_RAW_SRAM_ECC, RAW, "nvmlDeviceGetSramEccErrorStatus"},
	{VC_NV_RAW_PDI, RAW, "nvmlDeviceGetPdi"},
	{VC_NV_RAW_ADDRESSING_MODE, RAW, "nvmlDeviceGetAddressingMode"},
	{VC_NV_RAW_CAPABILITIES, RAW, "nvmlDeviceGetCapabilities"},
	{VC_NV_RAW_MARGIN_TEMP, RAW, "nvmlDeviceGetMarginTemperature"},
	{VC_NV_RAW_REPAIR_STATUS, RAW, "nvmlDeviceGetRepairStatus"},
	{VC_NV_RAW_PCI_INFO_EXT, RAW, "nvmlDeviceGetPciInfoExt"},
	{VC_NV_RAW_REMAPPED_ROWS, RAW, "nvmlDeviceGetRemappedRows_v2"},
	{VC_NV_RAW_UNREPAIRABLE, RAW, "nvmlDeviceGetUnrepairableMemoryFlag_v1"},
};
static_assert(sizeof(((struct vc_nv_rep_value *)0)->s) >= GSP_VERSION_BUF, "the GSP version fits");

/* A struct query's size and version word from the guest (@arg0, @arg1):
 * within the reply, and a version word, when given, of that size. */
static bool raw_ok(const uint32_t arg[2])
{
	if (arg[0] == 0 || arg[0] > sizeof(((struct vc_nv_rep_value *)0)->s))
		return false;
	return arg[1] == 0 || ((arg[1] & 0xffffffu) == arg[0] && (arg[1] >> 24) != 0);
}

static const char *g_lib;
static void *g_dl;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

void vc_host_nvml_configure(const char *lib)
{
	g_lib = lib;
}

/* dlsym into a function pointer of any type (C11 has no cast between object
 * and function pointers). */
#define SYM(dst, name)                                        \
	do {                                                  \
		void *p_ = g_dl ? dlsym(g_dl, (name)) : NULL; \
		memcpy(&(dst), &p_, sizeof(p_));              \
	} while (0)

static void load(void)
{
	fn_init init = NULL;
	void *guest;

	if (!g_lib)
		return;
	g_dl = dlopen(g_lib, RTLD_NOW | RTLD_LOCAL);
	if (!g_dl)
		return;
	guest = dlsym(g_dl, "vcNvmlGuestLibrary");
	SYM(init, "nvmlInit_v2");
	if (guest || !init || init() != VC_NVML_SUCCESS) {
		if (guest)
			fprintf(stderr, "vcuda-server: %s is vcuda's guest NVML, not the host's: not used\n", g_lib);
		dlclose(g_dl);
		g_dl = NULL;
	}
}

static void *lib(void)
{
	pthread_once(&g_once, load);
	return g_dl;
}

int vc_host_nvml_system(char *driver, size_t dlen, char *nvml, size_t nlen)
{
	fn_str drv = NULL, ver = NULL;

	if (!lib())
		return -ENOENT;
	SYM(drv, "nvmlSystemGetDriverVersion");
	SYM(ver, "nvmlSystemGetNVMLVersion");
	if (!drv || drv(driver, (unsigned)dlen) != VC_NVML_SUCCESS)
		driver[0] = 0;
	if (!ver || ver(nvml, (unsigned)nlen) != VC_NVML_SUCCESS)
		nvml[0] = 0;
	driver[dlen - 1] = nvml[nlen - 1] = 0;
	return 0;
}

static int device(const char *bus_id, ndev_t *d)
{
	fn_handle h = NULL;

	if (!lib())
		return VC_NVML_ERROR_NOT_SUPPORTED;
	SYM(h, "nvmlDeviceGetHandleByPciBusId_v2");
	if (!h)
		return VC_NVML_ERROR_NOT_SUPPORTED;
	return h(bus_id, d);
}

int vc_host_nvml_memory(const char *bus_id, uint64_t *total, uint64_t *free)
{
	unsigned long long m[3] = {0}; /* nvmlMemory_t: total, free, used */
	fn_buf f = NULL;
	ndev_t d;
	int rc;

	if ((rc = device(bus_id, &d)))
		return rc;
	SYM(f, "nvmlDeviceGetMemoryInfo");
	if (!f)
		return VC_NVML_ERROR_NOT_SUPPORTED;
	if ((rc = f(d, m)))
		return rc;
	*total = m[0];
	*free = m[1];
	return VC_NVML_SUCCESS;
}

int vc_host_nvml_p2p(const char *bus1, const char *bus2, uint32_t index, uint32_t *status)
{
	unsigned st = 0;
	fn_p2p f = NULL;
	ndev_t a, b;
	int rc;

	if ((rc = device(bus1, &a)) || (rc = device(bus2, &b)))
		return rc;
	SYM(f, "nvmlDeviceGetP2PStatus");
	if (!f)
		return VC_NVML_ERROR_NOT_SUPPORTED;
	if ((rc = f(a, b, index, &st)))
		return rc;
	*status = st;
	return VC_NVML_SUCCESS;
}

void vc_host_nvml_value(const char *bus_id, uint32_t q, const uint32_t arg[2], struct vc_nv_rep_value *out)
{
	unsigned u[4] = {0};
	unsigned long long ull[3] = {0};
	unsigned char pci[68] = {0}; /* nvmlPciInfo_t (v3) */
	struct field_value fv = {.field_id = arg[0], .scope_id = arg[1]};
	void *fp = NULL;
	ndev_t d;
	size_t i;
	int rc;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < sizeof(g_table) / sizeof(g_table[0]); i++)
		if (g_table[i].q == q)
			break;
	if (i == sizeof(g_table) / sizeof(g_table[0])) {
		out->status = VC_NVML_ERROR_INVALID_ARGUMENT;
		return;
	}
	if ((rc = device(bus_id, &d))) {
		out->status = rc;
		return;
	}
	fp = dlsym(g_dl, g_table[i].name);
	if (!fp) {
		out->status = VC_NVML_ERROR_NOT_SUPPORTED;
		return;
	}
#define CALL(type, ...)                              \
	do {                                         \
		type f_;                             \
		memcpy(&f_, &fp, sizeof(fp));        \
		rc = f_(__VA_ARGS__);                \
	} while (0)
	switch (g_table[i].shape) {
	case U1: CALL(fn_u1, d, &u[0]); break;
	case U2: CALL(fn_u2, d, &u[0], &u[1]); break;
	case U3: CALL(fn_u3, d, &u[0], &u[1], &u[2]); break;
	case U4: CALL(fn_u4, d, &u[0], &u[1], &u[2], &u[3]); break;
	case UTIL: CALL(fn_buf, d, u); break;
	case A_U1: CALL(fn_a_u1, d, arg[0], &u[0]); break;
	case A2_U1: CALL(fn_a2_u1, d, arg[0], arg[1], &u[0]); break;
	case A_PCI: CALL(fn_a_buf, d, arg[0], pci); break;
	case A2_ULL: CALL(fn_a2_ull, d, arg[0], arg[1], &ull[0]); break;
	case ULL: CALL(fn_ull, d, &ull[0]); break;
	case BAR1: CALL(fn_buf, d, ull); break;
	case PCI: CALL(fn_buf, d, pci); break;
	case STR: CALL(fn_dstr, d, out->s, (unsigned)sizeof(out->s)); break;
	/* One field a call: the field's own code is its status. */
	case FIELD:
		CALL(fn_fields, d, 1, &fv);
		if (rc == VC_NVML_SUCCESS)
			rc = fv.ret;
		break;
	case A3_ULL: CALL(fn_a3_ull, d, arg[0], arg[1] & 0xffffu, arg[1] >> 16, &ull[0]); break;
	case A_STR: CALL(fn_a_dstr, d, arg[0], out->s, (unsigned)sizeof(out->s)); break;
	case STR64: CALL(fn_bufstr, d, out->s); break;
	case NONE: CALL(fn_none, d); break;
	case RAW:
		/* The host's NVML checks the version word; the guest's size must
		 * be the one that word names, and fit the reply. */
		if (!raw_ok(arg)) {
			rc = VC_NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
			break;
		}
		memcpy(out->s, &arg[1], arg[1] ? sizeof(arg[1]) : 0);
		CALL(fn_buf, d, out->s);
		break;
	}
#undef CALL
	out->status = rc;
	if (rc != VC_NVML_SUCCESS) {
		memset(out->s, 0, sizeof(out->s));
		return;
	}
	switch (g_table[i].shape) {
	case U1: case U2: case U3: case U4: case UTIL: case A_U1: case A2_U1:
		for (int k = 0; k < 4; k++)
			out->v[k] = u[k];
		break;
	case A2_ULL: case ULL: case BAR1: case A3_ULL:
		for (int k = 0; k < 3; k++)
			out->v[k] = ull[k];
		break;
	case NONE:
		break;
	case RAW: /* the struct's bytes past its size: nothing of NVML's */
		memset(out->s + arg[0], 0, sizeof(out->s) - arg[0]);
		break;
	case PCI: {
		uint32_t id, sub;

		memcpy(&id, pci + 28, 4);
		memcpy(&sub, pci + 32, 4);
		out->v[0] = id;
		out->v[1] = sub;
		break;
	}
	case A_PCI: { /* busIdLegacy, domain, bus, device at 16, ids at 28 and 32, busId at 36 */
		uint32_t w[5];

		memcpy(w, pci + 16, sizeof(w));
		out->v[0] = w[0];
		out->v[1] = w[1];
		out->v[2] = w[2];
		out->v[3] = w[3] | (uint64_t)w[4] << 32;
		memcpy(out->s, pci + 36, 32);
		out->s[31] = 0;
		memcpy(out->s + 32, pci, 16);
		out->s[47] = 0;
		break;
	}
	case STR: case A_STR: case STR64:
		out->s[sizeof(out->s) - 1] = 0;
		break;
	case FIELD:
		out->v[0] = fv.value;
		out->v[1] = (uint32_t)fv.value_type;
		out->v[2] = (uint64_t)fv.timestamp;
		out->v[3] = (uint64_t)fv.latency_us;
		break;
	}
}
