#!/usr/bin/env bash
# tui-lessons.sh plays every built-in lesson and every variant of one in a
# real terminal (tmux, 80x24) as a student would: it closes the
# introduction, goes from narration step to narration step with n, and at
# each step checks that the step's full text is on the screen (the
# narration is never cut). At the end it checks that the verdict line ("N
# of M expectations hold") is shown, scrolls the summary with the down key
# and checks that every expectation with its measured value and the whole
# "To remember" text came on screen (no summary line is cut), that the
# lessons about a subject show it (dual-write's lost event, the effects of
# idempotent-consumer's two consumers, replay-projection's rebuilt
# projection), quits, and checks the exit code.
#
# Usage: scripts/tui-lessons.sh [LESSON|LESSON@VARIANT...]
#        (default: every lesson and every variant)
# Needs tmux and jq.
set -euo pipefail
cd "$(dirname "$0")/.."

for tool in tmux jq; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "tui-lessons: $tool is not installed" >&2
		exit 1
	fi
done

work=$(mktemp -d)
session="brokerlab-lessons-$$"
cleanup() {
	tmux kill-session -t "$session" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/brokerlab" ./cmd/brokerlab
bl="$work/brokerlab"

if [ $# -gt 0 ]; then
	lessons=("$@")
else
	lessons=()
	while read -r l; do
		lessons+=("$l")
		# A lesson's variants, from the error that names them.
		vs=$("$bl" run --variant '?' "$l" 2>&1 | sed -n 's/.*; variants: //p' | tr -d ',' || true)
		for v in $vs; do lessons+=("$l@$v"); done
	done < <("$bl" list | sed -n 's/^  \([a-z][a-z0-9-]*\) .*/\1/p')
fi

screen() { tmux capture-pane -p -t "$session"; }
# Screens are searched from here-strings, not pipes: grep -q may close a pipe
# early, and under pipefail the writer's SIGPIPE would read as "no match".

# flat prints the screen's text with the frame characters removed and all
# white space squeezed to single spaces, so wrapped text can be searched.
flat() { screen | sed 's/[│║]/ /g' | tr -s ' \n' '  '; }

# norm squeezes white space like flat does.
norm() { tr -s ' \n' '  ' | sed 's/^ //; s/ $//'; }

wait_for() { # wait_for TEXT: poll the flattened screen for up to 10 s
	for _ in $(seq 1 100); do
		if grep -qF -- "$1" <<<"$(flat)"; then return 0; fi
		sleep 0.1
	done
	return 1
}

fail=0
for entry in "${lessons[@]}"; do
	lesson=${entry%@*}
	vflag=()
	if [ "$entry" != "$lesson" ]; then vflag=(--variant "${entry#*@}"); fi
	# The narration steps, without their "N/TOTAL " and "[pause] " prefix.
	mapfile -t steps < <("$bl" trace "${vflag[@]}" --format json "$lesson" | jq -r 'select(.kind=="narration") | .detail' |
		sed 's/^[0-9]*\/[0-9]* //; s/^\[pause\] //')
	# The summary's judgements as the player writes them: "TEXT (MEASURED)".
	mapfile -t judged < <("$bl" trace "${vflag[@]}" --format json "$lesson" | jq -r 'select(.kind=="checked") | .detail' |
		sed -E 's/^(PASS|FAIL) //; s/ at [0-9]+:[0-9]+$//; s/\(measured /(/')
	remember=$("$bl" trace "${vflag[@]}" --format json "$lesson" | jq -r 'select(.kind=="narration") | .detail' | tail -1 |
		sed 's/^[0-9]*\/[0-9]* //; s/^\[pause\] //')
	total=${#steps[@]}
	rm -f "$work/exit"
	tmux kill-session -t "$session" 2>/dev/null || true
	tmux new-session -d -s "$session" -x 80 -y 24 \
		"TERM=xterm-256color '$bl' play ${vflag[*]} '$lesson'; echo \$? > '$work/exit'"
	if ! wait_for 't=0'; then
		echo "tui-lessons: $entry: the player did not open; the screen was:" >&2
		screen >&2
		fail=1
		continue
	fi
	tmux send-keys -t "$session" Escape # close the introduction
	wait_for "┌ narration" || true
	i=0
	for step in "${steps[@]}"; do
		i=$((i + 1))
		want=$(printf '%s' "$step" | norm)
		if [ "$i" -gt 1 ] || ! grep -qF -- "narration $i/$total" <<<"$(flat)"; then
			tmux send-keys -t "$session" n
		fi
		if ! wait_for "narration $i/$total" || ! wait_for "$want"; then
			echo "tui-lessons: $entry: step $i/$total is not fully on screen; want:" >&2
			echo "  $want" >&2
			echo "the screen was:" >&2
			screen >&2
			fail=1
			break
		fi
	done
	# Play to the end: the verdict line is shown.
	for _ in $(seq 1 30); do
		grep -qF "expectations hold" <<<"$(flat)" && break
		tmux send-keys -t "$session" n
		sleep 0.2
	done
	if ! wait_for "expectations hold"; then
		echo "tui-lessons: $entry: no verdict at the end; the screen was:" >&2
		screen >&2
		fail=1
	fi
	verdict=$(flat | grep -oE '(PASS|FAIL) [0-9]+ of [0-9]+ expectations hold' | head -1 || true)
	# Scroll the summary to its end, keeping what came on screen: every
	# judgement and the whole "To remember" must have been shown.
	seen=""
	for _ in $(seq 1 30); do
		seen="$seen $(flat)"
		tmux send-keys -t "$session" Down
		sleep 0.05
	done
	seen="$seen $(flat)"
	for want in "${judged[@]}" "To remember: $remember"; do
		w=$(printf '%s' "$want" | norm)
		if ! grep -qF -- "$w" <<<"$seen"; then
			echo "tui-lessons: $entry: summary line never on screen while scrolling; want:" >&2
			echo "  $w" >&2
			screen >&2
			fail=1
			break
		fi
	done
	# The lessons about a subject show it on the tab they open on: close
	# the summary and look for the panel's text at the end of the run.
	subject=""
	case "$entry" in
	dual-write) subject="✖ lost 1 (row, no event): m4" ;;
	idempotent-consumer) subject="safe 20 effects for 20 keys ✓ once each, 6 duplicates skipped" ;;
	replay-projection) subject="✓ rebuilt since the seek at t=16: 15 of 15 records applied again" ;;
	esac
	if [ -n "$subject" ]; then
		tmux send-keys -t "$session" Escape
		if ! wait_for "$subject"; then
			echo "tui-lessons: $entry: the subject panel is not on screen at the end; want:" >&2
			echo "  $subject" >&2
			echo "the screen was:" >&2
			screen >&2
			fail=1
		fi
	fi
	tmux send-keys -t "$session" q
	for _ in $(seq 1 100); do
		[ -s "$work/exit" ] && break
		sleep 0.1
	done
	code=$(cat "$work/exit" 2>/dev/null || echo missing)
	if [ "$code" != 0 ]; then
		echo "tui-lessons: $entry: player exited with '$code', want 0" >&2
		fail=1
	fi
	echo "tui-lessons: $entry: $total steps and the summary on screen at 80x24; $verdict"
done
[ "$fail" = 0 ] && echo "tui-lessons: OK (${#lessons[@]} lessons and variants at 80x24)"
exit "$fail"
