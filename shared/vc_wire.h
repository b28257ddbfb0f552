/* SPDX-License-Identifier: MIT */
/*
 * vc_wire.h - the vcuda wire ABI: what lies in the shared region and in the
 * ring, byte for byte.
 *
 * Rules (docs/PROTOCOL.md gives the reasons):
 *  - fixed-width little-endian fields, natural alignment, explicit padding,
 *    every struct's size and every control-word offset pinned with
 *    static_assert;
 *  - offsets into the region, never pointers;
 *  - the host decides the layout and keeps its own copy; it never reads the
 *    layout (or anything else it wrote) back from shared memory;
 *  - a change to anything in this file changes VC_ABI_HASH (computed by the
 *    build from this file), and a bump of VC_PROTO_VERSION marks a deliberate
 *    incompatible change. Both are compared when a session opens.
 */
#ifndef VC_WIRE_H
#define VC_WIRE_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "vcuda's wire format is little-endian; big-endian hosts are not supported"
#endif

#define VC_PROTO_VERSION 4u /* 4: guest pages pinned in place (vc_gpin.h, VC_CU_PINSEG_MAP_GUEST) */
#define VC_CTRL_MAGIC 0x41554356u /* "VCUA" */
#define VC_CACHELINE 64u

/* ---------------------------------------------------------------------------
 * Region layout. The region is one shared mapping:
 *   [ctrl page][ring][reply slots][staging arena][pinned pool]
 * The pinned pool holds the guest's page-locked host allocations; the host
 * maps it (at the guest's own addresses where it can) and registers each
 * allocation with the driver, so that copies from it are DMA.
 */
struct vc_layout {
	uint64_t region_size;
	uint32_t ctrl_off;    /* 0 */
	uint32_t ctrl_size;   /* VC_CTRL_SIZE */
	uint32_t ring_off;
	uint32_t ring_size;   /* power of two, VC_RING_MIN..VC_RING_MAX */
	uint32_t slots_off;
	uint32_t slot_count;  /* 1..VC_SLOTS_MAX */
	uint32_t slot_size;   /* bytes per reply slot, header included */
	uint32_t chunk_size;  /* staging-arena chunk, a multiple of 4 KiB */
	uint64_t arena_off;
	uint64_t arena_size;  /* a multiple of chunk_size; may be 0 */
	uint64_t pinned_off;  /* the guest's page-locked allocations (cuMemHostAlloc) */
	uint64_t pinned_size; /* a multiple of 2 MiB; may be 0 */
};
static_assert(sizeof(struct vc_layout) == 72, "vc_layout is ABI");

#define VC_CTRL_SIZE 4096u
#define VC_RING_MIN (4u << 10)
#define VC_RING_MAX (16u << 20)
#define VC_SLOTS_MAX 1024u
#define VC_SLOT_MIN 64u
#define VC_SLOT_MAX (1u << 20)
#define VC_CHUNK_MIN (4u << 10)
#define VC_CHUNK_MAX (64u << 20)
#define VC_ARENA_MAX (4ull << 30)
#define VC_PINNED_ALIGN (2ull << 20)
#define VC_PINNED_MAX (64ull << 30)

/* ---------------------------------------------------------------------------
 * Control page. Each word that changes at run time has a cache line of its own,
 * so that the guest's and the host's stores do not false-share. The comment on
 * each says who writes it; the other side only reads it (status is the one
 * word both sides modify, always with atomic RMW).
 */

/* status bits (vc_ctrl.status) */
#define VC_STATUS_IDLE  0x1u /* host: server thread is about to sleep; kick the doorbell */
#define VC_STATUS_FATAL 0x2u /* host: session is dead (fatal_reason says why) */
#define VC_STATUS_ALIVE 0x4u /* host sets it periodically; guest clears it to probe */

/* Host callbacks in flight at once (cuLaunchHostFunc); a power of two. */
#define VC_CB_RING 256u

/* Reply slots below this have a fence word (vc_ctrl.fence, VC_CMD_F_FENCE). */
#define VC_FENCE_SLOTS 256u

