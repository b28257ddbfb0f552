/* SPDX-License-Identifier: MIT */
/*
 * services.h - a session's completions and the services it hands its
 * executor (struct vc_session_services, vcuda/executor.h).
 */
#ifndef VC_CORE_SERVICES_H
#define VC_CORE_SERVICES_H

#include <stdint.h>

#include "core/session_priv.h"

/**
 * vc_session_services_init() - fill @s->svc for the region mapped at @base;
 * the layout, memfd and offset must be set.
 */
void vc_session_services_init(struct vc_session *s, uint8_t *base);

/** vc_session_signal() - signal the guest threads sleeping for a completion. */
void vc_session_signal(struct vc_session *s);

/**
 * vc_session_progress() - publish done_seq up to @seq (in the middle of a span,
 * after a command that moved bulk data, so that a guest pipelining through
 * the arena can reuse or read that chunk while later commands still run), and
 * wake sleeping guest threads.
 */
void vc_session_progress(struct vc_session *s, uint64_t seq);

#endif /* VC_CORE_SERVICES_H */
