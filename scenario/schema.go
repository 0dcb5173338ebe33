package scenario

import (
	"fmt"
	"math"
	"path"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
)

func quote(s string) string { return strconv.Quote(clip(s)) }

// Ranges of the integer fields.
var (
	tickRange     = bounds{0, MaxTicks, "ticks are capped at 1000000"}
	durationRange = bounds{1, MaxTicks, "ticks are capped at 1000000"}
	runRange      = bounds{1, MaxTicks, "ticks are capped at 1000000"}
	countRange    = bounds{1, MaxMessages, "messages are capped at 1000000"}
	rateRange     = bounds{1, MaxRate, "per tick"}
	partRange     = bounds{1, MaxPartitions, "partitions are capped at 1024"}
	batchRange    = bounds{1, MaxBatch, ""}
)

// name decodes a name: 1 to 64 letters, digits, '-' or '_', starting with a
// letter or digit, so metric names like queue.<name>.depth stay
// unambiguous.
func (d *dec) name(n ast.Node, what string) string {
	s, ok := d.str(n, what, 1<<20, false)
	if !ok {
		return ""
	}
	if msg := checkName(s); msg != "" {
		d.errf(posOf(n), "%s %q %s", what, clip(s), msg)
		return ""
	}
	return s
}

func checkName(s string) string {
	switch {
	case s == "":
		return "is empty; a name needs 1 to 64 letters, digits, '-' or '_'"
	case len(s) > MaxNameLen:
		return fmt.Sprintf("is %d bytes long; a name has at most %d", len(s), MaxNameLen)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || c != '-' && c != '_') {
			return "is not a valid name; use letters, digits, '-' and '_', starting with a letter or digit"
		}
	}
	return ""
}

func (d *dec) tick(n ast.Node, what string, b bounds) sim.Tick {
	v, _ := d.integer(n, what, b)
	return sim.Tick(v)
}

func (d *dec) int(n ast.Node, what string, b bounds) int {
	v, _ := d.integer(n, what, b)
	return int(v)
}

// scenario decodes the document body.
func (d *dec) scenario(n ast.Node, s *Scenario) bool {
	var seedSet, versionSet bool
	ok := d.object(n, "the scenario", &s.Node,
		field{"version", func(v ast.Node) {
			s.Version = d.int(v, "version", bounds{1, 1, "the only format version"})
			versionSet = true
		}},
		field{"title", func(v ast.Node) {
			var ok bool
			if s.Title, ok = d.line(v, "title"); ok && s.Title == "" {
				d.errf(posOf(v), "title must not be empty")
			}
		}},
		field{"summary", func(v ast.Node) { s.Summary, _ = d.line(v, "summary") }},
		field{"description", func(v ast.Node) { s.Description, _ = d.str(v, "description", maxText, true) }},
		field{"seed", func(v ast.Node) {
			seedSet = true
			s.Seed = d.seed(v)
		}},
		field{"run", func(v ast.Node) { d.run(v, &s.Run) }},
		field{"topology", func(v ast.Node) { d.topology(v, &s.Topology) }},
		field{"actors", func(v ast.Node) { d.actors(v, &s.Actors) }},
		field{"faults", func(v ast.Node) {
			listOf(d, v, "faults", MaxFaults, &s.Faults, d.fault)
		}},
		field{"timeline", func(v ast.Node) {
			d.list(v, "timeline", MaxTimeline, func(v ast.Node) {
				s.Timeline = append(s.Timeline, Action{Partition: -1})
				d.action(v, &s.Timeline[len(s.Timeline)-1])
			})
		}},
		field{"narration", func(v ast.Node) {
			d.list(v, "narration", MaxNarration, func(v ast.Node) {
				var st Step
				d.object(v, "narration step", &st.Node,
					field{"at", func(v ast.Node) { st.At = d.tick(v, "at", tickRange) }},
					field{"text", func(v ast.Node) {
						var ok bool
						if st.Text, ok = d.str(v, "text", maxText, true); ok && st.Text == "" {
							d.errf(posOf(v), "narration text must not be empty")
						}
					}},
					field{"pause", func(v ast.Node) { st.Pause, _ = d.boolean(v, "pause") }},
				)
				d.require(&st.Node, "narration step", "at", "text")
				s.Narration = append(s.Narration, st)
			})
		}},
		field{"expect", func(v ast.Node) {
			listOf(d, v, "expect", MaxExpect, &s.Expect, d.expectation)
		}},
	)
	if !versionSet {
		s.Version = 1
	}
	if !seedSet {
		s.Seed = 1
	}
	return ok
}

// seed decodes a seed: an integer from 0 to 2^64-1.
func (d *dec) seed(n ast.Node) uint64 {
	switch x := n.(type) {
	case *ast.IntegerNode:
		switch y := x.Value.(type) {
		case uint64:
			return y
		case int64:
			if y >= 0 {
				return uint64(y)
			}
		}
	}
	if txt, ok := numberText(n); ok {
		// An unquoted number the YAML reader keeps as a string: one
		// beyond 64 bits, or one written with an exponent.
		f, err := strconv.ParseFloat(strings.ReplaceAll(txt, "_", ""), 64)
		switch {
		case err == nil && f == math.Trunc(f) && f >= 0 && f < 1<<64:
			return uint64(f)
		case err == nil && f != math.Trunc(f):
			d.errf(posOf(n), "seed must be a whole number between 0 and %d (2^64-1), got %s", uint64(1<<64-1), clip(txt))
		default:
			d.errf(posOf(n), "seed %s is out of range; a seed is between 0 and %d (2^64-1)", clip(txt), uint64(1<<64-1))
		}
		return 0
	}
	d.errf(posOf(n), "seed must be an integer between 0 and %d, got %s", uint64(1<<64-1), describe(n))
	return 0
}

