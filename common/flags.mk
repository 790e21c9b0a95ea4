# The compiler flags of every userspace component, in one place: each
# component's Makefile includes this file (through common/lib.mk) and adds
# only what is its own (its include directories, its libraries, -fPIE or
# -fPIC for what it links).
#
# Variables a user may set: CC, CFLAGS (default -O2 -g), CPPFLAGS, LDFLAGS,
# WERROR (default -Werror; empty to drop it).

COMMON := $(patsubst %/,%,$(dir $(abspath $(lastword $(MAKEFILE_LIST)))))

CFLAGS ?= -O2 -g
WERROR ?= -Werror

# Warnings that keep the code honest, in GNU C11.
WARN_CFLAGS := -std=gnu11 -Wall -Wextra $(WERROR) -Wshadow -Wmissing-prototypes \
	-Wstrict-prototypes -Wformat=2 -Wno-format-nonliteral -Wundef
# Hardening as Debian builds it. -fPIE or -fPIC is the component's choice:
# it depends on what the object is linked into.
BASE_CFLAGS := $(WARN_CFLAGS) -fno-strict-aliasing -fstack-protector-strong
BASE_CPPFLAGS := -D_GNU_SOURCE -D_FORTIFY_SOURCE=2 -I$(COMMON)/include
BASE_LDFLAGS := -Wl,-z,relro,-z,now -Wl,--as-needed
