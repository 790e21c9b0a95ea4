# What a userspace component's Makefile includes to build with the common
# flags (flags.mk) and to link the internal library, COMMON_LIB
# (common/build/libmshare-common.a: static, position-independent so that it
# goes into programs and shared objects alike, never installed; README.md).
# Link it after the component's own objects: only the members a program
# needs are pulled in.

include $(dir $(lastword $(MAKEFILE_LIST)))flags.mk

COMMON_LIB := $(COMMON)/build/libmshare-common.a

# The rules below must not become the including Makefile's default goal.
common_saved_goal := $(.DEFAULT_GOAL)

# The library is common/'s product: its Makefile decides whether it is up
# to date. The recipe is the library's own (not an order-only phony
# prerequisite), so that make looks at its time again after the sub-make
# and relinks what depends on it in the same run.
.PHONY: common-lib
common-lib: $(COMMON_LIB)

$(COMMON_LIB): common-lib-force
	$(MAKE) -C $(COMMON) build/libmshare-common.a

.PHONY: common-lib-force
common-lib-force:

.DEFAULT_GOAL := $(common_saved_goal)