// require reports the fields of a mapping that must be written.
func (d *dec) require(n *Node, what string, names ...string) {
	for _, f := range names {
		if !n.Has(f) {
			d.errf(n.Pos, "%s needs the field %q", what, f)
		}
	}
}

func (d *dec) run(n ast.Node, r *Length) {
	if !d.object(n, "run", &r.Node,
		field{"ticks", func(v ast.Node) { r.Ticks = d.tick(v, "ticks", runRange) }},
		field{"until", func(v ast.Node) { r.Until, _ = d.enum(v, "until", UntilDrained) }},
		field{"max_ticks", func(v ast.Node) { r.MaxTicks = d.tick(v, "max_ticks", runRange) }},
	) {
		return
	}
	switch {
	case r.Has("ticks") && r.Has("until"):
		d.errf(r.FieldPos("until"), "run takes either ticks or until (with max_ticks as its cap), not both")
	case r.Has("ticks") && r.Has("max_ticks"):
		d.errf(r.FieldPos("max_ticks"), "max_ticks caps a run with until; a run of fixed ticks needs none")
	case !r.Has("ticks") && !r.Has("until"):
		d.errf(r.Pos, "run needs ticks (a fixed length) or until: drained (with max_ticks as its cap)")
	}
	if r.Has("until") && !r.Has("max_ticks") {
		r.MaxTicks = 10_000
	}
}

func (d *dec) topology(n ast.Node, t *Topology) {
	d.object(n, "topology", &t.Node,
		field{"queues", func(v ast.Node) {
			listOf(d, v, "queues", MaxEntities, &t.Queues, d.queue)
		}},
		field{"topics", func(v ast.Node) {
			listOf(d, v, "topics", MaxEntities, &t.Topics, d.topic)
		}},
		field{"logs", func(v ast.Node) {
			listOf(d, v, "logs", MaxEntities, &t.Logs, d.log)
		}},
		field{"groups", func(v ast.Node) {
			listOf(d, v, "groups", MaxEntities, &t.Groups, d.group)
		}},
		field{"services", func(v ast.Node) {
			listOf(d, v, "services", MaxEntities, &t.Services, d.service)
		}},
	)
}

func (d *dec) queue(n ast.Node, q *Queue) {
	q.VisibilityTimeout = 30
	d.object(n, "queue", &q.Node,
		field{"name", func(v ast.Node) { q.Name = d.name(v, "queue name") }},
		field{"visibility_timeout", func(v ast.Node) {
			q.VisibilityTimeout = d.tick(v, "visibility_timeout", durationRange)
		}},
		field{"retention", func(v ast.Node) { q.Retention = d.tick(v, "retention", tickRange) }},
		field{"dead_letter", func(v ast.Node) {
			dl := &DeadLetter{MaxReceiveCount: 3}
			d.object(v, "dead_letter", &dl.Node,
				field{"queue", func(v ast.Node) { dl.Queue = d.name(v, "dead_letter queue") }},
				field{"max_receive_count", func(v ast.Node) {
					dl.MaxReceiveCount = d.int(v, "max_receive_count", bounds{1, MaxReceiveCount, ""})
				}},
			)
			d.require(&dl.Node, "dead_letter", "queue")
			q.DeadLetter = dl
		}},
		field{"fifo", func(v ast.Node) { q.FIFO, _ = d.boolean(v, "fifo") }},
		field{"dedup_window", func(v ast.Node) { q.DedupWindow = d.tick(v, "dedup_window", tickRange) }},
		field{"content_based_dedup", func(v ast.Node) { q.ContentBasedDedup, _ = d.boolean(v, "content_based_dedup") }},
		field{"delay", func(v ast.Node) { q.Delay = d.tick(v, "delay", tickRange) }},
		field{"receive_wait_time", func(v ast.Node) { q.ReceiveWaitTime = d.tick(v, "receive_wait_time", tickRange) }},
		field{"max_in_flight", func(v ast.Node) {
			q.MaxInFlight = d.int(v, "max_in_flight", bounds{0, MaxMessages, "0 means no cap"})
		}},
		field{"strict", func(v ast.Node) { q.Strict, _ = d.boolean(v, "strict") }},
	)
	d.require(&q.Node, "queue", "name")
	if q.Has("dedup_window") && !q.FIFO {
		d.errf(q.FieldPos("dedup_window"), "dedup_window needs fifo: true")
	}
	if q.ContentBasedDedup {
		switch {
		case !q.FIFO:
			d.errf(q.FieldPos("content_based_dedup"), "content_based_dedup needs fifo: true and a dedup_window above 0")
		case q.DedupWindow == 0:
			d.errf(q.FieldPos("content_based_dedup"), "content_based_dedup needs a dedup_window above 0 (the window in which a repeated body is dropped)")
		}
	}
	if q.Strict && q.MaxInFlight > MaxStrictFlight {
		d.errf(q.FieldPos("max_in_flight"), "max_in_flight of a strict queue must be between 0 and %d (SQS's in-flight quota; 0 means that quota), got %d",
			MaxStrictFlight, q.MaxInFlight)
	}
}