struct vc_ctrl {
	/* lines 0-1: host writes once at session creation, guest reads. */
	uint32_t magic;
	uint32_t version;
	uint64_t abi_hash;
	struct vc_layout layout;
	uint8_t pad0[2 * VC_CACHELINE - 88];
	/* line 2: guest writes (release), host reads (acquire). Free-running. */
	uint32_t tail;
	uint8_t pad1[VC_CACHELINE - 4];
	/* line 3: host writes (release) once a span is copied out; guest reads. */
	uint32_t head;
	uint8_t pad2[VC_CACHELINE - 4];
	/* line 4: host sets IDLE/FATAL/ALIVE; guest clears ALIVE. RMW only. */
	uint32_t status;
	uint32_t fatal_reason; /* host, written before FATAL is set */
	uint8_t pad3[VC_CACHELINE - 8];
	/* line 5: host writes (release): count of commands fully executed. */
	uint64_t done_seq;
	uint8_t pad4[VC_CACHELINE - 8];
	/* line 6: host writes the first asynchronous error since the last ack,
	 * before the done_seq store (release) that covers its command. */
	int32_t err_code;
	uint32_t err_pad;
	uint64_t err_seq;
	uint8_t pad5[VC_CACHELINE - 16];
	/* line 7: guest: number of guest threads sleeping for a completion. */
	uint32_t waiters;
	uint8_t pad6[VC_CACHELINE - 4];
	/* line 8: guest: highest err_seq it has consumed; re-arms err_code. */
	uint64_t err_ack;
	uint8_t pad7[VC_CACHELINE - 8];
	/* line 9: host writes (release): host callbacks queued in cb_ring. */
	uint32_t cb_tail;
	uint8_t pad8[VC_CACHELINE - 4];
	/* line 10: guest writes (release): host callbacks it has run. */
	uint32_t cb_done;
	uint8_t pad9[VC_CACHELINE - 4];
	/* lines 11-42: host writes before cb_tail: the guest's cookie of each
	 * queued callback (cuLaunchHostFunc), in stream order per stream. */
	uint64_t cb_ring[VC_CB_RING];
	/* line 43: host writes (release), before the reply or done_seq that lets
	 * the guest go on: bytes of device printf output it has captured so far
	 * (free-running, markers included). The guest fetches them with vcConsole
	 * while it has fetched fewer. */
	uint64_t con_total;
	uint8_t pad10[VC_CACHELINE - 8];
	/* lines 44-59: one word per reply slot below VC_FENCE_SLOTS, for a
	 * command sent with VC_CMD_F_FENCE. The guest stores a value other
	 * than the command's before publishing it; after a successful reply
	 * the low 32 bits of the command's seq arrive there when its work is
	 * done: written by the device (the executor queues the write after the
	 * work, in stream order, through its driver) or by the host's CPU
	 * (release) before the reply. The guest reads (acquire); the host
	 * never reads it. */
	uint32_t fence[VC_FENCE_SLOTS];
};
static_assert(offsetof(struct vc_ctrl, layout) == 16, "ctrl ABI");
static_assert(offsetof(struct vc_ctrl, tail) == 2 * VC_CACHELINE, "ctrl ABI");
static_assert(offsetof(struct vc_ctrl, head) == 3 * VC_CACHELINE, "ctrl ABI");
static_assert(offsetof(struct vc_ctrl, status) == 4 * VC_CACHELINE, "ctrl ABI");
static_assert(offsetof(struct vc_ctrl, fatal_reason) == 4 * VC_CACHELINE + 4, "ctrl ABI");
static_assert(offsetof(struct vc_ctrl, done_seq) == 5 * VC_CACHELINE, "ctrl ABI");
static_assert(offsetof(struct vc_ctrl, err_code) == 6 * VC_CACHELINE, "ctrl ABI");
static_assert(offsetof(struct vc_ctrl, err_seq) == 6 * VC_CACHELINE + 8, "ctrl ABI");
static_assert(offsetof(struct vc_ctrl, waiters) == 7 * VC_CACHELINE, "ctrl ABI");
static_assert(offsetof(struct vc_ctrl, err_ack) == 8 * VC_CACHELINE, "ctrl ABI");
static_assert(offsetof(struct vc_ctrl, cb_tail) == 9 * VC_CACHELINE, "ctrl ABI");
static_assert(offsetof(struct vc_ctrl, cb_done) == 10 * VC_CACHELINE, "ctrl ABI");
static_assert(offsetof(struct vc_ctrl, cb_ring) == 11 * VC_CACHELINE, "ctrl ABI");
static_assert(offsetof(struct vc_ctrl, con_total) == 11 * VC_CACHELINE + 8 * VC_CB_RING, "ctrl ABI");
static_assert(offsetof(struct vc_ctrl, fence) == 12 * VC_CACHELINE + 8 * VC_CB_RING, "ctrl ABI");
static_assert(sizeof(struct vc_ctrl) == 12 * VC_CACHELINE + 8 * VC_CB_RING + 4 * VC_FENCE_SLOTS, "ctrl ABI");
static_assert(sizeof(struct vc_ctrl) <= VC_CTRL_SIZE, "ctrl fits its page");

