/* SPDX-License-Identifier: MIT */
/* model.c - a VM's GPUs (model.h). */
#include "model.h"

#include <stdio.h>
#include <string.h>

/* How many GPUs @vm has; a VM made without saying has one. */
static unsigned count(const struct vc_vm *vm)
{
	return vm->ngpus ? vm->ngpus : 1;
}

int vc_vm_gpu_pos(const struct vc_vm *vm, const char *uuid)
{
	for (unsigned k = 0; uuid && uuid[0] && k < count(vm) && k < VC_VM_GPUS_MAX; k++)
		if (!strcmp(vc_vm_gpu(vm, k), uuid))
			return (int)k;
	return -1;
}

void vc_vm_gpu_join(const struct vc_vm *vm, char *out, size_t len)
{
	size_t at = 0;

	if (!len)
		return;
	out[0] = '\0';
	for (unsigned k = 0; k < count(vm) && k < VC_VM_GPUS_MAX && at < len; k++) {
		const char *u = vc_vm_gpu(vm, k);

		if (!u[0])
			break;
		at += (size_t)snprintf(out + at, len - at, "%s%s", k ? "," : "", u);
	}
}
