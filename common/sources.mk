# The sources of common/src that the protocol (protocol.c) needs, for what
# compiles them itself instead of linking COMMON_LIB: libmshare, which is
# installed and carries them, and the fuzz target, built with the
# sanitizers. Names relative to common/src.
PROTOCOL_SRCS := protocol.c errno-name.c region-name.c strprintf.c strv.c utf8.c
