/* SPDX-License-Identifier: MIT */
/* gpus.c - GPUs from NVML or from an inventory file (gpus.h). */
#include "gpus.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define INVENTORY_MAX (1u << 20)
#define DESC_MAX 4200

struct vc_gpu_source {
	char *inventory; /* NULL: NVML */
	struct vc_nvml *nvml;
	char desc[DESC_MAX];
};

int vc_gpus_open(const char *inventory, const char *nvml_lib, struct vc_gpu_source **out, char *err,
		 size_t errlen)
{
	struct vc_gpu_source *s = calloc(1, sizeof(*s));
	int rc;

	if (!s)
		return -ENOMEM;
	if (inventory) {
		s->inventory = strdup(inventory);
		if (!s->inventory) {
			free(s);
			return -ENOMEM;
		}
		snprintf(s->desc, sizeof(s->desc), "inventory file %s (not NVML: for tests and dry runs)", inventory);
	} else {
		rc = vc_nvml_open(nvml_lib, &s->nvml, err, errlen);
		if (rc) {
			free(s);
			return rc;
		}
		snprintf(s->desc, sizeof(s->desc), "%s", vc_nvml_describe(s->nvml));
	}
	*out = s;
	return 0;
}

void vc_gpus_close(struct vc_gpu_source *s)
{
	if (!s)
		return;
	vc_nvml_close(s->nvml);
	free(s->inventory);
	free(s);
}

const char *vc_gpus_describe(const struct vc_gpu_source *s)
{
	return s->desc;
}

const char *vc_gpus_kind(const struct vc_gpu_source *s)
{
	return s->inventory ? "inventory" : "nvml";
}

/* A string member: required, printable, shorter than @max. */
static int str_field(json_t *o, const char *key, bool required, char *out, size_t max, const char *what,
		     size_t i, char *err, size_t errlen)
{
	json_t *v = json_object_get(o, key);
	const char *s = json_string_value(v);

	if (!v && !required) {
		out[0] = 0;
		return 0;
	}
	if (!s || (required && !*s) || strlen(s) >= max) {
		snprintf(err, errlen, "%s: gpus[%zu].%s must be a %sstring of at most %zu characters", what, i, key,
			 required ? "non-empty " : "", max - 1);
		return -EINVAL;
	}
	for (const char *p = s; *p; p++) {
		if (*p < 0x20 || *p > 0x7e) {
			snprintf(err, errlen, "%s: gpus[%zu].%s must be printable ASCII", what, i, key);
			return -EINVAL;
		}
	}
	strcpy(out, s);
	return 0;
}