/* Why a session went FATAL (vc_ctrl.fatal_reason). */
enum vc_fatal {
	VC_FATAL_NONE = 0,
	VC_FATAL_TAIL = 1,       /* tail - head > ring size */
	VC_FATAL_CMD_SIZE = 2,   /* command size too small, unaligned, or past the span */
	VC_FATAL_OP = 3,         /* unknown opcode or flag bits */
	VC_FATAL_SLOT = 4,       /* reply slot index out of range */
	VC_FATAL_PAYLOAD = 5,    /* payload shorter than the opcode's struct, or inconsistent */
	VC_FATAL_ARENA = 6,      /* arena offset/length outside the arena */
	VC_FATAL_EXECUTOR = 7,   /* the executor failed in a way that kills the session */
	VC_FATAL_SHUTDOWN = 8,   /* the server is going away */
};

/** vc_fatal_name() - a short description of an enum vc_fatal value. */
static inline const char *vc_fatal_name(uint32_t reason)
{
	static const char *const names[] = {
		"none", "ring tail beyond the ring", "bad command size", "unknown opcode or flags",
		"reply slot out of range", "malformed payload", "arena range outside the arena",
		"executor failure", "server shutdown",
	};
	return reason < sizeof(names) / sizeof(names[0]) ? names[reason] : "unknown reason";
}

/* ---------------------------------------------------------------------------
 * Commands. Each command in the ring is a header followed by its payload, its
 * total size rounded up to 8 bytes. Commands may straddle the ring's end.
 * The n-th command published (counting from 1) has sequence number n; the host
 * counts them itself and never reads a sequence number from the guest.
 */
struct vc_cmd_hdr {
	uint32_t op;    /* enum vc_op */
	uint32_t size;  /* header + payload + padding, multiple of 8 */
	uint32_t flags; /* VC_CMD_F_* */
	uint32_t slot;  /* reply slot, when VC_CMD_F_REPLY */
};
static_assert(sizeof(struct vc_cmd_hdr) == 16, "cmd ABI");

#define VC_CMD_ALIGN 8u
#define VC_CMD_F_REPLY 0x1u /* synchronous: write a reply into `slot` */
/* With REPLY, `slot` below VC_FENCE_SLOTS: the host may reply once the
 * command's work is queued; a successful reply then means that the slot's
 * fence word (vc_ctrl.fence) gets the seq's low 32 bits when the work is
 * done. An error reply means it never will, and so may a reply written late
 * (a synchronisation's, off the serving thread): a guest that does not see
 * the word within its spin waits another way. */
#define VC_CMD_F_FENCE 0x2u
#define VC_CMD_F_MASK (VC_CMD_F_REPLY | VC_CMD_F_FENCE)