func (d *dec) topic(n ast.Node, t *Topic) {
	d.object(n, "topic", &t.Node,
		field{"name", func(v ast.Node) { t.Name = d.name(v, "topic name") }},
		field{"subscribers", func(v ast.Node) {
			listOf(d, v, "subscribers", MaxActors, &t.Subscribers, d.subscriber)
		}},
		field{"fan_out_to_queues", func(v ast.Node) {
			d.list(v, "fan_out_to_queues", MaxEntities, func(v ast.Node) {
				t.FanOutToQueues = append(t.FanOutToQueues, d.name(v, "fan-out queue"))
				t.fanOutPos = append(t.fanOutPos, posOf(v))
			})
		}},
		field{"cascade_limit", func(v ast.Node) { t.CascadeLimit = d.int(v, "cascade_limit", bounds{0, MaxCascade, ""}) }},
		field{"fan_out_retry", func(v ast.Node) { t.FanOutRetry = d.fanOutRetry(v) }},
	)
	d.require(&t.Node, "topic", "name")
	if t.FanOutRetry != nil && len(t.FanOutToQueues) == 0 && !t.Has("fan_out_to_queues") {
		d.errf(t.FieldPos("fan_out_retry"), "fan_out_retry is the retry policy of fan_out_to_queues, and topic %q has none", t.Name)
	}
}

// fanOutRetryFields are the fields of a fan_out_retry mapping.
var fanOutRetryFields = []string{"immediate", "backoff", "delay", "max_delay"}

// fanOutRetry decodes `none` or {immediate, backoff, delay, max_delay}.
// Omitted counts are 0 and delay defaults to 1: a written policy states
// every retry it makes. It returns nil after an error.
func (d *dec) fanOutRetry(n ast.Node) *FanOutRetry {
	r := &FanOutRetry{Delay: 1}
	allowed := "none, or a mapping with the fields " + strings.Join(fanOutRetryFields, ", ")
	switch n.(type) {
	case *ast.StringNode:
		if _, num := numberText(n); !num {
			r.Pos = posOf(n)
			s, ok := d.line(n, "fan_out_retry")
			switch {
			case !ok:
				return nil
			case s == "none":
				r.None = true
				return r
			}
			msg := fmt.Sprintf("fan_out_retry %q is not allowed", clip(s))
			if sg := suggestName(s, []string{"none"}); sg != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", sg)
			}
			d.errf(posOf(n), "%s; allowed: %s", msg, allowed)
			return nil
		}
	case *ast.MappingNode, *ast.MappingValueNode:
		errs := len(d.c.list)
		d.object(n, "fan_out_retry", &r.Node,
			field{"immediate", func(v ast.Node) { r.Immediate = d.int(v, "immediate", bounds{0, MaxRetries, ""}) }},
			field{"backoff", func(v ast.Node) { r.Backoff = d.int(v, "backoff", bounds{0, MaxRetries, ""}) }},
			field{"delay", func(v ast.Node) { r.Delay = d.tick(v, "delay", durationRange) }},
			field{"max_delay", func(v ast.Node) { r.MaxDelay = d.tick(v, "max_delay", durationRange) }},
		)
		if len(r.fields) == 0 && len(d.c.list) == errs {
			d.errf(r.Pos, "fan_out_retry {} states no retry; write immediate or backoff, or none to give a refused forward up at once")
		}
		if r.Backoff == 0 {
			for _, f := range []string{"delay", "max_delay"} {
				if r.Has(f) && r.Has("backoff") {
					d.errf(r.FieldPos(f), "%s is the wait of backoff retries, and backoff is 0", f)
				} else if r.Has(f) {
					d.errf(r.FieldPos(f), "%s is the wait of backoff retries; it needs backoff (1 to %d)", f, MaxRetries)
				}
			}
		}
		if r.Has("max_delay") && r.Has("delay") && r.MaxDelay > 0 && r.MaxDelay < r.Delay {
			d.errf(r.FieldPos("max_delay"), "max_delay %d is below delay %d", r.MaxDelay, r.Delay)
		}
		if len(d.c.list) > errs {
			return nil
		}
		return r
	}
	d.errf(posOf(n), "fan_out_retry must be %s, got %s", allowed, describe(n))
	return nil
}

func (d *dec) subscriber(n ast.Node, s *Subscriber) {
	s.Buffer, s.Overflow = 16, DropNewest
	d.object(n, "subscriber", &s.Node,
		field{"name", func(v ast.Node) { s.Name = d.name(v, "subscriber name") }},
		field{"buffer", func(v ast.Node) { s.Buffer = d.int(v, "buffer", bounds{1, MaxBuffer, ""}) }},
		field{"overflow", func(v ast.Node) { s.Overflow, _ = d.enum(v, "overflow", DropNewest, DropOldest, Block) }},
		field{"offline", func(v ast.Node) { s.Offline, _ = d.boolean(v, "offline") }},
		field{"emits", func(v ast.Node) {
			d.list(v, "emits", MaxEntities, func(v ast.Node) {
				e := Emit{Count: 1}
				d.object(v, "emit", &e.Node,
					field{"topic", func(v ast.Node) { e.Topic = d.name(v, "emit topic") }},
					field{"count", func(v ast.Node) { e.Count = d.int(v, "count", bounds{1, MaxEmits, ""}) }},
					field{"type", func(v ast.Node) { e.Type, _ = d.line(v, "type") }},
				)
				d.require(&e.Node, "emit", "topic")
				s.Emits = append(s.Emits, e)
			})
		}},
		field{"source_check", func(v ast.Node) { s.SourceCheck, _ = d.boolean(v, "source_check") }},
		field{"supervisor", func(v ast.Node) { s.Supervisor, _ = d.boolean(v, "supervisor") }},
	)
	d.require(&s.Node, "subscriber", "name")
	if s.Supervisor && len(s.Emits) == 0 {
		d.errf(s.FieldPos("supervisor"), "subscriber %q: supervisor mutes the subscriber's emits, and it has none", s.Name)
	}
}

