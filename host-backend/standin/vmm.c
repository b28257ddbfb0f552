/* SPDX-License-Identifier: MIT */
/*
 * vmm.c - the CI stand-in's virtual memory management and IPC.
 *
 * A reserved range is synthetic addresses (standin/mem.h) and as much
 * inaccessible host address space; a physical allocation is a memfd of its
 * size (counted against the stand-in's memory); a mapping maps the memfd
 * into the range's host space at the same offset, so that two mappings of
 * one allocation show the same bytes, and consecutive mappings are
 * consecutive host memory. A mapping becomes "device memory" that copies and
 * memsets reach (an entry of g_mem) once its access is set, as a GPU faults
 * before. Granularity is an H100's: 2 MiB, minimum and recommended, for
 * device memory.
 *
 * IPC: handles are made (events only of CU_EVENT_INTERPROCESS |
 * CU_EVENT_DISABLE_TIMING, as the driver demands), but opening one is
 * CUDA_ERROR_NOT_SUPPORTED: cuMemAlloc's memory is its worker's own RAM,
 * which another worker cannot see. (The server's checks of tokens, which
 * come before the driver, are what CI tests.) A physical allocation made
 * with CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR exports its memfd as the
 * descriptor, and importing one in another worker maps the same pages, so
 * that descriptors passed between workers are tested down to the bytes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "standin/standin_priv.h"

#define GRAN (2ull << 20)
#define MAX_VMM 4096u

struct sphys {
	uint64_t size;
	int fd;
	uint32_t refs, maps;
	int imported; /* another worker's memfd: its memory is not counted here */
	CUmemAllocationProp prop;
};

struct svrange {
	uint64_t va, size;
	uint8_t *host;       /* reservations: their host space; mappings: where they are mapped */
	struct sphys *phys;  /* mappings */
	unsigned access;     /* mappings: CUmemAccess_flags for device 0 */
};

/* Under g_mu. Allocation handles are looked up here before they are used. */
static struct sphys *g_phys[MAX_VMM];
static struct svrange g_resv[MAX_VMM], g_map[MAX_VMM];
static uint32_t g_nresv, g_nmap;
static const char g_memfd_name[] = "vcuda-standin-vmm"; /* what its allocations export */

static struct sphys *phys_of(CUmemGenericAllocationHandle h)
{
	for (uint32_t i = 0; h && i < MAX_VMM; i++)
		if (g_phys[i] && (uint64_t)(uintptr_t)g_phys[i] == h)
			return g_phys[i];
	return NULL;
}

static void phys_settle(struct sphys *p)
{
	if (p->refs || p->maps)
		return;
	for (uint32_t i = 0; i < MAX_VMM; i++)
		if (g_phys[i] == p)
			g_phys[i] = NULL;
	close(p->fd);
	if (!p->imported)
		g_mem.in_use -= p->size;
	free(p);
}

static struct svrange *resv_holding(uint64_t va, uint64_t size)
{
	for (uint32_t i = 0; i < g_nresv; i++)
		if (va >= g_resv[i].va && size <= g_resv[i].size && va - g_resv[i].va <= g_resv[i].size - size)
			return &g_resv[i];
	return NULL;
}

static struct svrange *map_holding(uint64_t va)
{
	for (uint32_t i = 0; i < g_nmap; i++)
		if (va - g_map[i].va < g_map[i].size)
			return &g_map[i];
	return NULL;
}

/* Whether mappings tile [@va, @va + @size) (each where the last ended). */
static int tiled(uint64_t va, uint64_t size, int exact)
{
	uint64_t at = va;
	struct svrange *m;

	if (!size || va + size < va)
		return 0;
	while (at < va + size) {
		if (!(m = map_holding(at)) || (exact && m->va != at))
			return 0;
		at = m->va + m->size;
	}
	return !exact || at == va + size;
}

