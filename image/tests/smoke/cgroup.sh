#!/bin/sh
# Pure cgroup v2 (no v1 hierarchy) with the memory controller.
. "$(dirname "$0")/tap.sh"
ktap_plan "5"
check "/sys/fs/cgroup is cgroup2" sh -c '[ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ]'
check "no cgroup v1 hierarchy is mounted" sh -c '! grep -q " cgroup " /proc/mounts'
check "memory controller available" grep -qw memory /sys/fs/cgroup/cgroup.controllers
check "memory controller enabled for children" grep -qw memory /sys/fs/cgroup/cgroup.subtree_control
cg=$(sed -n 's/^0:://p' /proc/self/cgroup)
check "this test's cgroup ($cg) accounts memory" test -r "/sys/fs/cgroup$cg/memory.current"
