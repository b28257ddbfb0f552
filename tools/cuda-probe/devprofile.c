/* devprofile.c - record a real device's answers to the driver's device
 * queries (every CUdevice_attribute, name, total memory, driver version),
 * one "key<TAB>value" per line, for the CI stand-in to answer from. */
#include <cuda.h>
#include <stdio.h>

int main(void)
{
	CUdevice d;
	char name[256];
	size_t mem;
	int v, n;

	if (cuInit(0) || cuDeviceGetCount(&n) || cuDeviceGet(&d, 0))
		return 1;
	cuDriverGetVersion(&v);
	printf("driver_version\t%d\ndevice_count\t%d\n", v, n);
	cuDeviceGetName(name, sizeof(name), d);
	cuDeviceTotalMem(&mem, d);
	printf("name\t%s\ntotal_mem\t%zu\n", name, mem);
	for (int a = 1; a < CU_DEVICE_ATTRIBUTE_MAX; a++) {
		CUresult rc = cuDeviceGetAttribute(&v, (CUdevice_attribute)a, d);

		if (rc == CUDA_SUCCESS)
			printf("attr.%d\t%d\n", a, v);
		else
			printf("attr.%d\terror %d\n", a, rc);
	}
	return 0;
}