int vc_inventory_parse(const char *text, size_t len, const char *what, struct vc_gpu **out, size_t *n,
		       char *err, size_t errlen)
{
	static const char *const known[] = {"uuid", "name", "memory", "pci_bus_id", "health", "reason", "numa_node"};
	struct vc_gpu *g = NULL;
	json_error_t jerr;
	json_t *root, *list, *e;
	size_t i, count;
	int rc = -EINVAL;

	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		snprintf(err, errlen, "%s: line %d: %s", what, jerr.line, jerr.text);
		return -EINVAL;
	}
	list = json_object_get(root, "gpus");
	if (!json_is_array(list)) {
		snprintf(err, errlen, "%s: expected {\"gpus\": [{\"uuid\": ..., \"name\": ..., \"memory\": ...}, ...]}",
			 what);
		goto out;
	}
	count = json_array_size(list);
	if (count > VC_GPUS_MAX) {
		snprintf(err, errlen, "%s: %zu GPUs; at most %d", what, count, VC_GPUS_MAX);
		goto out;
	}
	g = calloc(count ? count : 1, sizeof(*g));
	if (!g) {
		rc = -ENOMEM;
		goto out;
	}
	json_array_foreach(list, i, e) {
		char health[16];
		const char *key;
		json_t *v;

		if (!json_is_object(e)) {
			snprintf(err, errlen, "%s: gpus[%zu] must be an object", what, i);
			goto out;
		}
		json_object_foreach(e, key, v) {
			size_t k;

			for (k = 0; k < sizeof(known) / sizeof(known[0]) && strcmp(known[k], key); k++)
				;
			if (k == sizeof(known) / sizeof(known[0])) {
				snprintf(err, errlen, "%s: gpus[%zu]: unknown field \"%.40s\" (known: uuid, name, memory, "
						      "pci_bus_id, health, reason, numa_node)", what, i, key);
				vc_printable(err);
				goto out;
			}
		}
		g[i].index = (int)i;
		g[i].present = true;
		if (str_field(e, "uuid", true, g[i].uuid, sizeof(g[i].uuid), what, i, err, errlen) ||
		    str_field(e, "name", true, g[i].name, sizeof(g[i].name), what, i, err, errlen) ||
		    str_field(e, "pci_bus_id", false, g[i].pci_bus_id, sizeof(g[i].pci_bus_id), what, i, err, errlen) ||
		    str_field(e, "health", false, health, sizeof(health), what, i, err, errlen) ||
		    str_field(e, "reason", false, g[i].health_reason, sizeof(g[i].health_reason), what, i, err, errlen))
			goto out;
		for (size_t k = 0; k < i; k++) {
			if (!strcmp(g[k].uuid, g[i].uuid)) {
				snprintf(err, errlen, "%s: gpus[%zu] and gpus[%zu] have the same uuid", what, k, i);
				goto out;
			}
		}
		if (!health[0] || !strcmp(health, "healthy")) {
			g[i].health = VC_GPU_HEALTHY;
			g[i].health_reason[0] = 0;
		} else if (!strcmp(health, "unhealthy")) {
			g[i].health = VC_GPU_UNHEALTHY;
			if (!g[i].health_reason[0])
				snprintf(g[i].health_reason, sizeof(g[i].health_reason), "marked unhealthy in %s", what);
		} else {
			snprintf(err, errlen, "%s: gpus[%zu].health must be \"healthy\" or \"unhealthy\"", what, i);
			goto out;
		}
		v = json_object_get(e, "memory");
		if (json_is_integer(v) && json_integer_value(v) > 0) {
			g[i].mem_total = (uint64_t)json_integer_value(v);
		} else if (!json_is_string(v) || vc_size_parse(json_string_value(v), &g[i].mem_total) ||
			   !g[i].mem_total) {
			snprintf(err, errlen, "%s: gpus[%zu].memory must be a number of bytes or a size like \"80G\"",
				 what, i);
			goto out;
		}
		v = json_object_get(e, "numa_node");
		g[i].numa_node = -1;
		if (v && (!json_is_integer(v) || json_integer_value(v) < -1 || json_integer_value(v) > 1023)) {
			snprintf(err, errlen, "%s: gpus[%zu].numa_node must be a NUMA node (0..1023), or -1 for unknown",
				 what, i);
			goto out;
		}
		if (v)
			g[i].numa_node = (int)json_integer_value(v);
	}
	*out = g;
	*n = count;
	g = NULL;
	rc = 0;
out:
	free(g);
	json_decref(root);
	return rc;
}

static int read_file(const char *path, char **out, size_t *len, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	char *buf;
	size_t n;

	if (!f) {
		int rc = -errno;

		snprintf(err, errlen, "cannot read the inventory file %s: %s", path, strerror(-rc));
		return rc;
	}
	buf = malloc(INVENTORY_MAX + 1);
	if (!buf) {
		fclose(f);
		return -ENOMEM;
	}
	n = fread(buf, 1, INVENTORY_MAX + 1, f);
	if (ferror(f) || n > INVENTORY_MAX) {
		snprintf(err, errlen, "cannot read the inventory file %s: %s", path,
			 n > INVENTORY_MAX ? "larger than 1 MiB" : "read error");
		fclose(f);
		free(buf);
		return -EINVAL;
	}
	fclose(f);
	*out = buf;
	*len = n;
	return 0;
}

int vc_gpus_scan(struct vc_gpu_source *s, struct vc_gpu **out, size_t *n, char *err, size_t errlen)
{
	char *text = NULL;
	size_t len = 0;
	int rc;

	if (!s->inventory)
		return vc_nvml_scan(s->nvml, out, n, err, errlen);
	rc = read_file(s->inventory, &text, &len, err, errlen);
	if (rc)
		return rc;
	rc = vc_inventory_parse(text, len, s->inventory, out, n, err, errlen);
	free(text);
	return rc;
}