static CUresult s_reserve(CUdeviceptr *ptr, size_t size, size_t align, CUdeviceptr addr, unsigned long long flags)
{
	void *host;
	uint64_t va;

	(void)addr; /* a hint: synthetic addresses come from the stand-in */
	if (!ptr || !size || size % GRAN || flags || (align & (align - 1)))
		return CUDA_ERROR_INVALID_VALUE;
	host = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (host == MAP_FAILED)
		return CUDA_ERROR_OUT_OF_MEMORY;
	pthread_mutex_lock(&g_mu);
	if (g_nresv == MAX_VMM) {
		pthread_mutex_unlock(&g_mu);
		munmap(host, size);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	vc_smem_reserve_va(&g_mem, size, align, &va);
	g_resv[g_nresv++] = (struct svrange){.va = va, .size = size, .host = host};
	pthread_mutex_unlock(&g_mu);
	*ptr = va;
	return CUDA_SUCCESS;
}

/* With g_mu held: mapping @i goes (its bytes out of g_mem, its host space inaccessible). */
static void unmap_at(uint32_t i)
{
	struct svrange *m = &g_map[i];

	if (m->access)
		vc_smem_unmap(&g_mem, m->va);
	mmap(m->host, m->size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
	m->phys->maps--;
	phys_settle(m->phys);
	g_map[i] = g_map[--g_nmap];
}

static CUresult s_free_range(CUdeviceptr ptr, size_t size)
{
	CUresult rc = CUDA_ERROR_INVALID_VALUE;

	pthread_mutex_lock(&g_mu);
	for (uint32_t i = 0; i < g_nresv; i++) {
		if (g_resv[i].va != ptr || g_resv[i].size != size)
			continue;
		for (uint32_t k = g_nmap; k-- > 0;)
			if (g_map[k].va - ptr < size)
				unmap_at(k);
		munmap(g_resv[i].host, size);
		g_resv[i] = g_resv[--g_nresv];
		rc = CUDA_SUCCESS;
		break;
	}
	pthread_mutex_unlock(&g_mu);
	return rc;
}

/* Device memory of device 0, as the stand-in has one device. */
static CUresult check_prop(const CUmemAllocationProp *prop)
{
	if (!prop || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED || prop->win32HandleMetaData)
		return CUDA_ERROR_INVALID_VALUE;
	if (prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
		return CUDA_ERROR_NOT_SUPPORTED;
	if (!vc_si_dev_ok(prop->location.id))
		return CUDA_ERROR_INVALID_DEVICE;
	if (prop->requestedHandleTypes & ~(unsigned)CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
		return CUDA_ERROR_NOT_SUPPORTED; /* no fabric, no Windows */
	return CUDA_SUCCESS;
}

/* Enter allocation @p (its memfd open) in the table, counted against the
 * stand-in's memory unless imported, and hand it out as *@h; on failure it
 * is closed and freed. */
static CUresult enter_phys(struct sphys *p, CUmemGenericAllocationHandle *h)
{
	uint32_t i;

	pthread_mutex_lock(&g_mu);
	for (i = 0; i < MAX_VMM && g_phys[i]; i++)
		;
	if (i == MAX_VMM || (!p->imported && p->size > g_mem.limit - g_mem.in_use)) {
		pthread_mutex_unlock(&g_mu);
		close(p->fd);
		free(p);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	if (!p->imported)
		g_mem.in_use += p->size;
	g_phys[i] = p;
	pthread_mutex_unlock(&g_mu);
	*h = (CUmemGenericAllocationHandle)(uintptr_t)p;
	return CUDA_SUCCESS;
}

static CUresult s_create(CUmemGenericAllocationHandle *h, size_t size, const CUmemAllocationProp *prop,
			 unsigned long long flags)
{
	struct sphys *p;
	CUresult rc;

	if (!h || !size || size % GRAN || flags)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = check_prop(prop)) || (rc = vc_si_need_ctx()))
		return rc;
	if (!(p = calloc(1, sizeof(*p))))
		return CUDA_ERROR_OUT_OF_MEMORY;
	p->fd = memfd_create(g_memfd_name, MFD_CLOEXEC);
	if (p->fd < 0 || ftruncate(p->fd, (off_t)size) < 0) {
		if (p->fd >= 0)
			close(p->fd);
		free(p);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	p->size = size;
	p->refs = 1;
	p->prop = *prop;
	return enter_phys(p, h);
}

static CUresult s_release(CUmemGenericAllocationHandle h)
{
	struct sphys *p;

	pthread_mutex_lock(&g_mu);
	p = phys_of(h);
	if (p && p->refs) {
		p->refs--;
		phys_settle(p);
	}
	pthread_mutex_unlock(&g_mu);
	return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static CUresult s_map(CUdeviceptr ptr, size_t size, size_t off, CUmemGenericAllocationHandle h,
		      unsigned long long flags)
{
	CUresult rc = CUDA_ERROR_INVALID_VALUE;
	struct svrange *r;
	struct sphys *p;
	uint8_t *at;

	if (!size || size % GRAN || off % GRAN || ptr % GRAN || flags)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g_mu);
	p = phys_of(h);
	r = resv_holding(ptr, size);
	if (!p || !p->refs || !r || size > p->size || off > p->size - size || g_nmap == MAX_VMM)
		goto out;
	for (uint32_t i = 0; i < g_nmap; i++)
		if (g_map[i].va < ptr + size && ptr < g_map[i].va + g_map[i].size)
			goto out;
	at = r->host + (ptr - r->va);
	if (mmap(at, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, p->fd, (off_t)off) == MAP_FAILED) {
		rc = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	g_map[g_nmap++] = (struct svrange){.va = ptr, .size = size, .host = at, .phys = p};
	p->maps++;
	rc = CUDA_SUCCESS;
out:
	pthread_mutex_unlock(&g_mu);
	return rc;
}

static CUresult s_unmap(CUdeviceptr ptr, size_t size)
{
	CUresult rc = CUDA_ERROR_INVALID_VALUE;

	pthread_mutex_lock(&g_mu);
	if (tiled(ptr, size, 1)) {
		for (uint32_t k = g_nmap; k-- > 0;)
			if (g_map[k].va - ptr < size)
				unmap_at(k);
		rc = CUDA_SUCCESS;
	}
	pthread_mutex_unlock(&g_mu);
	return rc;
}

static CUresult s_set_access(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *d, size_t count)
{
	CUresult rc = CUDA_SUCCESS;
	unsigned f = 0;

	if (!d || !count)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < count; i++) {
		if (d[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE || !vc_si_dev_ok(d[i].location.id))
			return CUDA_ERROR_INVALID_DEVICE;
		if (d[i].flags != CU_MEM_ACCESS_FLAGS_PROT_NONE && d[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READ &&
		    d[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
			return CUDA_ERROR_INVALID_VALUE;
		f = d[i].flags;
	}
	pthread_mutex_lock(&g_mu);
	if (!tiled(ptr, size, 0)) {
		rc = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	/* Whole mappings take the flags (the stand-in keeps one per mapping). */
	for (uint64_t at = ptr; at < ptr + size;) {
		struct svrange *m = map_holding(at);

		if (f && !m->access && vc_smem_map(&g_mem, m->va, m->size, m->host, NULL))
			rc = CUDA_ERROR_OUT_OF_MEMORY;
		else if (!f && m->access)
			vc_smem_unmap(&g_mem, m->va);
		if (rc == CUDA_SUCCESS)
			m->access = f;
		at = m->va + m->size;
	}
out:
	pthread_mutex_unlock(&g_mu);
	return rc;
}

static CUresult s_get_access(unsigned long long *flags, const CUmemLocation *loc, CUdeviceptr ptr)
{
	struct svrange *m;

	if (!flags || !loc)
		return CUDA_ERROR_INVALID_VALUE;
	if (loc->type != CU_MEM_LOCATION_TYPE_DEVICE || !vc_si_dev_ok(loc->id))
		return CUDA_ERROR_INVALID_DEVICE;
	pthread_mutex_lock(&g_mu);
	m = map_holding(ptr);
	if (m)
		*flags = m->access;
	pthread_mutex_unlock(&g_mu);
	return m ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static CUresult s_granularity(size_t *g, const CUmemAllocationProp *prop, CUmemAllocationGranularity_flags o)
{
	CUresult rc;

	if (!g || (o != CU_MEM_ALLOC_GRANULARITY_MINIMUM && o != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED))
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = check_prop(prop)))
		return rc;
	*g = GRAN;
	return CUDA_SUCCESS;
}

static CUresult s_retain(CUmemGenericAllocationHandle *h, void *addr)
{
	struct svrange *m;

	if (!h)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g_mu);
	m = map_holding((uint64_t)(uintptr_t)addr);
	if (m) {
		m->phys->refs++;
		*h = (CUmemGenericAllocationHandle)(uintptr_t)m->phys;
	}
	pthread_mutex_unlock(&g_mu);
	return m ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static CUresult s_export(void *out, CUmemGenericAllocationHandle h, CUmemAllocationHandleType t,
			 unsigned long long flags)
{
	struct sphys *p;
	int fd = -1, ok;

	if (!out || flags)
		return CUDA_ERROR_INVALID_VALUE;
	if (t != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
		return CUDA_ERROR_NOT_SUPPORTED;
	pthread_mutex_lock(&g_mu);
	p = phys_of(h);
	ok = p && (p->prop.requestedHandleTypes & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
	if (ok)
		fd = fcntl(p->fd, F_DUPFD_CLOEXEC, 0);
	pthread_mutex_unlock(&g_mu);
	if (!ok)
		return CUDA_ERROR_INVALID_VALUE; /* not made to be exported so */
	if (fd < 0)
		return CUDA_ERROR_OUT_OF_MEMORY;
	memcpy(out, &fd, sizeof(fd));
	return CUDA_SUCCESS;
}

static CUresult s_import(CUmemGenericAllocationHandle *h, void *os, CUmemAllocationHandleType t)
{
	int fd = (int)(intptr_t)os;
	struct sphys *p;
	struct stat st;

	if (!h)
		return CUDA_ERROR_INVALID_VALUE;
	if (t != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
		return CUDA_ERROR_NOT_SUPPORTED;
	if (!vc_si_memfd_named(fd, g_memfd_name) || fstat(fd, &st) < 0 || st.st_size <= 0 ||
	    (uint64_t)st.st_size % GRAN)
		return CUDA_ERROR_INVALID_VALUE;
	if (!(p = calloc(1, sizeof(*p))))
		return CUDA_ERROR_OUT_OF_MEMORY;
	if ((p->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0) {
		free(p);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	p->size = (uint64_t)st.st_size;
	p->refs = 1;
	p->imported = 1;
	p->prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	p->prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	p->prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
	return enter_phys(p, h);
}

static CUresult s_props(CUmemAllocationProp *prop, CUmemGenericAllocationHandle h)
{
	struct sphys *p;

	if (!prop)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g_mu);
	p = phys_of(h);
	if (p)
		*prop = p->prop;
	pthread_mutex_unlock(&g_mu);
	return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* ---- IPC: handles are made; opening one needs memory shared between workers ---- */

struct shandle {
	char magic[8];
	int32_t pid;
	uint32_t pad;
	uint64_t what;
};

static void make_handle(void *out, uint64_t what)
{
	struct shandle s = {.magic = "vcsiIPC", .pid = (int32_t)getpid(), .what = what};

	memset(out, 0, CU_IPC_HANDLE_SIZE);
	memcpy(out, &s, sizeof(s));
}

static CUresult s_ipc_get_mem(CUipcMemHandle *h, CUdeviceptr d)
{
	struct vc_smem_alloc *a;

	if (!h)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g_mu);
	a = vc_smem_find(&g_mem, d, 1);
	if (a && (a->base != d || a->borrowed))
		a = NULL;
	pthread_mutex_unlock(&g_mu);
	if (!a)
		return CUDA_ERROR_INVALID_VALUE;
	make_handle(h, d);
	return CUDA_SUCCESS;
}

static CUresult s_ipc_open_mem(CUdeviceptr *d, CUipcMemHandle h, unsigned flags)
{
	(void)h;
	if (!d || (flags & ~(unsigned)CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS))
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_ERROR_NOT_SUPPORTED; /* another worker's RAM is out of reach */
}

static CUresult s_ipc_close_mem(CUdeviceptr d)
{
	(void)d;
	return CUDA_ERROR_INVALID_VALUE; /* nothing is ever opened */
}

static CUresult s_ipc_get_event(CUipcEventHandle *h, CUevent e)
{
	const unsigned need = CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING;

	if (!h)
		return CUDA_ERROR_INVALID_VALUE;
	if (!vc_si_is(e, T_EVENT))
		return CUDA_ERROR_INVALID_HANDLE;
	if ((((struct obj *)e)->flags & need) != need)
		return CUDA_ERROR_INVALID_VALUE;
	make_handle(h, ((struct obj *)e)->id);
	return CUDA_SUCCESS;
}

static CUresult s_ipc_open_event(CUevent *e, CUipcEventHandle h)
{
	(void)h;
	return e ? CUDA_ERROR_NOT_SUPPORTED : CUDA_ERROR_INVALID_VALUE;
}

void vc_si_fill_vmm(struct vc_cuda_driver *d)
{
	d->cuMemAddressReserve = s_reserve;
	d->cuMemAddressFree = s_free_range;
	d->cuMemCreate = s_create;
	d->cuMemRelease = s_release;
	d->cuMemMap = s_map;
	d->cuMemUnmap = s_unmap;
	d->cuMemSetAccess = s_set_access;
	d->cuMemGetAccess = s_get_access;
	d->cuMemGetAllocationGranularity = s_granularity;
	d->cuMemRetainAllocationHandle = s_retain;
	d->cuMemGetAllocationPropertiesFromHandle = s_props;
	d->cuMemExportToShareableHandle = s_export;
	d->cuMemImportFromShareableHandle = s_import;
	d->cuIpcGetMemHandle = s_ipc_get_mem;
	d->cuIpcOpenMemHandle_v2 = s_ipc_open_mem;
	d->cuIpcCloseMemHandle = s_ipc_close_mem;
	d->cuIpcGetEventHandle = s_ipc_get_event;
	d->cuIpcOpenEventHandle = s_ipc_open_event;
}
