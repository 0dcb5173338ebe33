package scenario

import (
	"fmt"
	"math"
	"path"
	"reflect"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/pubsub"
	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/sim"
)

// This file holds what the field table (fields.go) cannot say as data:
// the decoders of the few fields whose values take more than one form,
// and the checks that relate the fields of one mapping.

func quote(s string) string { return strconv.Quote(clip(s)) }

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

// scenario decodes the document body.
func (d *dec) scenario(n ast.Node, s *Scenario) bool {
	return d.decode(n, scenarioObj, s)
}

// hooks attaches the decoders and checks that are code, not data.
func hooks() {
	hook(scenarioObj, "seed", func(d *dec, v ast.Node, s reflect.Value) { s.Addr().Interface().(*Scenario).Seed = d.seed(v) })
	runObj.check = func(d *dec, p any) { d.checkRun(p.(*Length)) }
	queueObj.check = func(d *dec, p any) { d.checkQueue(p.(*Queue)) }
	hook(topicObj, "fan_out_to_queues", func(d *dec, v ast.Node, s reflect.Value) {
		t := s.Addr().Interface().(*Topic)
		d.list(v, "fan_out_to_queues", MaxEntities, func(v ast.Node) {
			t.FanOutToQueues = append(t.FanOutToQueues, d.name(v, "fan-out queue"))
			t.fanOutPos = append(t.fanOutPos, posOf(v))
		})
	})
	hook(topicObj, "fan_out_retry", func(d *dec, v ast.Node, s reflect.Value) {
		s.Addr().Interface().(*Topic).FanOutRetry = d.fanOutRetry(v)
	})
	topicObj.check = func(d *dec, p any) {
		t := p.(*Topic)
		if t.FanOutRetry != nil && len(t.FanOutToQueues) == 0 && !t.Has("fan_out_to_queues") {
			d.errf(t.FieldPos("fan_out_retry"), "fan_out_retry is the retry policy of fan_out_to_queues, and topic %q has none", t.Name)
		}
	}
	subscriberObj.check = func(d *dec, p any) {
		s := p.(*Subscriber)
		if s.Supervisor && len(s.Emits) == 0 {
			d.errf(s.FieldPos("supervisor"), "subscriber %q: supervisor mutes the subscriber's emits, and it has none", s.Name)
		}
	}
	retentionObj.check = func(d *dec, p any) {
		if r := p.(*Retention); !r.Has("ticks") && !r.Has("records") && !r.Has("bytes") {
			d.errf(r.Pos, "retention needs ticks, records or bytes (or several)")
		}
	}
	hook(serviceObj, "publish_to", func(d *dec, v ast.Node, s reflect.Value) {
		d.target(v, "publish_to", &s.Addr().Interface().(*Service).PublishTo, serviceTargetObj)
	})
	hook(forwardObj, "to", func(d *dec, v ast.Node, s reflect.Value) {
		d.target(v, "to", &s.Addr().Interface().(*Forward).To, producerTargetObj)
	})
	hook(producerObj, "to", func(d *dec, v ast.Node, s reflect.Value) {
		d.target(v, "to", &s.Addr().Interface().(*Producer).To, producerTargetObj)
	})
	hook(producerObj, "keys", func(d *dec, v ast.Node, s reflect.Value) { d.keys(v, s.Addr().Interface().(*Producer)) })
	producerObj.check = func(d *dec, p any) { d.checkProducer(p.(*Producer)) }
	handlerObj.check = func(d *dec, p any) { d.checkHandler(p.(*Handler)) }
	hook(consumerObj, "wait_time", func(d *dec, v ast.Node, s reflect.Value) { d.waitTime(v, s.Addr().Interface().(*Consumer)) })
	retryObj.check = func(d *dec, p any) { d.checkRetry(p.(*Retry)) }
	hook(faultObj, "point", func(d *dec, v ast.Node, s reflect.Value) { d.point(v, s.Addr().Interface().(*Fault)) })
	hook(faultObj, "match", func(d *dec, v ast.Node, s reflect.Value) { d.match(v, s.Addr().Interface().(*Fault)) })
	hook(faultObj, "until", func(d *dec, v ast.Node, s reflect.Value) {
		f := s.Addr().Interface().(*Fault)
		u, ok := d.integer(v, "until", tickRange)
		f.Until, f.untilOK = sim.Tick(u), ok
	})
	faultObj.check = func(d *dec, p any) { d.checkFault(p.(*Fault)) }
	actionObj.check = func(d *dec, p any) { d.checkAction(p.(*Action)) }
	hook(expectObj, "metric", func(d *dec, v ast.Node, s reflect.Value) {
		e := s.Addr().Interface().(*Expectation)
		str, ok := d.line(v, "metric")
		if !ok {
			return
		}
		m, msg := parseMetric(str)
		if msg != "" {
			d.errf(posOf(v), "%s", msg)
			return
		}
		e.Metric = m
	})
	expectObj.check = func(d *dec, p any) { d.checkExpectation(p.(*Expectation)) }
	hook(variantObj, "set", func(d *dec, v ast.Node, s reflect.Value) { d.overrides(v, s.Addr().Interface().(*Variant)) })
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

func (d *dec) checkRun(r *Length) {
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

func (d *dec) checkQueue(q *Queue) {
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
	if q.Strict && q.MaxInFlight > queue.StrictInFlightLimit {
		d.errf(q.FieldPos("max_in_flight"), "max_in_flight of a strict queue must be between 0 and %d (SQS's in-flight quota; 0 means that quota), got %d",
			queue.StrictInFlightLimit, q.MaxInFlight)
	}
}

// fanOutRetry decodes `none` or {immediate, backoff, delay, max_delay}.
// Omitted counts are 0 and delay defaults to 1: a written policy states
// every retry it makes. It returns nil after an error.
func (d *dec) fanOutRetry(n ast.Node) *FanOutRetry {
	r := &FanOutRetry{ForwardRetry: pubsub.ForwardRetry{Delay: 1}}
	allowed := "none, or a mapping with the fields " + strings.Join(fanOutRetryObj.names(), ", ")
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
		d.decode(n, fanOutRetryObj, r)
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

// target decodes {kind: name} with exactly one of the kinds of o.
func (d *dec) target(n ast.Node, what string, t *Target, o *object) {
	kinds := o.names()
	errs := len(d.c.list)
	if !d.object(n, what, o, &t.Node, func(f *field, v ast.Node) {
		if t.Kind == "" {
			t.Kind, t.Name = f.name, d.name(v, what+" "+f.name)
		}
	}) {
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

// keys decodes a producer's keys: a list of keys, or one pattern.
func (d *dec) keys(v ast.Node, p *Producer) {
	if _, ok := v.(*ast.SequenceNode); ok {
		d.list(v, "keys", MaxKeyList, func(v ast.Node) {
			if k, ok := d.line(v, "key"); ok {
				p.Keys = append(p.Keys, k)
			}
		})
		return
	}
	p.KeyPattern, _ = d.line(v, "keys")
}

func (d *dec) checkProducer(p *Producer) {
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

func (d *dec) checkHandler(h *Handler) {
	d.checkGlob(h.FieldPos("keys"), "handler keys", h.Keys)
	if h.Has("failures") && h.Kind != sim.Transient {
		d.errf(h.FieldPos("failures"), "failures is for handler kind transient, not %s", h.Kind)
	}
	if h.Kind == sim.Slow && h.Ticks < 1 && !h.Has("ticks") {
		d.errf(h.Pos, "a slow handler needs ticks (its processing time, at least 1)")
	} else if h.Kind == sim.Slow && h.Ticks < 1 {
		d.errf(h.FieldPos("ticks"), "a slow handler needs ticks of at least 1")
	}
	if h.Kind == sim.Transient && h.Failures == 0 {
		h.Failures = 1
	}
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
			v, _ := d.integer(n, "wait_time", consumerObj.fieldOf("wait_time").bounds())
			c.WaitTime = sim.Tick(v)
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

func (d *dec) checkRetry(r *Retry) {
	switch r.Policy {
	case queue.RetryNone:
		for _, f := range []string{"base", "cap", "jitter"} {
			if r.Has(f) {
				d.errf(r.FieldPos(f), "%s needs retry policy fixed or exponential", f)
			}
		}
	case queue.RetryFixed:
		d.require(&r.Node, "a fixed retry", "base")
		for _, f := range []string{"cap", "jitter"} {
			if r.Has(f) {
				d.errf(r.FieldPos(f), "%s is for retry policy exponential", f)
			}
		}
	case queue.RetryExponential:
		d.require(&r.Node, "an exponential retry", "base")
		if !r.Has("cap") && r.Base > 0 {
			r.Cap = min(64*r.Base, MaxTicks)
		}
		if r.Has("cap") && r.Base > 0 && r.Cap < r.Base {
			d.errf(r.FieldPos("cap"), "cap %d is below base %d", r.Cap, r.Base)
		}
	}
}

// pointNames lists the fault points for messages.
func pointNames() []string {
	names := make([]string, len(faults.Points))
	for i, p := range faults.Points {
		names[i] = string(p.Point)
	}
	return names
}

// point decodes a fault point.
func (d *dec) point(v ast.Node, f *Fault) {
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
}

// match decodes a fault's match: patterns, each checked.
func (d *dec) match(v ast.Node, f *Fault) {
	m := reflect.ValueOf(&f.Match).Elem()
	var mn Node
	d.object(v, matchObj.what, matchObj, &mn, func(fl *field, v ast.Node) {
		if s, ok := d.line(v, fl.what()); ok && d.checkGlob(posOf(v), fl.what(), s) {
			m.FieldByIndex(fl.index).SetString(s)
		}
	})
	f.matchNode = mn
}

func (d *dec) checkFault(f *Fault) {
	if f.untilOK && f.Until <= f.From {
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
	ActionRead:          {"group"},
}

// actionExtra are the optional fields an action takes besides its subject.
var actionExtra = map[string][]string{
	ActionSeek:          {"to", "offset", "tick", "partition"},
	ActionRedrive:       {"count"},
	ActionAddPartitions: {"count"},
	ActionRead:          {"key", "from"},
}

// actionNames lists the actions in documentation order.
var actionNames = []string{ActionConnect, ActionDisconnect, ActionMute, ActionUnmute, ActionSeek, ActionRedrive,
	ActionPurge, ActionAddPartitions, ActionFixHandler, ActionCrash, ActionKillRelay, ActionStartRelay, ActionDisableFault, ActionRead}

func (d *dec) checkAction(a *Action) {
	subjects, ok := actionFields[a.Action]
	if !ok {
		return
	}
	allowed := append(append([]string{"at", "action"}, subjects...), actionExtra[a.Action]...)
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
		if a.To == eventlog.SeekToOffset {
			d.require(&a.Node, "seek to offset", "offset")
		} else if a.Has("offset") {
			d.errf(a.FieldPos("offset"), "offset goes with to: offset")
		}
		if a.To == eventlog.SeekToTick {
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

func (d *dec) checkExpectation(e *Expectation) {
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

// overrides decodes the set mapping of a variant: keys are dotted paths of
// names (see Scenario.Variant), values any YAML value, kept as written and
// decoded only when the variant is built, in the place their path names.
func (d *dec) overrides(n ast.Node, vr *Variant) {
	var pairs []*ast.MappingValueNode
	switch x := n.(type) {
	case *ast.MappingNode:
		pairs = x.Values
	case *ast.MappingValueNode:
		pairs = []*ast.MappingValueNode{x}
	default:
		d.errf(posOf(n), "set must be a mapping of paths to values, e.g. {consumers.billing.idempotency: message_id}, got %s", describe(n))
		return
	}
	seen := map[string]bool{}
	for _, kv := range pairs {
		if kv == nil || kv.Key == nil {
			continue
		}
		kp := posOf(kv.Key)
		k, ok := kv.Key.(*ast.StringNode)
		if !ok {
			d.errf(kp, "a set key is a dotted path such as consumers.billing.idempotency, got %s", describe(kv.Key))
			continue
		}
		path := k.Value
		if msg := checkPath(path); msg != "" {
			d.errf(kp, "set path %q %s", clip(path), msg)
			continue
		}
		if seen[path] {
			d.errf(kp, "set path %q is written twice in variant %q", clip(path), vr.Name)
			continue
		}
		seen[path] = true
		v := kv.Value
		if v != nil {
			if v = d.plain(v); v == nil {
				continue
			}
		}
		quoted := k.Token != nil && (k.Token.Type == token.SingleQuoteType || k.Token.Type == token.DoubleQuoteType)
		vr.sets = append(vr.sets, override{path: path, pos: kp, quote: quoted, value: v})
	}
	if len(pairs) == 0 {
		d.errf(posOf(n), "set of variant %q is empty; a variant sets at least one value", vr.Name)
	}
}

// checkPath says what is wrong with a set path, or returns "".
func checkPath(path string) string {
	if path == "" {
		return "is empty; write a dotted path such as consumers.billing.idempotency"
	}
	for _, seg := range strings.Split(path, ".") {
		if seg == "" {
			return "has an empty part; write a dotted path such as consumers.billing.idempotency"
		}
		if seg == "variants" {
			return "names variants; a variant cannot change the variants"
		}
	}
	return ""
}