func (d *dec) log(n ast.Node, l *Log) {
	l.Partitions = 1
	d.object(n, "log", &l.Node,
		field{"name", func(v ast.Node) { l.Name = d.name(v, "log name") }},
		field{"partitions", func(v ast.Node) { l.Partitions = d.int(v, "partitions", partRange) }},
		field{"retention", func(v ast.Node) {
			r := &Retention{}
			if d.object(v, "retention", &r.Node,
				field{"ticks", func(v ast.Node) { r.Ticks = d.tick(v, "ticks", durationRange) }},
				field{"records", func(v ast.Node) { r.Records = d.int(v, "records", bounds{1, MaxMessages, ""}) }},
			) && !r.Has("ticks") && !r.Has("records") {
				d.errf(r.Pos, "retention needs ticks or records (or both)")
			}
			l.Retention = r
		}},
		field{"compaction", func(v ast.Node) { l.Compaction, _ = d.boolean(v, "compaction") }},
	)
	d.require(&l.Node, "log", "name")
}

func (d *dec) group(n ast.Node, g *Group) {
	g.Assignment, g.AutoOffsetReset, g.SessionTimeout, g.AutoCommitInterval = "range", "earliest", 10, 5
	d.object(n, "group", &g.Node,
		field{"name", func(v ast.Node) { g.Name = d.name(v, "group name") }},
		field{"log", func(v ast.Node) { g.Log = d.name(v, "group log") }},
		field{"assignment", func(v ast.Node) { g.Assignment, _ = d.enum(v, "assignment", "range", "round_robin", "sticky") }},
		field{"auto_offset_reset", func(v ast.Node) {
			g.AutoOffsetReset, _ = d.enum(v, "auto_offset_reset", "earliest", "latest", "none")
		}},
		field{"session_timeout", func(v ast.Node) { g.SessionTimeout = d.tick(v, "session_timeout", durationRange) }},
		field{"auto_commit_interval", func(v ast.Node) {
			g.AutoCommitInterval = d.tick(v, "auto_commit_interval", durationRange)
		}},
	)
	d.require(&g.Node, "group", "name", "log")
}

func (d *dec) service(n ast.Node, s *Service) {
	s.Writer, s.MaxAttempts = WriterOutbox, 5
	d.object(n, "service", &s.Node,
		field{"name", func(v ast.Node) { s.Name = d.name(v, "service name") }},
		field{"writer", func(v ast.Node) {
			s.Writer, _ = d.enum(v, "writer", WriterOutbox, WriterCommitThenPublish, WriterPublishThenCommit)
		}},
		field{"publish_to", func(v ast.Node) { d.target(v, "publish_to", &s.PublishTo, TargetQueue, TargetTopic, TargetLog) }},
		field{"max_attempts", func(v ast.Node) { s.MaxAttempts = d.int(v, "max_attempts", bounds{1, MaxAttempts, ""}) }},
		field{"cleanup", func(v ast.Node) { s.Cleanup = d.tick(v, "cleanup", tickRange) }},
	)
	d.require(&s.Node, "service", "name", "publish_to")
}

// target decodes {kind: name} with exactly one of the kinds.
func (d *dec) target(n ast.Node, what string, t *Target, kinds ...string) {
	fields := make([]field, len(kinds))
	for i, k := range kinds {
		fields[i] = field{k, func(v ast.Node) {
			if t.Kind == "" {
				t.Kind, t.Name = k, d.name(v, what+" "+k)
			}
		}}
	}
	errs := len(d.c.list)
	if !d.object(n, what, &t.Node, fields...) {
		return
	}
	if len(t.fields) == 0 && len(d.c.list) > errs {
		return // the unknown field was reported
	}
	if len(t.fields) != 1 {
		d.errf(t.Pos, "%s names exactly one of %s, e.g. {%s: name}", what, strings.Join(kinds, ", "), kinds[0])
		t.Kind, t.Name = "", ""
	}
}

func (d *dec) actors(n ast.Node, a *Actors) {
	d.object(n, "actors", &a.Node,
		field{"producers", func(v ast.Node) {
			listOf(d, v, "producers", MaxActors, &a.Producers, d.producer)
		}},
		field{"consumers", func(v ast.Node) {
			listOf(d, v, "consumers", MaxActors, &a.Consumers, d.consumer)
		}},
		field{"members", func(v ast.Node) {
			listOf(d, v, "members", MaxActors, &a.Members, d.member)
		}},
		field{"relays", func(v ast.Node) {
			listOf(d, v, "relays", MaxActors, &a.Relays, d.relay)
		}},
	)
}

