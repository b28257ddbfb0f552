/* SPDX-License-Identifier: MIT */
/*
 * test_guestmem.c - host-backend/core/guestmem.c: a pin that a guest's kernel
 * published in the guest-pin area (shared/vc_gpin.h), turned into pieces of
 * the guest's RAM files. The guest's RAM is a memfd presented as two ranges
 * with a hole between them (as below and above 4 GiB); entries and run lists
 * are written as vcuda.ko writes them, then broken every way a guest could.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/guestmem.h"
#include "vc_gpin.h"

#define KiB 1024ull
#define MiB (1024ull * KiB)
#define PG 4096ull

/* Guest-physical [0, 4M) is the file's [0, 4M); [8M, 12M) its [4M, 8M). */
#define LOW_END (4 * MiB)
#define HIGH (8 * MiB)

static int g_fd;
static void *g_area;
static struct vc_guestmem *g_gm;

static void setup(void)
{
	struct vc_guest_ram ram[2] = {
		{.gpa = 0, .size = LOW_END, .fd_off = 0},
		{.gpa = HIGH, .size = 4 * MiB, .fd_off = LOW_END},
	};

	g_fd = memfd_create("test-guestmem", MFD_CLOEXEC);
	ck_assert_int_ge(g_fd, 0);
	ck_assert_int_eq(ftruncate(g_fd, (off_t)(8 * MiB)), 0);
	ram[0].fd = ram[1].fd = g_fd;
	g_area = aligned_alloc(4096, VC_GPIN_AREA_SIZE);
	ck_assert_ptr_nonnull(g_area);
	memset(g_area, 0, VC_GPIN_AREA_SIZE);
	vc_gpin_host_init(g_area, VC_GPIN_F_RAM);
	ck_assert_int_eq(vc_guestmem_create(ram, 2, g_area, &g_gm), 0);
}

static void teardown(void)
{
	vc_guestmem_destroy(g_gm);
	free(g_area);
	close(g_fd);
}

static uint64_t file_off(uint64_t gpa)
{
	return gpa < LOW_END ? gpa : gpa - HIGH + LOW_END;
}

/* A page of a run list at guest-physical @gpa, as the kernel writes it. */
static void put_list(uint64_t gpa, uint64_t next, const struct vc_gpin_run *runs, uint32_t n)
{
	struct vc_gpin_page pg = {.next = next, .count = n};

	memcpy(pg.run, runs, n * sizeof(*runs));
	ck_assert_int_eq(pwrite(g_fd, &pg, sizeof(pg), (off_t)file_off(gpa)), (ssize_t)sizeof(pg));
}

/* Entry @i as the kernel publishes it. */
static void publish(uint32_t i, uint64_t gen, uint64_t addr, uint64_t len, uint64_t list, uint32_t runs,
		    uint32_t flags)
{
	struct vc_gpin_entry *e = (struct vc_gpin_entry *)((uint8_t *)g_area + VC_GPIN_ENTRIES_OFF) + i;

	*e = (struct vc_gpin_entry){.addr = addr, .len = len, .list = list, .runs = runs, .flags = flags};
	__atomic_store_n(&e->gen, gen, __ATOMIC_RELEASE);
}

static uint64_t released(uint32_t i)
{
	return __atomic_load_n((uint64_t *)((uint8_t *)g_area + VC_GPIN_RELEASED_OFF) + i, __ATOMIC_ACQUIRE);
}

static int take(uint32_t i, uint64_t gen, uint64_t addr, uint64_t len, struct vc_guest_piece **v, uint32_t *n)
{
	*v = NULL;
	*n = 0;
	return vc_guestmem_take(g_gm, i, gen, addr, len, v, n);
}

#define LIST (2 * MiB) /* where the run lists lie (guest kernel memory) */
#define ADDR 0x7f0000000000ull

