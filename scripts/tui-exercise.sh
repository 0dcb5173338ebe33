#!/usr/bin/env bash
# tui-exercise.sh goes through exercise 1 as a student would, in a
# temporary directory outside the clone: start the workspace, grade the
# stub, grade a wrong solution (the order and its outbox row in two
# transactions), replay its shrunk failure in the player in a real
# terminal (tmux, 80x24) and step to the fault, then grade a right
# solution. It checks each screen and prints the replay's screen at the
# fault. Usage: scripts/tui-exercise.sh
set -euo pipefail
cd "$(dirname "$0")/.."
clone=$(pwd)

if ! command -v tmux >/dev/null 2>&1; then
	echo "tui-exercise: tmux is not installed" >&2
	exit 1
fi
work=$(mktemp -d)
session=tui-exercise-$$
cleanup() {
	tmux kill-session -t "$session" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/brokerlab" ./cmd/brokerlab
ws=$work/alice
"$work/brokerlab" exercise start --clone "$clone" outbox "$ws" >/dev/null

expect() { # expect WHAT PATTERN FILE
	if ! grep -qE "$2" "$3"; then
		echo "tui-exercise: $1: no '$2' in:" >&2
		cat "$3" >&2
		exit 1
	fi
}

(cd "$ws" && go test >"$work/stub.out" 2>&1) && { echo "tui-exercise: the stub passes" >&2; exit 1; }
expect "stub" "PlaceOrder is not written yet" "$work/stub.out"

# write_solution writes solution.go: the PlaceOrder read from standard
# input, and one right Relay (publish in id order, mark after the publish),
# so that the wrong and the right solution differ only in PlaceOrder.
write_solution() {
	{
		printf 'package main\n\nimport (\n\t"fmt"\n\n\t"github.com/brokerlab/brokerlab/exercise"\n)\n\n'
		cat
		echo
		cat <<'RELAY'
func Relay(db *exercise.Store, broker exercise.Broker) error {
	txn := db.Txn()
	rows := txn.Unsent()
	txn.Abort()
	for _, row := range rows {
		if err := broker.Publish(row.Payload); err != nil {
			return err
		}
		txn := db.Txn()
		txn.MarkSent(row.ID)
		txn.Commit()
	}
	return nil
}
RELAY
	} >"$ws/solution.go"
}

write_solution <<'GO'
func PlaceOrder(db *exercise.Store, amount int) (int, error) {
	txn := db.Txn()
	id := txn.InsertOrder(amount)
	txn.Commit()
	txn = db.Txn()
	txn.InsertOutbox(id, fmt.Sprintf("order %d placed, amount %d", id, amount))
	txn.Commit()
	return id, nil
}
GO
(cd "$ws" && go test >"$work/wrong.out" 2>&1) && { echo "tui-exercise: the wrong solution passes" >&2; exit 1; }
expect "wrong" "crash between insert and outbox row" "$work/wrong.out"
expect "wrong" "shrunk from [0-9]+ faults to 1" "$work/wrong.out"

(cd "$ws" && go build -o "$work/alice-bin" .)
tmux new-session -d -s "$session" -x 80 -y 24 -c "$ws" "$work/alice-bin play; sleep 30"
screen() { tmux capture-pane -p -t "$session"; }
# Screens are searched from here-strings, not pipes: grep -q may close a pipe
# early, and under pipefail the writer's SIGPIPE would read as "no match".
wait_for() { # wait_for PATTERN: poll the screen for up to 20 s
	for _ in $(seq 1 200); do
		if grep -qE "$1" <<<"$(screen)"; then return 0; fi
		sleep 0.1
	done
	echo "tui-exercise: '$1' never appeared; the screen was:" >&2
	screen >&2
	exit 1
}
wait_for "narration 1/"
# The player opens on the introduction: n closes it on step 1 (the setup,
# at t=0), and n again steps to the fault.
tmux send-keys -t "$session" n
wait_for "narration 1/"
sleep 0.5
tmux send-keys -t "$session" n
wait_for "rule=crash-mid-order"
wait_for "1 broken"
screen
tmux send-keys -t "$session" q

write_solution <<'GO'
func PlaceOrder(db *exercise.Store, amount int) (int, error) {
	txn := db.Txn()
	defer txn.Abort()
	id := txn.InsertOrder(amount)
	txn.InsertOutbox(id, fmt.Sprintf("order %d placed, amount %d", id, amount))
	txn.Commit()
	return id, nil
}
GO
(cd "$ws" && go test >"$work/right.out" 2>&1) || { echo "tui-exercise: the right solution fails:" >&2; cat "$work/right.out" >&2; exit 1; }
expect "right" "PASS: 500 of 500 seeds, surviving [0-9]+ injected faults" "$work/right.out"
grep "PASS: 500" "$work/right.out"
echo "tui-exercise: ok"
