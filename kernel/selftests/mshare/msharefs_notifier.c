// SPDX-License-Identifier: GPL-2.0
/*
 * Windows and MMU notifiers exclude each other: a secondary MMU follows
 * the invalidations of the mm it registered with, which never see the
 * region's pages go, so an mm that has (or had) a window cannot register
 * an MMU notifier, and an mm with a notifier cannot map a window; both
 * fail with EBUSY. KVM_CREATE_VM, which registers a notifier on the
 * caller's mm, is the notifier user: the test kernel has KVM (kvm_amd on
 * QEMU's TCG CPU with SVM), and without /dev/kvm these tests fail rather
 * than skip. Checked: a fresh process creates a VM (the control); a
 * process with a window cannot, nor after munmap() of the window (the
 * mm's flag is never cleared: refusing is the safe side), nor its fork()
 * child; a process with a VM cannot map a window and is left with no
 * mapping; exec() starts a new mm that can create a VM again.
 *
 * Every case runs in a child so that the test process's mm stays clean:
 * it only creates the region and maps a memfd object into it.
 */
#include <fcntl.h>
#include <sys/ioctl.h>
#include <linux/kvm.h>

#include "mshare_test.h"

#define OBJ_ROFF	SZ_1G
#define OBJ_SIZE	SZ_64K
#define KVM_PATH	"/dev/kvm"
/* Set in the environment of the exec()ed helper; see exec_helper(). */
#define HELPER_ENV	"MSHAREFS_NOTIFIER_HELPER"

FIXTURE(notifier) {
	struct mshare_ctx c;
	uint64_t align;
	int fd;
	int memfd;
	int kvm;
};

FIXTURE_SETUP(notifier)
{
	int version;

	self->fd = self->memfd = self->kvm = -1;
	self->kvm = open(KVM_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->kvm)
		TH_LOG("%s: %s: the test kernel has CONFIG_KVM=y and CONFIG_KVM_AMD=y, and QEMU's TCG CPU \"max\" has SVM; without KVM nothing here can be checked",
		       KVM_PATH, strerror(errno));
	version = ioctl(self->kvm, KVM_GET_API_VERSION, 0);
	ASSERT_EQ(KVM_API_VERSION, version)
		TH_LOG("KVM_GET_API_VERSION: %s", strerror(errno));

	mshare_test_setup(_metadata, &self->c, "notifier");
	self->align = self->c.align;
	self->fd = test_region(_metadata, &self->c, "r", self->align);
	self->memfd = ASSERT_SYS(memfd_sized(OBJ_SIZE));
	ASSERT_EQ(0, fd_pattern_fill(self->memfd, 0, OBJ_SIZE, 1));
	test_map_fd(_metadata, self->fd, OBJ_ROFF, OBJ_SIZE, self->memfd, 0);
}

FIXTURE_TEARDOWN(notifier)
{
	if (self->memfd >= 0)
		close(self->memfd);
	if (self->fd >= 0)
		close(self->fd);
	if (self->kvm >= 0)
		close(self->kvm);
	mshare_ctx_fini(&self->c);
}

/* In a child: KVM_CREATE_VM must succeed; returns the VM fd. */
#define CHILD_CREATE_VM(_kvm) ({					\
	int __vm = ioctl(_kvm, KVM_CREATE_VM, 0);			\
	CHILD_CHECK(__vm >= 0, "KVM_CREATE_VM: %m");			\
	__vm;								\
})

/* In a child: KVM_CREATE_VM must fail with EBUSY. */
#define CHILD_CREATE_VM_EBUSY(_kvm) do {				\
	int __vm, __err;						\
	errno = 0;							\
	__vm = ioctl(_kvm, KVM_CREATE_VM, 0);				\
	__err = errno;							\
	CHILD_CHECK(__vm == -1 && __err == EBUSY,			\
		    "KVM_CREATE_VM returned %d, errno %s (expected EBUSY)", \
		    __vm, errname(__err));				\
} while (0)

/* In a child: map a read-write window and check the object's data. */
static char *child_window(FIXTURE_DATA(notifier) *self)
{
	char *win = mshare_window(self->fd, self->align, NULL, 0);

	CHILD_CHECK(win != MAP_FAILED, "window: %m");
	CHILD_CHECK(pattern_check(win + OBJ_ROFF, OBJ_SIZE, 1) == -1, "data");
	return win;
}

/*
 * The exec()ed helper: with HELPER_ENV in its environment, this program
 * only creates a VM, before the harness starts, and exits 0 on success.
 */
static void __attribute__((constructor)) exec_helper(void)
{
	int kvm, vm;

	if (!getenv(HELPER_ENV))
		return;
	kvm = open(KVM_PATH, O_RDWR | O_CLOEXEC);
	CHILD_CHECK(kvm >= 0, "exec helper: %s: %m", KVM_PATH);
	vm = ioctl(kvm, KVM_CREATE_VM, 0);
	CHILD_CHECK(vm >= 0, "exec helper: KVM_CREATE_VM after exec: %m");
	_exit(0);
}

TEST_F(notifier, create_vm_without_window)
{
	pid_t pid;

	pid = ASSERT_SYS(child_fork());
	if (pid == 0) {
		close(CHILD_CREATE_VM(self->kvm));
		_exit(0);
	}
	ASSERT_CHILD_OK(pid);
}

