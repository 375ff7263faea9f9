#!/bin/bash
# tutorial.sh: the first steps with marsfs, on a mounted tree, with plain
# shell tools. It checks what it reads, and exits non-zero with a message at
# the first surprise.
#
# Usage: docs/tutorial.sh MOUNTPOINT
# where the tree is mounted, e.g. by `marsfs up --mount MOUNTPOINT` or
# `marsfs mount MOUNTPOINT`.
set -u

M=${1:?usage: tutorial.sh MOUNTPOINT}
fail() {
	echo "tutorial: $*" >&2
	exit 1
}
# expect WHAT GOT WANT
expect() {
	[ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"
}
tmp=$(mktemp -d) || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT

# Opening clone makes a session, and reads its number.
s=$(cat "$M/sessions/clone") || fail "cannot read $M/sessions/clone"
S=$M/sessions/$s
[ -d "$S" ] || fail "session $s has no directory"

# A spec written to submit is a graph, submitted when the file is closed.
echo 'a = arange(10, chunks=3) * 2' > "$S/submit" || fail "submit refused: $(cat "$S/error")"
# wait blocks until the graph ends, then shows its status.
state=$(head -n 1 "$S/graphs/last/wait")
expect "state of graph 1" "$state" SUCCEEDED
expect "tensors/a/text" "$(cat "$S/tensors/a/text")" "[ 0  2  4  6  8 10 12 14 16 18]"
grep -qx 'shape (10,)' "$S/tensors/a/meta" || fail "tensors/a/meta has no 'shape (10,)':
$(cat "$S/tensors/a/meta")"
expect "chunks of a" "$(ls "$S/tensors/a/chunks" | tr '\n' ' ')" "0 1 2 3 "

# plan shows how the graph was placed: a header, a blank line, then one
# line an operand: key, op, inputs, worker, priority.
plan=$(cat "$S/graphs/1/plan")
grep -qx 'transfer_bytes [0-9]*' <<< "$plan" || fail "plan has no transfer_bytes line:
$plan"
ops=$(sed -n 's/^operands //p' "$S/graphs/1/status")
expect "operand lines of plan" "$(sed '1,/^$/d' <<< "$plan" | wc -l)" "$ops"

# Kept tensors can be named by later specs of the session.
echo 'b = a.sum()' > "$S/submit" || fail "submit refused: $(cat "$S/error")"
expect "state of graph 2" "$(head -n 1 "$S/graphs/last/wait")" SUCCEEDED
expect "tensors/b/text" "$(cat "$S/tensors/b/text")" 90

# events follows a running graph, a line a state transition, and ends
# when the graph does.
echo 'c = ones((1500, 1500), chunks=500)
d = (c @ c).sum()' > "$S/submit" || fail "submit refused: $(cat "$S/error")"
lines=0
running=0
while read -r _time key op state worker attempt; do
	[ -n "$key" ] && [ -n "$op" ] && [ -n "$worker" ] && [ -n "$attempt" ] ||
		fail "events: short line"
	case $state in
	PENDING | READY | RUNNING | FINISHED | FREED) ;;
	*) fail "events: unexpected state $state" ;;
	esac
	if [ $lines -eq 0 ] && [ "$(head -n 1 "$S/graphs/last/status")" = RUNNING ]; then
		running=1
	fi
	lines=$((lines + 1))
done < "$S/graphs/last/events"
[ $lines -gt 0 ] || fail "events: no lines"
[ $running -eq 1 ] || fail "events: the graph had ended before its first event was read"
expect "status once events ended" "$(head -n 1 "$S/graphs/last/status")" SUCCEEDED
expect "tensors/d/text" "$(cat "$S/tensors/d/text")" 3375000000.0

# A bad spec is refused at the write: echo fails, the reason is in error.
if echo 'x = frobnicate(3)' > "$S/submit" 2> /dev/null; then
	fail "a call of an unknown function was accepted"
fi
expect "error" "$(cat "$S/error")" "1:5: unknown function frobnicate"
# What can only be judged whole is refused at the close, with the reason
# in error too; either way no graph is made.
printf 'y = (1' > "$S/submit"
expect "error" "$(cat "$S/error")" "1:5: '(' was never closed"
expect "graphs" "$(ls "$S/graphs" | tr '\n' ' ')" "1 2 3 last "

# Tensors go out as .npy files, and come back in by copying a .npy file
# into tensors/: x.npy becomes the tensor x.
cp "$S/tensors/a/npy" "$tmp/x.npy" || fail "cp tensors/a/npy"
cp "$tmp/x.npy" "$S/tensors/" || fail "upload refused: $(cat "$S/error")"
cmp -s "$S/tensors/x/data" "$S/tensors/a/data" || fail "tensors/x/data differs from tensors/a/data"
echo 'y = x + 1' > "$S/submit" || fail "submit refused: $(cat "$S/error")"
expect "state of graph 4" "$(head -n 1 "$S/graphs/last/wait")" SUCCEEDED
expect "tensors/y/text" "$(cat "$S/tensors/y/text")" "[ 1  3  5  7  9 11 13 15 17 19]"
expect "tensors" "$(ls "$S/tensors" | tr '\n' ' ')" "a b d x y "

# Closing the session frees its tensors.
echo close > "$S/ctl" || fail "ctl close refused: $(cat "$S/error")"
[ ! -e "$S" ] || fail "session $s still there after close"
echo "tutorial: ok"
