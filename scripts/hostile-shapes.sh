#!/usr/bin/env bash
# hostile-shapes.sh writes scenario files that are valid (brokerlab check
# accepts them) but derive far more work than they spell out, runs each
# through the real binary under /usr/bin/time -v, and prints one line per
# file: the exit code, the CPU seconds, the peak RSS and the first line of
# stderr. It fails when a run takes more than 256 MiB or more than 60 s of
# CPU, or ends with an exit code other than the one the shape allows
# (0 or 1: it ran to its end; 2: it stopped with a named cap).
#
#   scripts/hostile-shapes.sh [DIR]    DIR keeps the files (default: a temporary directory)
#
# TIMEOUT (seconds, default 120) kills a run that goes on longer; a
# killed run fails the script.
#
# The shapes come from a reliability round: a fan-out retried 1000 times
# into a queue that is down, 1024 CDC relays re-sending every row, poison
# messages with no DLQ and a visibility of one tick for 1M ticks, 65,536
# idle consumer instances, a redrive every tick, a cascade storm without a
# limit, wide fan-outs whose ledger grows with consumers x messages, and
# the producer cap of messages held in one queue at once.
set -euo pipefail

cd "$(dirname "$0")/.."
dir=${1:-$(mktemp -d)}
mkdir -p "$dir"
bin=$dir/brokerlab
go build -o "$bin" ./cmd/brokerlab
if [[ ! -x /usr/bin/time ]]; then
	echo "hostile-shapes: needs /usr/bin/time (apt-get install time)" >&2
	exit 2
fi

rep() { # rep N TEXT: TEXT N times, joined by ", "
	local n=$1 s=$2 out=""
	for ((i = 1; i <= n; i++)); do out+="${out:+, }${s//@/$i}"; done
	printf '%s' "$out"
}

w() { cat >"$dir/$1"; }

w fan-out-retry-down.yaml <<YAML
title: a fan-out retried 1000 times into a queue that is down
run: {ticks: 1000}
topology:
  queues: [$(rep 16 "{name: q@}")]
  topics: [{name: t, fan_out_to_queues: [$(rep 16 "q@")], fan_out_retry: {immediate: 1000, backoff: 1000, delay: 1, max_delay: 1}}]
actors:
  producers: [{name: p, to: {topic: t}, count: 10000, rate: 10000}]
faults:
  - {name: down, point: broker.unavailable, match: {where: "queue:*"}}
YAML

for rows in 1000 10000; do
	w cdc-relays-$rows.yaml <<YAML
title: 1024 CDC relays publish every one of $rows rows
run: {ticks: 200}
topology:
  queues: [{name: in}]
  services: [{name: shop, writer: outbox, publish_to: {queue: in}}]
actors:
  producers: [{name: orders, to: {service: shop}, count: $rows, rate: 1000}]
  consumers: [{name: c, queue: in, batch: 10000}]
  relays: [$(rep 1024 "{name: r@, service: shop, mode: cdc, batch: 10000}")]
YAML
done

w poison-no-dlq.yaml <<YAML
title: poison messages with no DLQ and a visibility of one tick, for 1M ticks
run: {ticks: 1000000}
topology:
  queues: [{name: q, visibility_timeout: 1}]
actors:
  producers: [{name: p, to: {queue: q}, count: 10000, rate: 10000}]
  consumers: [{name: c, queue: q, batch: 10000, handler: {kind: poison}}]
YAML

w idle-instances.yaml <<YAML
title: 65,536 idle consumer instances for 1M ticks
run: {ticks: 1000000}
topology:
  queues: [{name: q}]
actors:
  consumers: [$(rep 1024 "{name: c@, queue: q, instances: 64}")]
YAML

for ticks in 2000 10000 1000000; do
	w redrive-every-tick-$ticks.yaml <<YAML
title: a redrive every tick of a DLQ that never empties, for $ticks ticks
run: {ticks: $ticks}
topology:
  queues: [{name: q, visibility_timeout: 1, dead_letter: {queue: d, max_receive_count: 1}}, {name: d}]
