/* SPDX-License-Identifier: MIT */
/*
 * vc_sanitize.h - which sanitizer this translation unit is built with, for
 * the few places that must step aside for one: VC_ASAN (AddressSanitizer)
 * and VC_TSAN (ThreadSanitizer) are defined, GCC's and Clang's spellings
 * both.
 */
#ifndef VC_SANITIZE_H
#define VC_SANITIZE_H

#if defined(__SANITIZE_ADDRESS__)
#define VC_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__)
#define VC_TSAN 1
#endif
#if defined(__has_feature)
#if __has_feature(address_sanitizer) && !defined(VC_ASAN)
#define VC_ASAN 1
#endif
#if __has_feature(thread_sanitizer) && !defined(VC_TSAN)
#define VC_TSAN 1
#endif
#endif

#endif /* VC_SANITIZE_H */
