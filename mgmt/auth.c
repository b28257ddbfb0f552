/* SPDX-License-Identifier: MIT */
/* auth.c - peer credentials and the admin rule (auth.h). */
#include "auth.h"

#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

void vc_auth_init(struct vc_auth *a, const char *group)
{
	struct group *g;

	memset(a, 0, sizeof(*a));
	snprintf(a->group, sizeof(a->group), "%s", group);
	g = getgrnam(group);
	if (g) {
		a->gid = g->gr_gid;
		a->group_exists = true;
	}
}

const char *vc_auth_describe(const struct vc_auth *a, char *buf, size_t len)
{
	if (a->group_exists)
		snprintf(buf, len, "root or a member of group %s (gid %u)", a->group, (unsigned)a->gid);
	else
		snprintf(buf, len, "root (group %s does not exist on this host; create it to delegate)", a->group);
	return buf;
}

bool vc_auth_is_admin(const struct vc_auth *a, uid_t uid, gid_t gid, const gid_t *groups, int n)
{
	if (uid == 0 || uid == geteuid())
		return true;
	if (!a->group_exists)
		return false;
	if (gid == a->gid)
		return true;
	for (int i = 0; i < n; i++)
		if (groups[i] == a->gid)
			return true;
	return false;
}

int vc_auth_peer(const struct vc_auth *a, int fd, struct vc_peer *p)
{
	gid_t groups[VC_AUTH_MAX_GROUPS];
	socklen_t len = sizeof(struct ucred);
	struct ucred cred;
	int n = 0;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return -errno;
	/* Supplementary groups as of connect(); a peer with more than we can
	 * hold is judged on its primary group and the first VC_AUTH_MAX_GROUPS. */
	len = sizeof(groups);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) == 0)
		n = (int)(len / sizeof(gid_t));
	p->pid = cred.pid;
	p->uid = cred.uid;
	p->gid = cred.gid;
	p->admin = vc_auth_is_admin(a, cred.uid, cred.gid, groups, n);
	return 0;
}
