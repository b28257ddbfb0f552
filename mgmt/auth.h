/* SPDX-License-Identifier: MIT */
/*
 * auth.h - who may do what on vcuda-mgmtd's socket. Anyone who can connect
 * may read; changing state needs uid 0, the daemon's own uid, or membership
 * of the admin group (--admin-group, default vcuda-admin), as the kernel
 * reports the peer at connect time (SO_PEERCRED, SO_PEERGROUPS): nothing the
 * client says about itself counts.
 */
#ifndef VC_MGMT_AUTH_H
#define VC_MGMT_AUTH_H

#include <stdbool.h>
#include <sys/types.h>

#define VC_AUTH_MAX_GROUPS 256

struct vc_peer {
	pid_t pid;
	uid_t uid;
	gid_t gid;
	bool admin;
};

struct vc_auth {
	char group[64];  /* the admin group's name */
	gid_t gid;
	bool group_exists;
};

/**
 * vc_auth_init() - look up the admin group @group. A group that does not
 * exist is not an error (only root and the daemon's user are
 * administrators then); vc_auth_describe() says so.
 */
void vc_auth_init(struct vc_auth *a, const char *group);

/** vc_auth_describe() - "root or group vcuda-admin (gid 990)" for logs and errors. */
const char *vc_auth_describe(const struct vc_auth *a, char *buf, size_t len);

/**
 * vc_auth_peer() - the credentials of the process connected on @fd and
 * whether it is an administrator. Returns 0 or -errno.
 */
int vc_auth_peer(const struct vc_auth *a, int fd, struct vc_peer *p);

/**
 * vc_auth_is_admin() - the rule itself, for @uid with primary group @gid and
 * the @n supplementary groups in @groups.
 */
bool vc_auth_is_admin(const struct vc_auth *a, uid_t uid, gid_t gid, const gid_t *groups, int n);

#endif /* VC_MGMT_AUTH_H */