/*
 * Operations. Two belong to the transport itself: NOP (payload ignored) and
 * ECHO (vc_echo_req + data, answered with the same data: the ring's tests use
 * it to check reply slots). Every other opcode is a CUDA operation, in the
 * range [VC_CU_OP_BASE, VC_CU_OP_END_) of the generated vc_cuda_wire.h, with
 * its request struct from vc_cuda_wire.h or vc_cuda_manual.h.
 */
enum vc_op {
	VC_OP_NOP = 1,
	VC_OP_ECHO = 2,
	VC_OP_MAX_
};

struct vc_echo_req {
	uint32_t len; /* bytes of data following this struct */
	uint32_t pad;
};
static_assert(sizeof(struct vc_echo_req) == 8, "ABI");

#define VC_LAUNCH_PARAMS_MAX (32u << 10) /* CUDA 12.1+: 32 KiB of parameters */

/* ---------------------------------------------------------------------------
 * Reply slots: the host writes the header and payload, then publishes done_seq
 * (release); the guest reads the slot after observing done_seq >= seq (acquire).
 */
struct vc_reply_hdr {
	int32_t status; /* CUDA driver error code (CUresult); 0 = success */
	uint32_t len;   /* payload bytes after this header */
	uint64_t seq;   /* the command's sequence number (diagnostic) */
};
static_assert(sizeof(struct vc_reply_hdr) == 16, "reply ABI");

/* Result codes carried in replies and err_code: the CUDA driver's own values. */
#define VC_CUDA_SUCCESS 0
#define VC_CUDA_ERROR_INVALID_VALUE 1
#define VC_CUDA_ERROR_OUT_OF_MEMORY 2
#define VC_CUDA_ERROR_NOT_INITIALIZED 3
#define VC_CUDA_ERROR_INVALID_HANDLE 400
#define VC_CUDA_ERROR_NOT_READY 600
#define VC_CUDA_ERROR_ILLEGAL_ADDRESS 700
#define VC_CUDA_ERROR_NOT_SUPPORTED 801
#define VC_CUDA_ERROR_UNKNOWN 999

/* ---------------------------------------------------------------------------
 * Session handshake on the host-local unix socket (SOCK_SEQPACKET). The client
 * sends vc_hello; the server answers vc_welcome with SCM_RIGHTS carrying, on
 * success, [region memfd, doorbell eventfd, completion eventfd].
 */
#define VC_HELLO_MAGIC 0x4c454856u   /* "VHEL" */
#define VC_WELCOME_MAGIC 0x4c455756u /* "VWEL" */

struct vc_hello {
	uint32_t magic;
	uint32_t version;
	uint64_t abi_hash;
	uint32_t pid;         /* informational */
	uint32_t flags;       /* none defined; must be 0 */
	char comm[16];        /* informational, NUL-padded */
};
static_assert(sizeof(struct vc_hello) == 40, "hello ABI");

struct vc_welcome {
	uint32_t magic;
	uint32_t version;
	uint64_t abi_hash;
	int32_t status;       /* 0 or -errno */
	uint32_t session_id;
	struct vc_layout layout;
	char message[128];    /* NUL-terminated, human-readable on error */
};
static_assert(sizeof(struct vc_welcome) == 224, "welcome ABI");

/*
 * After the handshake the client may pass the server descriptors on the same
 * socket: the memfd of a page-locked segment it allocated beyond the pinned
 * pool, one per message, with SCM_RIGHTS. The message names the descriptor
 * by a token of the client's, which the ring command that uses it
 * (vcPinnedSegment, vc_cuda_manual.h) repeats. The server sends nothing back
 * on the socket. In a VM there is no socket, and no segment.
 */
#define VC_SEGFD_MAGIC 0x47455356u /* "VSEG" */

struct vc_segfd_msg {
	uint32_t magic;
	uint32_t pad;   /* 0 */
	uint64_t token; /* nonzero */
};
static_assert(sizeof(struct vc_segfd_msg) == 16, "segment descriptor message ABI");

#endif /* VC_WIRE_H */