TEST_F(notifier, window_blocks_create_vm)
{
	pid_t pid;

	pid = ASSERT_SYS(child_fork());
	if (pid == 0) {
		child_window(self);
		CHILD_CREATE_VM_EBUSY(self->kvm);
		_exit(0);
	}
	ASSERT_CHILD_OK(pid);

	/* a window never touched counts the same */
	pid = ASSERT_SYS(child_fork());
	if (pid == 0) {
		char *win = mshare_window(self->fd, self->align, NULL, 0);

		CHILD_CHECK(win != MAP_FAILED, "window: %m");
		CHILD_CREATE_VM_EBUSY(self->kvm);
		_exit(0);
	}
	ASSERT_CHILD_OK(pid);
}

/*
 * The mm keeps its flag after the window is gone: clearing it would need
 * to know that no notifier user could still see pages through a window,
 * and refusing is the conservative, intended behaviour.
 */
TEST_F(notifier, munmap_keeps_blocking)
{
	pid_t pid;

	pid = ASSERT_SYS(child_fork());
	if (pid == 0) {
		char *win = child_window(self);

		CHILD_CHECK(munmap(win, self->align) == 0, "munmap: %m");
		CHILD_CHECK(!maps_has_range(win, self->align),
			    "the window is still in /proc/self/maps");
		CHILD_CREATE_VM_EBUSY(self->kvm);
		_exit(0);
	}
	ASSERT_CHILD_OK(pid);
}

/*
 * In a child: with a VM, mapping a window at an aligned free address
 * fails with EBUSY and leaves nothing there; without a hint it fails too.
 * With control, a child without a VM maps the window the same way.
 */
static int map_at(FIXTURE_DATA(notifier) *self, bool control)
{
	char *at, *win, *probe;
	int vm = -1;

	/* the VM first: nothing it might map can take the free address */
	if (!control)
		vm = CHILD_CREATE_VM(self->kvm);
	at = reserve_aligned(self->align, self->align);
	CHILD_CHECK(at, "no free aligned address");
	CHILD_CHECK(munmap(at, self->align) == 0, "munmap: %m");

	errno = 0;
	win = mshare_window(self->fd, self->align, at, MAP_FIXED_NOREPLACE);
	if (control) {
		CHILD_CHECK(win == at, "window at %p: %p %m", at, win);
		CHILD_CHECK(pattern_check(win + OBJ_ROFF, OBJ_SIZE, 1) == -1,
			    "data");
		CHILD_CHECK(maps_has_range(at, self->align),
			    "the window is not in /proc/self/maps");
		return 0;
	}
	CHILD_CHECK(win == MAP_FAILED && errno == EBUSY,
		    "window with a VM: %p, errno %s (expected EBUSY)", win,
		    errname(errno));
	CHILD_CHECK(!maps_has_range(at, self->align),
		    "the failed window is in /proc/self/maps");
	/* nothing at all is left there */
	probe = mmap(at, self->c.page, PROT_NONE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	CHILD_CHECK(probe == at, "something is left at %p: %p %m", at, probe);
	munmap(probe, self->c.page);

	errno = 0;
	win = mshare_window(self->fd, self->align, NULL, 0);
	CHILD_CHECK(win == MAP_FAILED && errno == EBUSY,
		    "window with a VM: %p, errno %s (expected EBUSY)", win,
		    errname(errno));
	close(vm);
	return 0;
}

TEST_F(notifier, vm_blocks_window)
{
	pid_t pid;

	pid = ASSERT_SYS(child_fork());
	if (pid == 0)
		_exit(map_at(self, true));
	ASSERT_CHILD_OK(pid);
	pid = ASSERT_SYS(child_fork());
	if (pid == 0)
		_exit(map_at(self, false));
	ASSERT_CHILD_OK(pid);
}

/* A child forked by a process with a window inherits it, and the flag. */
static int fork_with_window(FIXTURE_DATA(notifier) *self)
{
	char *win = child_window(self);
	pid_t pid;
	int status;

	pid = child_fork();
	CHILD_CHECK(pid >= 0, "fork: %m");
	if (pid == 0) {
		CHILD_CHECK(pattern_check(win + OBJ_ROFF, OBJ_SIZE, 1) == -1,
			    "the inherited window");
		CHILD_CREATE_VM_EBUSY(self->kvm);
		_exit(0);
	}
	status = child_wait(pid);
	CHILD_CHECK(status_ok(status), "grandchild %s", status_str(status));
	return 0;
}

TEST_F(notifier, fork_child_of_window_blocks)
{
	pid_t pid;

	pid = ASSERT_SYS(child_fork());
	if (pid == 0)
		_exit(fork_with_window(self));
	ASSERT_CHILD_OK(pid);
}

/* exec() replaces the mm: the new one has no window and no flag. */
static int exec_with_window(FIXTURE_DATA(notifier) *self)
{
	char *const argv[] = { "msharefs_notifier", NULL };
	char *const envp[] = { HELPER_ENV "=1", NULL };

	child_window(self);
	CHILD_CREATE_VM_EBUSY(self->kvm);
	execve("/proc/self/exe", argv, envp);
	CHILD_CHECK(0, "execve /proc/self/exe: %m");
	return 1;
}

TEST_F(notifier, exec_clears)
{
	pid_t pid;

	pid = ASSERT_SYS(child_fork());
	if (pid == 0)
		_exit(exec_with_window(self));
	ASSERT_CHILD_OK(pid);
}

TEST_HARNESS_MAIN
