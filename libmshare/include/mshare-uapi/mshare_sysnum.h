/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The numbers of the mshare system calls: <sys/syscall.h> has them when
 * the installed kernel headers of our tree come first on the include path
 * (their asm/unistd_64.h); otherwise the x86-64 numbers of
 * arch/x86/entry/syscalls/syscall_64.tbl in the kernel patches ("64" ABI
 * only: the calls do not exist for x32 or i386). check.sh compares them
 * with a HEADERS directory. Not installed: only the library and the tests
 * make the calls.
 */

#ifndef MSHARE_SYSNUM_H
#define MSHARE_SYSNUM_H

#include <sys/syscall.h>

#if defined(__x86_64__) && !defined(__ILP32__)
# ifndef __NR_mshare_create
#  define __NR_mshare_create	600
# endif
# ifndef __NR_mshare_attach
#  define __NR_mshare_attach	601
# endif
# ifndef __NR_mshare_map
#  define __NR_mshare_map	602
# endif
# ifndef __NR_mshare_unmap
#  define __NR_mshare_unmap	603
# endif
# ifndef __NR_mshare_protect
#  define __NR_mshare_protect	604
# endif
# ifndef __NR_mshare_advise
#  define __NR_mshare_advise	605
# endif
#elif !defined(__NR_mshare_create) || !defined(__NR_mshare_attach) || \
      !defined(__NR_mshare_map) || !defined(__NR_mshare_unmap) || \
      !defined(__NR_mshare_protect) || !defined(__NR_mshare_advise)
# error "mshare system call numbers are known for x86-64 only; install kernel headers that define __NR_mshare_*"
#endif

#endif /* MSHARE_SYSNUM_H */
