/* SPDX-License-Identifier: MIT */
/*
 * test_fdbroker.c - descriptors among a listener's workers
 * (host-backend/resources/fdbroker.c): this process is the listener, its
 * forked children the workers. A descriptor one child gives, another gets
 * (the same file); an unknown key, another child's drop, a dropped or reaped
 * key, and a process the listener did not fork are refused.
 */
#include <check.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "resources/fdbroker.h"

/* The listener's part: serve requests until child @pid exits; its status. */
static int serve_until(pid_t pid)
{
	int st = -1;

	for (int i = 0; i < 400; i++) {
		struct pollfd p;

		if (vc_fdbroker_pollfd(&p) && poll(&p, 1, 25) > 0)
			vc_fdbroker_handle();
		if (waitpid(pid, &st, WNOHANG) == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 100;
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return 101;
}

/* A memfd holding @text. */
static int text_fd(const char *text)
{
	int fd = memfd_create("fdbroker-test", MFD_CLOEXEC);

	if (fd >= 0 && write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* Whether @fd's file starts with @text. */
static int holds(int fd, const char *text)
{
	char b[64] = {0};

	return pread(fd, b, sizeof(b) - 1, 0) == (ssize_t)strlen(text) && !strcmp(b, text);
}

/* A child: give a file holding @text, write the key to @out, and wait for a
 * byte on @in before dropping it (when @drop) and exiting. */
static pid_t giver(const char *text, int out, int in, int drop)
{
	pid_t pid = fork();

	if (pid == 0) {
		uint8_t key[VC_FDBROKER_KEY];
		int fd = text_fd(text);
		char b;

		if (fd < 0 || vc_fdbroker_put(fd, key))
			_exit(1);
		close(fd);
		if (write(out, key, sizeof(key)) != (ssize_t)sizeof(key) || read(in, &b, 1) != 1)
			_exit(2);
		_exit(drop && vc_fdbroker_drop(key) ? 3 : 0);
	}
	return pid;
}

/* A child: get @key; exit 0 when the file holds @text, 10 + -rc when the
 * broker refused, 2 when it gave another file. With @drop, first try to
 * drop it (not its giver: refused, so it must still be there). */
static pid_t getter(const uint8_t key[VC_FDBROKER_KEY], const char *text, int drop)
{
	pid_t pid = fork();

	if (pid == 0) {
		int fd = -1, rc;

		if (drop && vc_fdbroker_drop(key) != -ENOENT)
			_exit(4);
		rc = vc_fdbroker_get(key, &fd);
		if (rc)
			_exit(10 + (-rc & 0x3f));
		_exit(holds(fd, text) ? 0 : 2);
	}
	return pid;
}

/* Read a key a giver wrote, serving requests meanwhile. */
static void key_from(int in, uint8_t key[VC_FDBROKER_KEY])
{
	for (int i = 0; i < 400; i++) {
		struct pollfd p[2] = {{.fd = in, .events = POLLIN}};
		int n = 1 + vc_fdbroker_pollfd(&p[1]);

		poll(p, (nfds_t)n, 25);
		if (n == 2 && (p[1].revents & POLLIN))
			vc_fdbroker_handle();
		if (p[0].revents & POLLIN) {
			ck_assert_int_eq(read(in, key, VC_FDBROKER_KEY), VC_FDBROKER_KEY);
			return;
		}
	}
	ck_abort_msg("no key from the giver");
}

/* The listener's broker, and a giver of @text (dropping it when let go if
 * @drop): its pid, its key into @key, the end that lets it go into *@hold. */
static pid_t start_giver(const char *text, int drop, uint8_t key[VC_FDBROKER_KEY], int *hold)
{
	int k[2], h[2];
	pid_t a;

	ck_assert_int_eq(vc_fdbroker_create(), 0);
	ck_assert_int_eq(pipe(k), 0);
	ck_assert_int_eq(pipe(h), 0);
	a = giver(text, k[1], h[0], drop);
	key_from(k[0], key);
	*hold = h[1];
	return a;
}

/* Let giver @a go through @hold; its exit status. */
static int let_go(pid_t a, int hold)
{
	ck_assert_int_eq(write(hold, "x", 1), 1);
	return serve_until(a);
}

START_TEST(given_by_one_child_got_by_another)
{
	uint8_t key[VC_FDBROKER_KEY], none[VC_FDBROKER_KEY];
	int hold;
	pid_t a = start_giver("the same file", 1, key, &hold);

	ck_assert(!vc_fdbroker_available()); /* the listener asks no one */
	ck_assert_int_eq(serve_until(getter(key, "the same file", 0)), 0);
	ck_assert_int_eq(serve_until(getter(key, "the same file", 1)), 0); /* a stranger's drop */
	memset(none, 0x5a, sizeof(none));
	ck_assert_int_eq(serve_until(getter(none, "", 0)), 10 + ENOENT);
	/* its giver takes it back: gone */
	ck_assert_int_eq(let_go(a, hold), 0);
	ck_assert_int_eq(serve_until(getter(key, "the same file", 0)), 10 + ENOENT);
	vc_fdbroker_destroy();
}
END_TEST

START_TEST(a_reaped_givers_are_gone)
{
	uint8_t key[VC_FDBROKER_KEY];
	int hold;
	pid_t a = start_giver("kept while it lives", 0, key, &hold);

	ck_assert_int_eq(let_go(a, hold), 0);
	/* it ended without dropping: kept until the listener reaps it */
	ck_assert_int_eq(serve_until(getter(key, "kept while it lives", 0)), 0);
	vc_fdbroker_reap(a);
	ck_assert_int_eq(serve_until(getter(key, "", 0)), 10 + ENOENT);
	vc_fdbroker_destroy();
}
END_TEST

START_TEST(a_process_not_forked_by_the_listener_is_not_served)
{
	uint8_t key[VC_FDBROKER_KEY];
	int hold;
	pid_t a = start_giver("not for strangers", 0, key, &hold), mid;

	/* a grandchild: its parent is not the listener */
	mid = fork();
	if (mid == 0) {
		pid_t g = fork();
		int st = 0, fd = -1;

		if (g == 0)
			_exit(vc_fdbroker_get(key, &fd) < 0 && fd < 0 ? 0 : 1);
		waitpid(g, &st, 0);
		_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 9);
	}
	ck_assert_int_eq(serve_until(mid), 0);
	ck_assert_int_eq(let_go(a, hold), 0);
	vc_fdbroker_reap(a);
	vc_fdbroker_destroy();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("fdbroker");
	TCase *t = tcase_create("broker");
	SRunner *r;
	int failed;

	tcase_set_timeout(t, 60);
	tcase_add_test(t, given_by_one_child_got_by_another);
	tcase_add_test(t, a_reaped_givers_are_gone);
	tcase_add_test(t, a_process_not_forked_by_the_listener_is_not_served);
	suite_add_tcase(s, t);
	r = srunner_create(s);
	srunner_run_all(r, CK_NORMAL);
	failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? 1 : 0;
}