func (d *dec) producer(n ast.Node, p *Producer) {
	p.Rate, p.KeyOrder, p.OnRefused = 1, "round_robin", OnRefusedRetry
	d.object(n, "producer", &p.Node,
		field{"name", func(v ast.Node) { p.Name = d.name(v, "producer name") }},
		field{"to", func(v ast.Node) { d.target(v, "to", &p.To, TargetQueue, TargetTopic, TargetLog, TargetService) }},
		field{"count", func(v ast.Node) { p.Count = d.int(v, "count", countRange) }},
		field{"rate", func(v ast.Node) { p.Rate = d.int(v, "rate", rateRange) }},
		field{"start", func(v ast.Node) { p.Start = d.tick(v, "start", tickRange) }},
		field{"keys", func(v ast.Node) {
			if _, ok := v.(*ast.SequenceNode); ok {
				d.list(v, "keys", MaxKeyList, func(v ast.Node) {
					if k, ok := d.line(v, "key"); ok {
						p.Keys = append(p.Keys, k)
					}
				})
				return
			}
			p.KeyPattern, _ = d.line(v, "keys")
		}},
		field{"key_count", func(v ast.Node) { p.KeyCount = d.int(v, "key_count", bounds{1, MaxKeys, ""}) }},
		field{"key_order", func(v ast.Node) { p.KeyOrder, _ = d.enum(v, "key_order", "round_robin", "random") }},
		field{"type", func(v ast.Node) { p.Type, _ = d.line(v, "type") }},
		field{"source", func(v ast.Node) { p.Source, _ = d.line(v, "source") }},
		field{"on_refused", func(v ast.Node) { p.OnRefused, _ = d.enum(v, "on_refused", OnRefusedRetry, OnRefusedDrop) }},
	)
	d.require(&p.Node, "producer", "name", "to", "count")
	if p.Source == "" {
		p.Source = p.Name
	}
	switch {
	case p.Has("key_count") && !p.Has("keys"):
		d.errf(p.FieldPos("key_count"), "key_count needs a keys pattern such as \"kunde-%%d\"")
	case p.Has("key_count") && p.Keys != nil:
		d.errf(p.FieldPos("key_count"), "key_count goes with a keys pattern, not with a list of keys")
	case p.KeyPattern != "":
		d.checkPattern(p)
	}
}

// checkPattern checks a key pattern: "%d" is replaced by 1..key_count; a
// pattern without "%d" is one fixed key.
func (d *dec) checkPattern(p *Producer) {
	at := p.FieldPos("keys")
	n := strings.Count(p.KeyPattern, "%")
	verbs := strings.Count(p.KeyPattern, "%d")
	switch {
	case n != verbs || verbs > 1:
		d.errf(at, "keys pattern %q may contain %%d once and no other %%", clip(p.KeyPattern))
	case verbs == 0 && p.KeyCount > 1:
		d.errf(at, "keys pattern %q needs %%d to make %d distinct keys", clip(p.KeyPattern), p.KeyCount)
	case verbs == 0:
		p.KeyCount = 1
	case p.KeyCount == 0:
		p.KeyCount = 1
	}
}

func (d *dec) handler(n ast.Node, h *Handler) {
	d.object(n, "handler", &h.Node,
		field{"kind", func(v ast.Node) {
			h.Kind, _ = d.enum(v, "handler kind", HandlerSucceed, HandlerTransient, HandlerPermanent, HandlerPoison, HandlerSlow)
		}},
		field{"keys", func(v ast.Node) { h.Keys, _ = d.line(v, "keys") }},
		field{"failures", func(v ast.Node) { h.Failures = d.int(v, "failures", bounds{1, MaxFailures, ""}) }},
		field{"ticks", func(v ast.Node) { h.Ticks = d.tick(v, "ticks", tickRange) }},
		field{"error", func(v ast.Node) { h.Error, _ = d.line(v, "error") }},
	)
	d.checkGlob(h.FieldPos("keys"), "handler keys", h.Keys)
	if h.Has("failures") && h.Kind != HandlerTransient {
		d.errf(h.FieldPos("failures"), "failures is for handler kind transient, not %s", h.Kind)
	}
	if h.Kind == HandlerSlow && h.Ticks < 1 && !h.Has("ticks") {
		d.errf(h.Pos, "a slow handler needs ticks (its processing time, at least 1)")
	} else if h.Kind == HandlerSlow && h.Ticks < 1 {
		d.errf(h.FieldPos("ticks"), "a slow handler needs ticks of at least 1")
	}
	if h.Kind == HandlerTransient && h.Failures == 0 {
		h.Failures = 1
	}
}

func (d *dec) consumer(n ast.Node, c *Consumer) {
	c.Instances, c.Batch, c.Ack, c.Idempotency = 1, 1, "after", "none"
	c.Handler.Kind, c.Retry.Policy = HandlerSucceed, "none"
	d.object(n, "consumer", &c.Node,
		field{"name", func(v ast.Node) { c.Name = d.name(v, "consumer name") }},
		field{"queue", func(v ast.Node) { c.Queue = d.name(v, "consumer queue") }},
		field{"instances", func(v ast.Node) { c.Instances = d.int(v, "instances", bounds{1, MaxInstances, ""}) }},
		field{"batch", func(v ast.Node) { c.Batch = d.int(v, "batch", batchRange) }},
		field{"visibility_timeout", func(v ast.Node) {
			c.VisibilityTimeout = d.tick(v, "visibility_timeout", bounds{0, MaxTicks, "0 means the queue's"})
		}},
		field{"wait_time", func(v ast.Node) { d.waitTime(v, c) }},
		field{"handler", func(v ast.Node) { d.handler(v, &c.Handler) }},
		field{"ack", func(v ast.Node) { c.Ack, _ = d.enum(v, "ack", "after", "before") }},
		field{"retry", func(v ast.Node) { d.retry(v, &c.Retry) }},
		field{"idempotency", func(v ast.Node) {
			c.Idempotency, _ = d.enum(v, "idempotency", "none", "message_id", "business_key")
		}},
		field{"start", func(v ast.Node) { c.Start = d.tick(v, "start", tickRange) }},
	)
	d.require(&c.Node, "consumer", "name", "queue")
}

