/* SPDX-License-Identifier: MIT */
/*
 * pinspare.h - a page-locked segment made ahead (VCUDA_PINNED_SPARE), so
 * that the registration or allocation it fits pays no page making.
 */
#ifndef VC_PINSPARE_H
#define VC_PINSPARE_H

#include <stdint.h>

/**
 * vc_cu_pinspare_start() - read VCUDA_PINNED_SPARE (bytes, 0: off, the
 * default) and, where set, start making the spare on a thread of ours.
 */
void vc_cu_pinspare_start(void);

/**
 * vc_cu_pinspare_kick() - a parked segment was taken: the spare is made
 * again where no parked segment fits its size any more.
 */
void vc_cu_pinspare_kick(void);

/** vc_cu_pinspare_len() - VCUDA_PINNED_SPARE's bytes; 0 when off or given up. */
uint64_t vc_cu_pinspare_len(void);

/**
 * vc_cu_pinspare_wait() - wait while a spare that fits @len bytes is being
 * made; 1 if one was (the caller looks among the parked segments again).
 */
int vc_cu_pinspare_wait(uint64_t len);

#endif /* VC_PINSPARE_H */
