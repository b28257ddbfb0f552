/* SPDX-License-Identifier: MIT */
/*
 * fuzz_mgmt_request.c - libFuzzer target for vcuda-mgmtd's request decoder
 * (mgmt/proto.c): any local user who can connect to the management socket
 * feeds it. The input is one request line; whatever it is, the decoder must
 * either accept a request whose fields all hold what the protocol allows,
 * or refuse it with a known code and a printable, terminated sentence; and
 * the reply built from either must be a single line of JSON.
 */
#include <errno.h>
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"
#include "util.h"

static void check_reply(json_t *rep)
{
	size_t len;
	char *line;

	if (!rep)
		abort();
	line = vc_json_line(rep, &len);
	if (!line || len == 0 || line[len - 1] != '\n' || memchr(line, '\n', len - 1))
		abort();
	/* and it reads back as JSON */
	json_t *back = json_loadb(line, len - 1, 0, NULL);

	if (!json_is_object(back))
		abort();
	json_decref(back);
	free(line);
	json_decref(rep);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const codes[] = {VC_MERR_BAD_REQUEST, VC_MERR_VERSION, VC_MERR_UNKNOWN_OP};
	struct vc_mreq r;
	const char *code = NULL;
	char err[512];
	int rc;

	if (size > VC_MGMT_LINE_MAX + 16)
		return 0;
	memset(err, 0x5a, sizeof(err));
	rc = vc_mreq_parse((const char *)data, size, &r, &code, err, sizeof(err));
	if (rc == 0) {
		if ((unsigned)r.op >= VC_MOP_COUNT_)
			abort();
		if ((r.has & VC_MF_NAME) && !vc_vm_name_ok(r.name))
			abort();
		if ((r.has & VC_MF_VM) && !vc_vm_name_ok(r.vm))
			abort();
		if ((r.has & VC_MF_GPU) && (!r.gpu[0] || !memchr(r.gpu, 0, sizeof(r.gpu))))
			abort();
		if ((r.has & VC_MF_GPUS) && (r.gpus < 1 || r.gpus > VC_VM_GPUS_MAX))
			abort();
		if ((r.has & VC_MF_WEIGHT) && (r.weight < 1 || r.weight > VC_WEIGHT_MAX))
			abort();
		if ((r.has & VC_MF_MEM_QUOTA) && r.mem_quota < (1u << 20))
			abort();
		if ((r.has & VC_MF_LIMIT) && (r.limit < 1 || r.limit > VC_MGMT_EVENTS_MAX))
			abort();
		if ((r.has & VC_MF_IDLE) && r.idle_timeout > VC_IDLE_MAX)
			abort();
		if (r.since < 0)
			abort();
		check_reply(vc_mrep_ok(r.id));
	} else {
		size_t k;

		if (rc != -EINVAL || !memchr(err, 0, sizeof(err)))
			abort();
		for (k = 0; k < sizeof(codes) / sizeof(codes[0]) && (!code || strcmp(code, codes[k])); k++)
			;
		if (k == sizeof(codes) / sizeof(codes[0]))
			abort();
		for (const char *p = err; *p; p++)
			if (*p < 0x20 || *p > 0x7e)
				abort();
		check_reply(vc_mrep_err(r.id, code, "%s", err));
	}
	vc_mreq_fini(&r);
	return 0;
}