// WaitShort is the wait_time that makes a consumer short-poll.
const WaitShort = "short"

// waitTime decodes a consumer's wait_time: ticks from 0 to MaxTicks, or
// WaitShort.
func (d *dec) waitTime(n ast.Node, c *Consumer) {
	x, ok := n.(*ast.StringNode)
	if _, num := numberText(n); !ok || num {
		switch n.(type) {
		case *ast.IntegerNode, *ast.FloatNode, *ast.StringNode:
			c.WaitTime = d.tick(n, "wait_time", bounds{0, MaxTicks, "0 means the queue's receive_wait_time"})
		default:
			d.errf(posOf(n), "wait_time must be ticks (0 to %d) or %s, got %s", MaxTicks, WaitShort, describe(n))
		}
		return
	}
	s, ok := d.line(x, "wait_time")
	switch {
	case !ok:
		return
	case s == WaitShort:
		c.ShortPoll = true
		return
	}
	msg := fmt.Sprintf("wait_time %q is not allowed", clip(s))
	if sg := suggestName(s, []string{WaitShort}); sg != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", sg)
	}
	d.errf(posOf(n), "%s; allowed: ticks from 0 to %d (0 means the queue's receive_wait_time), or %s", msg, MaxTicks, WaitShort)
}

func (d *dec) retry(n ast.Node, r *Retry) {
	d.object(n, "retry", &r.Node,
		field{"policy", func(v ast.Node) { r.Policy, _ = d.enum(v, "retry policy", "none", "fixed", "exponential") }},
		field{"base", func(v ast.Node) { r.Base = d.tick(v, "base", durationRange) }},
		field{"cap", func(v ast.Node) { r.Cap = d.tick(v, "cap", durationRange) }},
		field{"jitter", func(v ast.Node) { r.Jitter, _ = d.boolean(v, "jitter") }},
	)
	switch r.Policy {
	case "none":
		for _, f := range []string{"base", "cap", "jitter"} {
			if r.Has(f) {
				d.errf(r.FieldPos(f), "%s needs retry policy fixed or exponential", f)
			}
		}
	case "fixed":
		d.require(&r.Node, "a fixed retry", "base")
		for _, f := range []string{"cap", "jitter"} {
			if r.Has(f) {
				d.errf(r.FieldPos(f), "%s is for retry policy exponential", f)
			}
		}
	case "exponential":
		d.require(&r.Node, "an exponential retry", "base")
		if !r.Has("cap") && r.Base > 0 {
			r.Cap = min(64*r.Base, MaxTicks)
		}
		if r.Has("cap") && r.Base > 0 && r.Cap < r.Base {
			d.errf(r.FieldPos("cap"), "cap %d is below base %d", r.Cap, r.Base)
		}
	}
}

func (d *dec) member(n ast.Node, m *Member) {
	m.Commit, m.Batch, m.Idempotency, m.Handler.Kind = "after", 10, "none", HandlerSucceed
	d.object(n, "member", &m.Node,
		field{"name", func(v ast.Node) { m.Name = d.name(v, "member name") }},
		field{"group", func(v ast.Node) { m.Group = d.name(v, "member group") }},
		field{"commit", func(v ast.Node) { m.Commit, _ = d.enum(v, "commit", "after", "before", "auto", "off_by_one") }},
		field{"handler", func(v ast.Node) { d.handler(v, &m.Handler) }},
		field{"batch", func(v ast.Node) { m.Batch = d.int(v, "batch", batchRange) }},
		field{"idempotency", func(v ast.Node) {
			m.Idempotency, _ = d.enum(v, "idempotency", "none", "message_id", "business_key")
		}},
		field{"start", func(v ast.Node) { m.Start = d.tick(v, "start", tickRange) }},
	)
	d.require(&m.Node, "member", "name", "group")
}

func (d *dec) relay(n ast.Node, r *Relay) {
	r.Mode, r.Batch, r.Interval, r.Lease, r.Backoff, r.Order = "poll", 10, 1, 5, 2, "global"
	d.object(n, "relay", &r.Node,
		field{"name", func(v ast.Node) { r.Name = d.name(v, "relay name") }},
		field{"service", func(v ast.Node) { r.Service = d.name(v, "relay service") }},
		field{"mode", func(v ast.Node) { r.Mode, _ = d.enum(v, "mode", "poll", "cdc") }},
		field{"batch", func(v ast.Node) { r.Batch = d.int(v, "batch", batchRange) }},
		field{"interval", func(v ast.Node) { r.Interval = d.tick(v, "interval", durationRange) }},
		field{"lease", func(v ast.Node) { r.Lease = d.tick(v, "lease", durationRange) }},
		field{"backoff", func(v ast.Node) { r.Backoff = d.tick(v, "backoff", durationRange) }},
		field{"order", func(v ast.Node) { r.Order, _ = d.enum(v, "order", "global", "per_aggregate") }},
		field{"start", func(v ast.Node) { r.Start = d.tick(v, "start", tickRange) }},
	)
	d.require(&r.Node, "relay", "name", "service")
}