actors:
  producers: [{name: p, to: {queue: q}, count: 1000, rate: 1000}]
  consumers: [{name: c, queue: q, batch: 10000, handler: {kind: poison}}]
timeline: [$(rep $((ticks < 10000 ? ticks : 10000)) "{at: @, action: redrive, queue: d}")]
YAML
done

w cascade-storm.yaml <<YAML
title: a cascade storm without a limit
run: {ticks: 100}
topology:
  topics: [{name: s, subscribers: [$(rep 8 "{name: e@, buffer: 100000, emits: [{topic: s, count: 100}]}")]}]
actors:
  producers: [{name: p, to: {topic: s}, count: 1000, rate: 1000}]
YAML

w budget-seed1.yaml <<YAML
{version: 1, title: t, run: {ticks: 100}, topology: {topics: [{name: s, subscribers: [{name: a, buffer: 1000, emits: [{topic: s, count: 50}]}, {name: b, buffer: 1000, emits: [{topic: s, count: 50}]}]}]}, actors: {producers: [{name: p, to: {topic: s}, count: 3}]}}
YAML

w wide-subscribers.yaml <<YAML
title: 2,000 messages to 1,024 plain subscribers
run: {until: drained, max_ticks: 10000}
topology:
  topics: [{name: t, subscribers: [$(rep 1024 "{name: s@, buffer: 100000}")]}]
actors:
  producers: [{name: p, to: {topic: t}, count: 2000, rate: 1000}]
YAML

w many-queues.yaml <<YAML
title: 102,400 messages across 256 queues
run: {until: drained, max_ticks: 10000}
topology:
  queues: [$(rep 256 "{name: q@}")]
actors:
  producers: [$(rep 256 "{name: p@, to: {queue: q@}, count: 400, rate: 400}")]
  consumers: [$(rep 256 "{name: c@, queue: q@, batch: 1000}")]
YAML

w cap-held.yaml <<YAML
title: 500,000 messages held in one queue (the producer cap, all at once)
run: {ticks: 10}
topology:
  queues: [{name: q}]
actors:
  producers: [$(rep 50 "{name: p@, to: {queue: q}, count: 10000, rate: 10000}")]
YAML

fail=0
printf '%-28s %4s %8s %8s  %s\n' file exit cpu_s rss_mib "first line of stderr"
for f in "$dir"/*.yaml; do
	name=$(basename "$f")
	if ! "$bin" check "$f" >/dev/null 2>"$dir/$name.check"; then
		echo "$name: brokerlab check refuses it (a shape must be valid):" >&2
		cat "$dir/$name.check" >&2
		fail=1
		continue
	fi
	set +e
	/usr/bin/time -v -o "$dir/$name.time" timeout "${TIMEOUT:-120}" "$bin" run --quiet "$f" >"$dir/$name.out" 2>"$dir/$name.err"
	code=$?
	set -e
	rss=$(awk -F': ' '/Maximum resident set size/ {print int($2/1024)}' "$dir/$name.time")
	cpu=$(awk -F': ' '/User time/ {u=$2} /System time/ {s=$2} END {printf "%.1f", u+s}' "$dir/$name.time")
	first=$(head -c 160 "$dir/$name.err" | sed -n 1p)
	printf '%-28s %4s %8s %8s  %s\n' "$name" "$code" "$cpu" "$rss" "$first"
	if ((code != 0 && code != 1 && code != 2)) || ((rss > 256)) || awk -v c="$cpu" 'BEGIN {exit !(c > 60)}'; then
		echo "  FAIL: over 256 MiB or 60 s of CPU, or exit $code" >&2
		fail=1
	fi
	if ((code == 2)) && ! grep -q "cap " "$dir/$name.err"; then
		echo "  FAIL: exit 2 without naming a cap" >&2
		fail=1
	fi
done
exit $fail
