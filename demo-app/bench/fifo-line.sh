# shellcheck shell=bash
# fifo_line FD SEC: read one line from descriptor FD, waiting at most SEC
# seconds; sourced by bench-guest.sh for its barrier FIFO.
# Returns 0 with the whole line in LINE, 1 on a timeout (or end of file)
# with LINE empty. A timeout can strike while bash is still taking a line
# in byte by byte: the part it read stays in FIFO_PART, and the next call
# completes that line instead of returning its rest as a line of its own.
# After the last call, a non-empty FIFO_PART is a line whose writer never
# finished it.
# LINE and FIFO_PART are the caller's to read.
# shellcheck disable=SC2034
FIFO_PART=
fifo_line() {
	local chunk=''
	if IFS= read -r -t "$2" chunk <&"$1"; then
		LINE=$FIFO_PART$chunk FIFO_PART=
		return 0
	fi
	FIFO_PART+=$chunk LINE=
	return 1
}
