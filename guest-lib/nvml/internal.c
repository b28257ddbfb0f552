/* SPDX-License-Identifier: MIT */
/*
 * internal.c - nvmlInternalGetExportTable, the private table nvidia-smi
 * asks for first: without it nvidia-smi stops with "Mismatch in versions
 * between nvidia-smi and NVML".
 *
 * The table (id 6c3efec4-8fc9-4e6c-a327-ee696e12f7c4) is undocumented. Its
 * first word is its size in bytes, then a function pointer every 8 bytes.
 * What is known of its slots comes from NVIDIA's own mock NVML for
 * nvidia-smi (driver 580), which gave every slot its own function and noted
 * which ones each view of nvidia-smi calls:
 *   81        a device handle by index: (index, nvmlDevice_t *out, 0x22);
 *   213..215  a device's compute, graphics and MPS processes (213 holds a
 *             CUDA process natively, 214 and 215 are empty; nvidia-smi
 *             types a process by the lists it is in: C, G, M):
 *             (device, unsigned *count, entries):
 *             *count in is the room, out the number written; an entry is
 *             4128 bytes: pid (u32) at 0, device memory used (u64) at 8,
 *             GPU and compute instance (u32, ~0 without MIG) at 16 and 20,
 *             protected memory (u64) at 24, the process name (4096 bytes,
 *             NUL-terminated) at 32 (nvidia-smi draws no row without one);
 *   230, 249  a host's PCIe generation, the sparse operation mode.
 * vcuda answers 81 and 213 from what it knows (the processes are this
 * VM's, as nvmlDeviceGetComputeRunningProcesses says), 214 and 215 with
 * none (no graphics or MPS processes exist in a guest), and 230 and 249
 * with NVML_ERROR_NOT_SUPPORTED (nvidia-smi shows N/A: the host's PCIe
 * generation is not the guest's to know). Any other slot called
 * with one of this library's device handles is a list of nothing: its
 * second argument, a count, becomes 0 and the call succeeds (nvidia-smi's
 * default view stops with "Internal NVML error" when such a slot answers an
 * error, and an untouched count reads as that many entries). Any other call
 * answers NVML_SUCCESS and writes nothing (nvidia-smi's topology view gives
 * up on an error there). A handle is ours only by address (vc_nvml_device()):
 * nothing the caller passes is read before that. tools/nvml-trace logs each
 * slot nvidia-smi calls, natively and here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvml_guest.h"

#define SLOTS 512
#define SLOT_HANDLE_BY_INDEX 81
#define SLOT_PROCS_COMPUTE 213
#define SLOT_HOST_PCIE_GEN 230
#define SLOT_SPARSE_MODE 249

#define ENTRY_SIZE 4128
#define ENTRY_NAME 32
#define ENTRY_NAME_MAX 4096
#define NO_INSTANCE 0xFFFFFFFFu

static const unsigned char g_table_id[16] = {0xc4, 0xfe, 0x3e, 0x6c, 0xc9, 0x8f, 0x6c, 0x4e,
					     0xa3, 0x27, 0xee, 0x69, 0x6e, 0x12, 0xf7, 0xc4};

/* The name nvidia-smi shows for guest process @pid: its program's path. */
static void proc_name(uint32_t pid, char *buf, size_t cap)
{
	char path[64];
	size_t n = 0;
	FILE *f;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%u/cmdline", (unsigned)pid);
	if ((f = fopen(path, "r"))) {
		n = fread(buf, 1, cap - 1, f);
		fclose(f);
	}
	buf[n] = '\0'; /* argv[0] ends at its own NUL */
	if (!buf[0] && nvmlSystemGetProcessName(pid, buf, (unsigned)cap) != NVML_SUCCESS)
		buf[0] = '\0';
}

