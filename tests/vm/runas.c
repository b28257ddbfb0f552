/* SPDX-License-Identifier: MIT */
/* runas.c - run a command as an unprivileged user in the test guest (whose
 * busybox has no su): runas UID COMMAND [ARGS...]. */
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	uid_t uid;

	if (argc < 3) {
		fprintf(stderr, "usage: runas UID COMMAND [ARGS...]\n");
		return 2;
	}
	uid = (uid_t)atoi(argv[1]);
	if (setgroups(0, NULL) || setgid((gid_t)uid) || setuid(uid)) {
		perror("runas");
		return 1;
	}
	execvp(argv[2], argv + 2);
	perror(argv[2]);
	return 127;
}
