#!/usr/bin/env bash
# tui-hostile.sh plays a lesson in a real terminal (tmux, 80x24) under the
# input and terminals that used to hang the player, and checks that it
# still quits in time and still draws:
#
#   - one raw 0xFF byte (an 8-bit Meta key, pasted Latin-1), then q: quits
#     within 2 s; the same with Ctrl-C;
#   - TERM=vt100, whose terminfo asks for padding: a burst of 100 keys and
#     then q quits within 3 s, and 40 steps draw the lesson as at
#     xterm-256color;
#   - NO_COLOR=1: the screen has no colour at all (and without it, it has).
#
# It prints the measured quit times. Usage: scripts/tui-hostile.sh
# BROKERLAB_BIN=path runs that binary instead of building ./cmd/brokerlab.
set -euo pipefail
cd "$(dirname "$0")/.."

lesson=poison-dlq
if ! command -v tmux >/dev/null 2>&1; then
	echo "tui-hostile: tmux is not installed" >&2
	exit 1
fi

work=$(mktemp -d)
sessions=()
cleanup() {
	for s in "${sessions[@]}"; do
		tmux kill-session -t "$s" 2>/dev/null || true
	done
	rm -rf "$work"
}
trap cleanup EXIT

bin=${BROKERLAB_BIN:-}
if [ -z "$bin" ]; then
	go build -o "$work/brokerlab" ./cmd/brokerlab
	bin=$work/brokerlab
fi

fail=0
n=0
session=
exitf=

now_ms() { date +%s%3N; }
screen() { tmux capture-pane -p -t "$session"; }
# Screens are searched from here-strings, not pipes: grep -q may close a pipe
# early, and under pipefail the writer's SIGPIPE would read as "no match".

wait_for() { # wait_for PATTERN: poll the screen for up to 10 s
	for _ in $(seq 1 100); do
		if grep -qE "$1" <<<"$(screen)"; then return 0; fi
		sleep 0.1
	done
	echo "tui-hostile: '$1' never appeared; the screen was:" >&2
	screen >&2
	return 1
}

# start VAR=VALUE...: plays the lesson in a new 80x24 session with that
# environment (always a UTF-8 locale: tcell's UTF-8 input path is the one
# that hung) and waits for the first frame.
start() {
	n=$((n + 1))
	session="brokerlab-hostile-$$-$n"
	exitf="$work/exit-$n"
	sessions+=("$session")
	tmux new-session -d -s "$session" -x 80 -y 24 \
		"env LC_ALL=C.UTF-8 $* '$bin' play '$lesson'; echo \$? > '$exitf'"
	wait_for 't=0'
}

# quits_within LIMIT_MS SINCE_MS WHAT: waits until the player has exited,
# at most LIMIT_MS after SINCE_MS, and checks it exited with 0.
quits_within() {
	local limit=$1 since=$2 what=$3 code
	while [ ! -s "$exitf" ] && [ $(($(now_ms) - since)) -le "$limit" ]; do
		sleep 0.02
	done
	local took=$(($(now_ms) - since))
	if [ ! -s "$exitf" ]; then
		echo "tui-hostile: $what: still running after ${took} ms (limit ${limit} ms); the screen was:" >&2
		screen >&2
		fail=1
		return 0
	fi
	code=$(cat "$exitf")
	if [ "$code" != 0 ]; then
		echo "tui-hostile: $what: exited with $code, want 0" >&2
		fail=1
		return 0
	fi
	echo "tui-hostile: $what: quit after ${took} ms (limit ${limit} ms)"
}

# check PATTERN WHAT TEXT: TEXT must match PATTERN.
check() {
	if ! grep -qE "$1" <<<"$3"; then
		echo "tui-hostile: $2: /$1/ not on the screen:" >&2
		echo "$3" >&2
		fail=1
	fi
}

# colour SGR parameters: 30-38 and 40-48 (38 and 48 start 256-colour and RGB
# forms), 90-97 and 100-107; 39 and 49, "default colour", are not colour.
colour=$'\e''\[([0-9]*;)*(3[0-8]|4[0-8]|9[0-7]|10[0-7])[;m]'

# 1. One invalid UTF-8 byte, then q, then the same with Ctrl-C.
for key in q C-c; do
	start TERM=xterm-256color
	t0=$(now_ms)
	tmux send-keys -t "$session" -H ff
	tmux send-keys -t "$session" "$key"
	quits_within 2000 "$t0" "0xFF then $key"
done

# 2. vt100: a burst of 100 keys, then q.
start TERM=vt100
t0=$(now_ms)
tmux send-keys -t "$session" -N 100 s
tmux send-keys -t "$session" q
quits_within 3000 "$t0" "TERM=vt100, 100 keys then q"

# 3. vt100 draws the lesson: 40 steps, the tick, the DLQ, the trace and the
# hints bar, the same text as xterm-256color; then a plain q.
declare -A text
for term in vt100 xterm-256color; do
	start TERM=$term
	tmux send-keys -t "$session" -N 40 s
	wait_for 't=40'
	sleep 0.2 # let the frame that shows t=40 finish
	text[$term]=$(screen)
	t0=$(now_ms)
	tmux send-keys -t "$session" q
	quits_within 1000 "$t0" "TERM=$term, q after 40 steps"
done
snap=${text[vt100]}
check 't=40' "vt100 tick" "$snap"
check '(DLQ|dlq)[^0-9]*[1-9]' "vt100 DLQ depth" "$snap"
check 't=[0-9]+ (sent|received|acked|dead_lettered|redelivered)' "vt100 trace line" "$snap"
check 'q quit' "vt100 hints bar" "$snap"
check '^[╔┌]' "vt100 panel border" "$snap"
if [ "$snap" != "${text[xterm-256color]}" ]; then
	echo "tui-hostile: vt100 draws different text than xterm-256color:" >&2
	diff <(echo "$snap") <(echo "${text[xterm-256color]}") >&2 || true
	fail=1
fi

# 4. NO_COLOR: the same screen without a single colour; the check itself
# is tested on the coloured screen.
for nc in 1 ""; do
	start TERM=xterm-256color NO_COLOR=$nc
	tmux send-keys -t "$session" -N 40 s
	wait_for 't=40'
	sleep 0.2
	styled=$(tmux capture-pane -p -e -t "$session")
	colours=$(grep -cE "$colour" <<<"$styled" || true)
	if [ -n "$nc" ] && [ "$colours" != 0 ]; then
		echo "tui-hostile: NO_COLOR=1: $colours lines with colour" >&2
		fail=1
	elif [ -z "$nc" ] && [ "$colours" = 0 ]; then
		echo "tui-hostile: without NO_COLOR no colour was found; the check is broken" >&2
		fail=1
	fi
	[ -n "$nc" ] && check 't=40 ' "NO_COLOR header" "$(screen)"
	t0=$(now_ms)
	tmux send-keys -t "$session" q
	quits_within 1000 "$t0" "NO_COLOR='$nc', q"
done

if [ "$fail" = 0 ]; then
	echo "tui-hostile: OK ($lesson at 80x24)"
fi
exit "$fail"