/* Slot 213: device @d's processes into @out (room for *@count). */
static nvmlReturn_t procs(nvmlDevice_t d, unsigned int *count, unsigned char *out)
{
	struct vc_nv_proc *p = NULL;
	unsigned room = *count, n = 0;
	nvmlReturn_t rc;

	if (room < 1 || room > 65536)
		return NVML_ERROR_INVALID_ARGUMENT;
	if ((rc = vc_nvml_procs(d, &p, &n)))
		return rc;
	if (n > room) /* more than room: the first room of them */
		n = room;
	for (unsigned i = 0; i < n; i++) {
		unsigned char *e = out + (size_t)i * ENTRY_SIZE;
		uint32_t inst = NO_INSTANCE;

		memset(e, 0, ENTRY_NAME);
		memcpy(e, &p[i].pid, sizeof(p[i].pid));
		memcpy(e + 8, &p[i].used, sizeof(p[i].used));
		memcpy(e + 16, &inst, sizeof(inst));
		memcpy(e + 20, &inst, sizeof(inst));
		proc_name(p[i].pid, (char *)e + ENTRY_NAME, ENTRY_NAME_MAX);
	}
	*count = n;
	free(p);
	return NVML_SUCCESS;
}

/* Slot @slot called with up to four arguments (the rest go unread). */
static nvmlReturn_t slot_call(unsigned slot, void *a0, void *a1, void *a2, void *a3)
{
	unsigned idx;

	(void)a3;
	if (slot == SLOT_HANDLE_BY_INDEX && (uintptr_t)a0 < VC_NVML_MAX_DEVICES && a1)
		return nvmlDeviceGetHandleByIndex_v2((unsigned)(uintptr_t)a0, (nvmlDevice_t *)a1);
	if (vc_nvml_device((nvmlDevice_t)a0, &idx) != NVML_SUCCESS)
		return NVML_SUCCESS; /* no device of ours: nothing to say, nothing written */
	if (slot == SLOT_PROCS_COMPUTE && a1 && a2)
		return procs((nvmlDevice_t)a0, (unsigned int *)a1, (unsigned char *)a2);
	if (slot == SLOT_HOST_PCIE_GEN || slot == SLOT_SPARSE_MODE || !a1)
		return NVML_ERROR_NOT_SUPPORTED;
	/* a list of nothing: the count nvidia-smi passes is its room, and an
	 * untouched room reads as that many entries */
	*(unsigned int *)a1 = 0;
	return NVML_SUCCESS;
}

/* One function per slot, so that a call tells which slot it is. */
#define SLOT_FN(n)                                                                           \
	static nvmlReturn_t slot_##n(void *a0, void *a1, void *a2, void *a3)                 \
	{                                                                                    \
		return slot_call(n, a0, a1, a2, a3);                                         \
	}
#define SLOT_REF(n) slot_##n,
#define X8(M, b) M(b##0) M(b##1) M(b##2) M(b##3) M(b##4) M(b##5) M(b##6) M(b##7)
#define X64(M, b) X8(M, b##0) X8(M, b##1) X8(M, b##2) X8(M, b##3) X8(M, b##4) X8(M, b##5) X8(M, b##6) X8(M, b##7)
#define X512(M) X64(M, 00) X64(M, 01) X64(M, 02) X64(M, 03) X64(M, 04) X64(M, 05) X64(M, 06) X64(M, 07)

/* The slot numbers are written in octal (0000 to 0777: a leading zero and
 * three digits of 0..7), so the same token names the function and is its
 * index in the table. */
X512(SLOT_FN)

typedef nvmlReturn_t (*slot_fn)(void *, void *, void *, void *);
static const slot_fn g_slot_fns[SLOTS] = {X512(SLOT_REF)};

static struct {
	uint64_t size;
	slot_fn fn[SLOTS - 1];
} g_table;

nvmlReturn_t nvmlInternalGetExportTable(const void **ppExportTable, const void *pExportTableId)
{
	if (!ppExportTable || !pExportTableId)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (memcmp(pExportTableId, g_table_id, sizeof(g_table_id)))
		return NVML_ERROR_NOT_SUPPORTED;
	if (!__atomic_load_n(&g_table.size, __ATOMIC_ACQUIRE)) {
		/* idempotent: racing callers write the same pointers */
		for (unsigned i = 1; i < SLOTS; i++)
			g_table.fn[i - 1] = g_slot_fns[i];
		__atomic_store_n(&g_table.size, (uint64_t)sizeof(g_table), __ATOMIC_RELEASE);
	}
	*ppExportTable = &g_table;
	return NVML_SUCCESS;
}