// pointNames lists the fault points for messages.
func pointNames() []string {
	names := make([]string, len(faults.Points))
	for i, p := range faults.Points {
		names[i] = string(p.Point)
	}
	return names
}

func (d *dec) fault(n ast.Node, f *Fault) {
	untilOK := false
	d.object(n, "fault", &f.Node,
		field{"name", func(v ast.Node) { f.Name = d.name(v, "fault name") }},
		field{"point", func(v ast.Node) {
			s, ok := d.line(v, "point")
			if !ok {
				return
			}
			if s == "" {
				d.errf(posOf(v), "point must not be empty; allowed: %s", strings.Join(pointNames(), ", "))
				return
			}
			if !faults.Known(faults.Point(s)) {
				msg := fmt.Sprintf("unknown fault point %q", clip(s))
				if sg := suggestName(s, pointNames()); sg != "" {
					msg += fmt.Sprintf(" (did you mean %q?)", sg)
				}
				d.errf(posOf(v), "%s; allowed: %s", msg, strings.Join(pointNames(), ", "))
				return
			}
			f.Point = faults.Point(s)
		}},
		field{"match", func(v ast.Node) {
			var mn Node
			m := &f.Match
			glob := func(dst *string, what string) func(v ast.Node) {
				return func(v ast.Node) {
					if s, ok := d.line(v, what); ok && d.checkGlob(posOf(v), what, s) {
						*dst = s
					}
				}
			}
			d.object(v, "fault match", &mn,
				field{"key", glob(&m.Key, "match key")},
				field{"consumer", glob(&m.Consumer, "match consumer")},
				field{"group", glob(&m.Group, "match group")},
				field{"type", glob(&m.Type, "match type")},
				field{"where", glob(&m.Where, "match where")},
			)
			f.matchNode = mn
		}},
		field{"probability", func(v ast.Node) { f.Probability, _ = d.number(v, "probability", 0, 1) }},
		field{"from", func(v ast.Node) { f.From = d.tick(v, "from", tickRange) }},
		field{"until", func(v ast.Node) {
			u, ok := d.integer(v, "until", tickRange)
			f.Until = sim.Tick(u)
			untilOK = ok
		}},
		field{"count", func(v ast.Node) { f.Count = d.int(v, "count", bounds{0, MaxMessages, ""}) }},
		field{"nth", func(v ast.Node) { f.Nth = d.int(v, "nth", bounds{0, MaxMessages, ""}) }},
		field{"param", func(v ast.Node) { f.Param, _ = d.integer(v, "param", bounds{0, MaxTicks, ""}) }},
		field{"error", func(v ast.Node) { f.Error, _ = d.line(v, "error") }},
	)
	d.require(&f.Node, "fault", "point")
	if untilOK && f.Until <= f.From {
		d.errf(f.FieldPos("until"), "until %d must be after from %d (the window is [from, until))", f.Until, f.From)
	}
	if f.Has("param") && f.Point != "" {
		for _, p := range faults.Points {
			if p.Point == f.Point && p.Param == "" {
				d.errf(f.FieldPos("param"), "param is not used by fault point %s", f.Point)
			}
		}
	}
}

// checkGlob reports a malformed path.Match pattern.
func (d *dec) checkGlob(p Pos, what, s string) bool {
	if _, err := path.Match(s, ""); err != nil {
		d.errf(p, "%s %q is not a valid pattern (use * ? [a-z] as in path.Match)", what, clip(s))
		return false
	}
	return true
}

// actionFields are the subject fields of timeline actions, per action.
var actionFields = map[string][]string{
	ActionConnect:       {"subscriber", "consumer", "member"},
	ActionDisconnect:    {"subscriber", "consumer", "member"},
	ActionMute:          {"subscriber"},
	ActionUnmute:        {"subscriber"},
	ActionSeek:          {"group"},
	ActionRedrive:       {"queue"},
	ActionPurge:         {"queue"},
	ActionAddPartitions: {"log"},
	ActionFixHandler:    {"consumer", "member"},
	ActionCrash:         {"consumer", "member"},
	ActionKillRelay:     {"relay"},
	ActionStartRelay:    {"relay"},
	ActionDisableFault:  {"fault"},
}

// actionNames lists the actions in documentation order.
var actionNames = []string{ActionConnect, ActionDisconnect, ActionMute, ActionUnmute, ActionSeek, ActionRedrive,
	ActionPurge, ActionAddPartitions, ActionFixHandler, ActionCrash, ActionKillRelay, ActionStartRelay, ActionDisableFault}