START_TEST(head_says_pins_can_be_mapped)
{
	const struct vc_gpin_head *h = g_area;

	ck_assert_uint_eq(h->magic, VC_GPIN_MAGIC);
	ck_assert_uint_eq(h->version, VC_GPIN_VERSION);
	ck_assert_uint_eq(h->entries, VC_GPIN_ENTRIES);
	ck_assert_uint_eq(h->flags, VC_GPIN_F_RAM);
}
END_TEST

START_TEST(one_run_taken_once_then_let_go)
{
	struct vc_gpin_run r = {.gpa = 64 * KiB, .len = 2 * PG};
	struct vc_guest_piece *v;
	uint32_t n;

	put_list(LIST, 0, &r, 1);
	publish(3, 7, ADDR, 2 * PG, LIST, 1, VC_GPIN_E_WRITE);
	ck_assert_int_eq(take(3, 7, ADDR, 2 * PG, &v, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(v[0].fd, g_fd);
	ck_assert_uint_eq(v[0].off, 64 * KiB);
	ck_assert_uint_eq(v[0].len, 2 * PG);
	free(v);
	/* Held: not twice, and a failed request naming it lets nothing go
	 * (its mapping lives on). */
	ck_assert_int_eq(take(3, 7, ADDR, 2 * PG, &v, &n), -EBUSY);
	ck_assert_int_eq(vc_guestmem_release(g_gm, 3, 7, false), -EINVAL);
	ck_assert_uint_eq(released(3), 0);
	/* Only the generation held is let go as held. */
	ck_assert_int_eq(vc_guestmem_release(g_gm, 3, 8, true), -EINVAL);
	ck_assert_int_eq(vc_guestmem_release(g_gm, 3, 7, true), 0);
	ck_assert_uint_eq(released(3), 7);
	/* Let go: never again; not held any more. */
	ck_assert_int_eq(take(3, 7, ADDR, 2 * PG, &v, &n), -EINVAL);
	ck_assert_int_eq(vc_guestmem_release(g_gm, 3, 7, true), -EINVAL);
	ck_assert_int_eq(vc_guestmem_release(g_gm, 3, 6, false), -EINVAL);
	/* The entry's next use has a later generation. */
	publish(3, 9, ADDR, 2 * PG, LIST, 1, VC_GPIN_E_WRITE);
	ck_assert_int_eq(take(3, 9, ADDR, 2 * PG, &v, &n), 0);
	free(v);
	ck_assert_int_eq(vc_guestmem_release(g_gm, 3, 9, true), 0);
	ck_assert_uint_eq(released(3), 9);
}
END_TEST

START_TEST(a_pin_never_taken_can_be_let_go_and_then_never_taken)
{
	struct vc_gpin_run r = {.gpa = 64 * KiB, .len = PG};
	struct vc_guest_piece *v;
	uint32_t n;

	put_list(LIST, 0, &r, 1);
	publish(0, 5, ADDR, PG, LIST, 1, VC_GPIN_E_WRITE);
	ck_assert_int_eq(vc_guestmem_release(g_gm, 0, 5, true), -EINVAL); /* never taken */
	ck_assert_int_eq(vc_guestmem_release(g_gm, 0, 5, false), 0);
	ck_assert_uint_eq(released(0), 5);
	ck_assert_int_eq(take(0, 5, ADDR, PG, &v, &n), -EINVAL);
}
END_TEST

START_TEST(runs_across_the_hole_merge_where_the_file_continues)
{
	/* The low range's last pages and the high range's first continue
	 * each other in the file; a run in the middle does not. */
	struct vc_gpin_run r[3] = {
		{.gpa = LOW_END - 2 * PG, .len = 2 * PG},
		{.gpa = HIGH, .len = PG},
		{.gpa = HIGH + 1 * MiB, .len = 3 * PG},
	};
	struct vc_guest_piece *v;
	uint32_t n;

	put_list(LIST, 0, r, 3);
	publish(1, 1, ADDR, 6 * PG, LIST, 3, VC_GPIN_E_WRITE);
	ck_assert_int_eq(take(1, 1, ADDR, 6 * PG, &v, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(v[0].off, LOW_END - 2 * PG);
	ck_assert_uint_eq(v[0].len, 3 * PG);
	ck_assert_uint_eq(v[1].off, LOW_END + 1 * MiB);
	ck_assert_uint_eq(v[1].len, 3 * PG);
	free(v);
}
END_TEST

START_TEST(a_list_of_several_pages)
{
	enum { N = 2 * VC_GPIN_PAGE_RUNS + 1 }; /* 511 runs 8 KiB apart: the high range's 4 MiB */
	static struct vc_gpin_run r[N];
	struct vc_guest_piece *v;
	uint32_t n;

	/* Every other page: no two runs merge. */
	for (uint32_t i = 0; i < N; i++)
		r[i] = (struct vc_gpin_run){.gpa = HIGH + 2 * PG * i, .len = PG};
	put_list(LIST, LIST + PG, r, VC_GPIN_PAGE_RUNS);
	put_list(LIST + PG, LIST + 8 * PG, r + VC_GPIN_PAGE_RUNS, VC_GPIN_PAGE_RUNS);
	put_list(LIST + 8 * PG, 0, r + 2 * VC_GPIN_PAGE_RUNS, 1);
	publish(2, 4, ADDR, N * PG, LIST, N, VC_GPIN_E_WRITE);
	ck_assert_int_eq(take(2, 4, ADDR, N * PG, &v, &n), 0);
	ck_assert_uint_eq(n, N);
	for (uint32_t i = 0; i < N; i++) {
		ck_assert_uint_eq(v[i].off, LOW_END + 2 * PG * i);
		ck_assert_uint_eq(v[i].len, PG);
	}
	free(v);
}
END_TEST

/* A pin whose entry or list is wrong in some way is refused, and stays
 * takeable once right (nothing was held for it). */
static void refused(int want, uint32_t i, uint64_t gen, uint64_t addr, uint64_t len)
{
	struct vc_guest_piece *v;
	uint32_t n;

	ck_assert_int_eq(take(i, gen, addr, len, &v, &n), want);
	if (want)
		ck_assert_ptr_null(v);
	free(v);
	ck_assert_uint_eq(released(i), 0);
}

START_TEST(the_entry_must_say_what_the_process_asked)
{
	struct vc_gpin_run r = {.gpa = 64 * KiB, .len = 2 * PG};

	put_list(LIST, 0, &r, 1);
	publish(4, 3, ADDR, 2 * PG, LIST, 1, VC_GPIN_E_WRITE);
	refused(-EINVAL, 4, 2, ADDR, 2 * PG);         /* another generation */
	refused(-EINVAL, 4, 3, ADDR + PG, 2 * PG);    /* another address */
	refused(-EINVAL, 4, 3, ADDR, PG);             /* another length */
	refused(-EINVAL, 4, 0, ADDR, 2 * PG);         /* generation 0 */
	refused(-EINVAL, VC_GPIN_ENTRIES, 3, ADDR, 2 * PG);
	publish(4, 3, ADDR, 2 * PG, LIST, 1, 0);      /* not pinned for writing */
	refused(-EINVAL, 4, 3, ADDR, 2 * PG);
	publish(4, 3, ADDR, 2 * PG, LIST, 0, VC_GPIN_E_WRITE); /* no runs */
	refused(-EINVAL, 4, 3, ADDR, 2 * PG);
	publish(4, 3, ADDR, 2 * PG, LIST, VC_GPIN_RUNS_MAX + 1, VC_GPIN_E_WRITE);
	refused(-E2BIG, 4, 3, ADDR, 2 * PG);
	publish(4, 3, ADDR, PG + 1, LIST, 1, VC_GPIN_E_WRITE); /* not whole pages */
	refused(-EINVAL, 4, 3, ADDR, PG + 1);
	publish(4, 3, ADDR, 2 * PG, LIST, 1, VC_GPIN_E_WRITE);
	refused(0, 4, 3, ADDR, 2 * PG);
}
END_TEST

START_TEST(a_list_must_lie_in_the_guests_ram)
{
	struct vc_gpin_run r = {.gpa = 64 * KiB, .len = PG};

	put_list(LIST, 0, &r, 1);
	publish(5, 1, ADDR, PG, 6 * MiB, 1, VC_GPIN_E_WRITE); /* the hole */
	refused(-EINVAL, 5, 1, ADDR, PG);
	publish(5, 1, ADDR, PG, 64 * MiB, 1, VC_GPIN_E_WRITE); /* past the RAM */
	refused(-EINVAL, 5, 1, ADDR, PG);
	publish(5, 1, ADDR, PG, LIST + 8, 1, VC_GPIN_E_WRITE); /* not a page */
	refused(-EINVAL, 5, 1, ADDR, PG);
	publish(5, 1, ADDR, PG, UINT64_MAX - 4095, 1, VC_GPIN_E_WRITE);
	refused(-EINVAL, 5, 1, ADDR, PG);
}
END_TEST

/* One run @bad in a list of one page for a pin of @len, refused. */
static void bad_run(struct vc_gpin_run bad, uint64_t len)
{
	put_list(LIST, 0, &bad, 1);
	publish(6, 1, ADDR, len, LIST, 1, VC_GPIN_E_WRITE);
	refused(-EINVAL, 6, 1, ADDR, len);
}

START_TEST(every_run_must_be_guest_ram_in_whole_pages)
{
	bad_run((struct vc_gpin_run){.gpa = 6 * MiB, .len = PG}, PG);          /* in the hole */
	bad_run((struct vc_gpin_run){.gpa = LOW_END - PG, .len = 2 * PG}, 2 * PG); /* into the hole */
	bad_run((struct vc_gpin_run){.gpa = 12 * MiB - PG, .len = 2 * PG}, 2 * PG); /* past the end */
	bad_run((struct vc_gpin_run){.gpa = 64 * KiB + 1, .len = PG}, PG);
	bad_run((struct vc_gpin_run){.gpa = 64 * KiB, .len = PG - 1}, PG);
	bad_run((struct vc_gpin_run){.gpa = 64 * KiB, .len = 0}, PG);
	bad_run((struct vc_gpin_run){.gpa = UINT64_MAX - 4095, .len = 8192}, 8192); /* wraps */
	bad_run((struct vc_gpin_run){.gpa = 64 * KiB, .len = 2 * PG}, PG);     /* more than the pin */
	bad_run((struct vc_gpin_run){.gpa = 64 * KiB, .len = PG}, 2 * PG);     /* less */
}
END_TEST

START_TEST(a_list_must_hold_exactly_its_runs)
{
	struct vc_gpin_run r[2] = {{.gpa = 64 * KiB, .len = PG}, {.gpa = 128 * KiB, .len = PG}};

	/* Fewer runs than the entry says, and the list ends. */
	put_list(LIST, 0, r, 1);
	publish(7, 1, ADDR, 2 * PG, LIST, 2, VC_GPIN_E_WRITE);
	refused(-EINVAL, 7, 1, ADDR, 2 * PG);
	/* More runs in a page than the entry says. */
	put_list(LIST, 0, r, 2);
	publish(7, 1, ADDR, PG, LIST, 1, VC_GPIN_E_WRITE);
	refused(-EINVAL, 7, 1, ADDR, PG);
	/* The last run, but the list goes on. */
	put_list(LIST, LIST + PG, r, 1);
	publish(7, 1, ADDR, PG, LIST, 1, VC_GPIN_E_WRITE);
	refused(-EINVAL, 7, 1, ADDR, PG);
	/* A page of no runs. */
	put_list(LIST, 0, r, 0);
	publish(7, 1, ADDR, PG, LIST, 1, VC_GPIN_E_WRITE);
	refused(-EINVAL, 7, 1, ADDR, PG);
	/* A page that claims more than a page holds. */
	put_list(LIST, 0, r, 1);
	{
		uint32_t count = VC_GPIN_PAGE_RUNS + 1;

		ck_assert_int_eq(pwrite(g_fd, &count, 4, (off_t)(LIST + 8)), 4);
	}
	publish(7, 1, ADDR, PG, LIST, VC_GPIN_PAGE_RUNS + 1, VC_GPIN_E_WRITE);
	refused(-EINVAL, 7, 1, ADDR, PG);
}
END_TEST

START_TEST(a_list_that_loops_ends)
{
	struct vc_gpin_run r = {.gpa = 64 * KiB, .len = PG};

	/* The page names itself as the next: the walk ends at the runs the
	 * entry claims, however many that is. */
	put_list(LIST, LIST, &r, 1);
	publish(8, 1, ADDR, PG * 1000, LIST, 1000, VC_GPIN_E_WRITE);
	refused(-EINVAL, 8, 1, ADDR, PG * 1000);
}
END_TEST

START_TEST(ram_ranges_are_checked)
{
	struct vc_guest_ram ram[2] = {
		{.gpa = 0, .size = 4 * MiB, .fd = g_fd},
		{.gpa = 2 * MiB, .size = 4 * MiB, .fd = g_fd},
	};
	struct vc_guest_ram many[17];
	struct vc_guestmem *gm = NULL;

	ck_assert_int_eq(vc_guestmem_create(ram, 2, g_area, &gm), -EINVAL); /* overlap */
	ram[1].gpa = 4 * MiB + 1;
	ck_assert_int_eq(vc_guestmem_create(ram, 2, g_area, &gm), -EINVAL); /* unaligned */
	ram[1] = (struct vc_guest_ram){.gpa = UINT64_MAX - 4095, .size = 8192, .fd = g_fd};
	ck_assert_int_eq(vc_guestmem_create(ram, 2, g_area, &gm), -EINVAL); /* wraps */
	ram[1] = (struct vc_guest_ram){.gpa = 8 * MiB, .size = 0, .fd = g_fd};
	ck_assert_int_eq(vc_guestmem_create(ram, 2, g_area, &gm), -EINVAL); /* empty */
	ram[1] = (struct vc_guest_ram){.gpa = 8 * MiB, .size = MiB, .fd = -1};
	ck_assert_int_eq(vc_guestmem_create(ram, 2, g_area, &gm), -EINVAL);
	for (int i = 0; i < 17; i++)
		many[i] = (struct vc_guest_ram){.gpa = (uint64_t)i * MiB, .size = MiB, .fd = g_fd};
	ck_assert_int_eq(vc_guestmem_create(many, 17, g_area, &gm), -EINVAL);
	ck_assert_int_eq(vc_guestmem_create(many, 16, g_area, &gm), 0);
	vc_guestmem_destroy(gm);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("guestmem");
	TCase *t = tcase_create("pins");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, head_says_pins_can_be_mapped);
	tcase_add_test(t, one_run_taken_once_then_let_go);
	tcase_add_test(t, a_pin_never_taken_can_be_let_go_and_then_never_taken);
	tcase_add_test(t, runs_across_the_hole_merge_where_the_file_continues);
	tcase_add_test(t, a_list_of_several_pages);
	tcase_add_test(t, the_entry_must_say_what_the_process_asked);
	tcase_add_test(t, a_list_must_lie_in_the_guests_ram);
	tcase_add_test(t, every_run_must_be_guest_ram_in_whole_pages);
	tcase_add_test(t, a_list_must_hold_exactly_its_runs);
	tcase_add_test(t, a_list_that_loops_ends);
	tcase_add_test(t, ram_ranges_are_checked);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	SRunner *r = srunner_create(suite());
	int failed;

	srunner_run_all(r, CK_NORMAL);
	failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