func (d *dec) action(n ast.Node, a *Action) {
	subject := func(dst *string, what string) func(v ast.Node) {
		return func(v ast.Node) { *dst = d.name(v, what) }
	}
	if !d.object(n, "timeline action", &a.Node,
		field{"at", func(v ast.Node) { a.At = d.tick(v, "at", tickRange) }},
		field{"action", func(v ast.Node) { a.Action, _ = d.enum(v, "action", actionNames...) }},
		field{"queue", subject(&a.Queue, "queue")},
		field{"log", subject(&a.Log, "log")},
		field{"group", subject(&a.Group, "group")},
		field{"consumer", subject(&a.Consumer, "consumer")},
		field{"member", subject(&a.Member, "member")},
		field{"subscriber", subject(&a.Subscriber, "subscriber")},
		field{"relay", subject(&a.Relay, "relay")},
		field{"fault", subject(&a.Fault, "fault")},
		field{"to", func(v ast.Node) { a.To, _ = d.enum(v, "seek to", "earliest", "latest", "offset", "tick") }},
		field{"offset", func(v ast.Node) { a.Offset, _ = d.integer(v, "offset", bounds{0, 1 << 53, ""}) }},
		field{"tick", func(v ast.Node) { a.Tick = d.tick(v, "tick", tickRange) }},
		field{"partition", func(v ast.Node) { a.Partition = d.int(v, "partition", bounds{0, MaxPartitions - 1, ""}) }},
		field{"count", func(v ast.Node) { a.Count = d.int(v, "count", bounds{0, MaxMessages, ""}) }},
	) {
		return
	}
	d.require(&a.Node, "timeline action", "at", "action")
	subjects, ok := actionFields[a.Action]
	if !ok {
		return
	}
	// Which of the optional fields the action takes.
	extra := map[string][]string{
		ActionSeek:          {"to", "offset", "tick", "partition"},
		ActionRedrive:       {"count"},
		ActionAddPartitions: {"count"},
	}[a.Action]
	allowed := append(append([]string{"at", "action"}, subjects...), extra...)
	var given []string
	for _, f := range a.fields {
		if !contains(allowed, f.name) {
			d.errf(f.pos, "action %s does not take %s; it takes: %s", a.Action, f.name, strings.Join(allowed, ", "))
			continue
		}
		if contains(subjects, f.name) {
			given = append(given, f.name)
		}
	}
	if len(given) != 1 {
		if len(subjects) == 1 {
			d.errf(a.Pos, "action %s needs %s", a.Action, subjects[0])
		} else {
			d.errf(a.Pos, "action %s needs exactly one of %s", a.Action, strings.Join(subjects, ", "))
		}
	}
	switch a.Action {
	case ActionSeek:
		d.require(&a.Node, "action seek", "to")
		if a.To == "offset" {
			d.require(&a.Node, "seek to offset", "offset")
		} else if a.Has("offset") {
			d.errf(a.FieldPos("offset"), "offset goes with to: offset")
		}
		if a.To == "tick" {
			d.require(&a.Node, "seek to tick", "tick")
		} else if a.Has("tick") {
			d.errf(a.FieldPos("tick"), "tick goes with to: tick")
		}
	case ActionAddPartitions:
		d.require(&a.Node, "action add_partitions", "count")
		if a.Has("count") && a.Count < 1 {
			d.errf(a.FieldPos("count"), "count must be between 1 and %d, got %d", MaxPartitions, a.Count)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

var checkNames = []string{CheckNoLoss, CheckAtLeastOnce, CheckAtMostOnce, CheckExactlyOnce, CheckOrderedPerKey, CheckMaxDuplicates}

var opNames = []string{"==", "!=", "<", "<=", ">", ">="}

func (d *dec) expectation(n ast.Node, e *Expectation) {
	if !d.object(n, "expectation", &e.Node,
		field{"check", func(v ast.Node) { e.Check, _ = d.enum(v, "check", checkNames...) }},
		field{"consumer", func(v ast.Node) { e.Consumer = d.name(v, "consumer") }},
		field{"max", func(v ast.Node) { e.Max = d.int(v, "max", bounds{0, MaxMessages, ""}) }},
		field{"violated", func(v ast.Node) { e.Violated, _ = d.boolean(v, "violated") }},
		field{"metric", func(v ast.Node) {
			s, ok := d.line(v, "metric")
			if !ok {
				return
			}
			m, msg := parseMetric(s)
			if msg != "" {
				d.errf(posOf(v), "%s", msg)
				return
			}
			e.Metric = m
		}},
		field{"op", func(v ast.Node) { e.Op, _ = d.enum(v, "op", opNames...) }},
		field{"value", func(v ast.Node) { e.Value, _ = d.number(v, "value", -1e15, 1e15) }},
	) {
		return
	}
	switch {
	case e.Has("check") && e.Has("metric"):
		d.errf(e.FieldPos("metric"), "an expectation is either a check or a metric comparison, not both")
	case e.Has("check"):
		for _, f := range []string{"op", "value"} {
			if e.Has(f) {
				d.errf(e.FieldPos(f), "%s goes with metric, not with check", f)
			}
		}
		if e.Has("max") && e.Check != CheckMaxDuplicates && e.Check != "" {
			d.errf(e.FieldPos("max"), "max goes with check max_duplicates")
		}
		if e.Check == CheckMaxDuplicates {
			d.require(&e.Node, "check max_duplicates", "max")
		}
		if e.Check == CheckNoLoss && e.Has("consumer") {
			d.errf(e.FieldPos("consumer"), "no_loss is about every consumer; it takes no consumer")
		}
	case e.Has("metric"):
		d.require(&e.Node, "a metric expectation", "op", "value")
		for _, f := range []string{"consumer", "max", "violated"} {
			if e.Has(f) {
				d.errf(e.FieldPos(f), "%s goes with check, not with metric", f)
			}
		}
	default:
		d.errf(e.Pos, "an expectation needs check (one of %s) or metric with op and value", strings.Join(checkNames, ", "))
	}
}

// listOf decodes the list v into *dst, one element per item, each by
// decode; at most max items are taken (see dec.list).
func listOf[T any](d *dec, v ast.Node, what string, max int, dst *[]T, decode func(ast.Node, *T)) {
	d.list(v, what, max, func(v ast.Node) {
		*dst = append(*dst, *new(T))
		decode(v, &(*dst)[len(*dst)-1])
	})
}
