package scenario

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/outbox"
	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/saga"
	"github.com/brokerlab/brokerlab/sim"
)

// namespace is a set of declared names of one kind, kept in file order.
type namespace struct {
	kind, plural string
	list         []string
	pos          map[string]Pos
}

func newNamespace(kind, plural string) *namespace {
	return &namespace{kind: kind, plural: plural, pos: map[string]Pos{}}
}

func (ns *namespace) has(name string) bool { _, ok := ns.pos[name]; return ok }

// val checks what decoding a single mapping cannot: uniqueness, references
// between parts of the scenario, and totals against the caps.
type val struct {
	d  *dec
	s  *Scenario
	ns map[string]*namespace
}

func (v *val) errf(p Pos, format string, args ...any) { v.d.errf(p, format, args...) }

// declare adds name to ns, reporting a second declaration.
func (v *val) declare(ns *namespace, name string, p Pos) {
	if name == "" {
		return
	}
	if first, ok := ns.pos[name]; ok {
		v.errf(p, "%s %q is defined twice (first at line %d)", ns.kind, name, first.Line)
		return
	}
	ns.pos[name] = p
	ns.list = append(ns.list, name)
}

// ref reports name when ns does not declare it: "<prefix> queue "x",
// which is not defined; queues: a, b".
func (v *val) ref(p Pos, prefix string, ns *namespace, name string) bool {
	if name == "" || ns.has(name) {
		return name != ""
	}
	msg := fmt.Sprintf("%s %s %q, which is not defined", prefix, ns.kind, name)
	if s := suggestName(name, ns.list); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	if len(ns.list) == 0 {
		msg += "; no " + ns.plural + " are defined"
	} else {
		msg += "; " + ns.plural + ": " + listNames(ns.list)
	}
	v.errf(p, "%s", msg)
	return false
}

func (v *val) validate() {
	s := v.s
	v.ns = map[string]*namespace{}
	for _, k := range [][2]string{{"queue", "queues"}, {"topic", "topics"}, {"log", "logs"}, {"group", "groups"},
		{"service", "services"}, {"subscriber", "subscribers"}, {"producer", "producers"}, {"consumer", "consumers"},
		{"member", "members"}, {"relay", "relays"}, {"saga", "sagas"}, {"fault", "faults"}} {
		v.ns[k[0]] = newNamespace(k[0], k[1])
	}
	t := &s.Topology
	if s.Has("topology") && len(t.Queues)+len(t.Topics)+len(t.Logs)+len(t.Services) == 0 {
		v.errf(s.FieldPos("topology"), "topology defines no queues, topics, logs or services")
	}

	// Declarations.
	for i := range t.Queues {
		v.declare(v.ns["queue"], t.Queues[i].Name, t.Queues[i].FieldPos("name"))
	}
	for i := range t.Topics {
		v.declare(v.ns["topic"], t.Topics[i].Name, t.Topics[i].FieldPos("name"))
		for j := range t.Topics[i].Subscribers {
			sub := &t.Topics[i].Subscribers[j]
			v.declare(v.ns["subscriber"], sub.Name, sub.FieldPos("name"))
		}
	}
	for i := range t.Logs {
		v.declare(v.ns["log"], t.Logs[i].Name, t.Logs[i].FieldPos("name"))
	}
	for i := range t.Groups {
		g := &t.Groups[i]
		v.declare(v.ns["group"], g.Name, g.FieldPos("name"))
		if g.Has("versioning") && !g.Projection {
			v.errf(g.FieldPos("versioning"), "versioning is for a group's projection; group %q has no projection: true", g.Name)
		}
	}
	for i := range t.Services {
		v.declare(v.ns["service"], t.Services[i].Name, t.Services[i].FieldPos("name"))
	}
	a := &s.Actors
	for i := range a.Producers {
		v.declare(v.ns["producer"], a.Producers[i].Name, a.Producers[i].FieldPos("name"))
	}
	for i := range a.Consumers {
		v.declare(v.ns["consumer"], a.Consumers[i].Name, a.Consumers[i].FieldPos("name"))
	}
	for i := range a.Members {
		v.declare(v.ns["member"], a.Members[i].Name, a.Members[i].FieldPos("name"))
	}
	for i := range a.Sagas {
		v.declare(v.ns["saga"], a.Sagas[i].Name, a.Sagas[i].FieldPos("name"))
	}
	for i := range a.Relays {
		v.declare(v.ns["relay"], a.Relays[i].Name, a.Relays[i].FieldPos("name"))
	}
	for i := range s.Faults {
		f := &s.Faults[i]
		if f.Name == "" && !f.Has("name") {
			f.Name = fmt.Sprintf("fault-%d", i+1)
		}
		v.declare(v.ns["fault"], f.Name, f.FieldPos("name"))
	}
	v.distinctActors()
	v.distinctLedgerNames()

	v.topologyRefs()
	v.actorRefs()
	v.faultRefs()
	v.timelineRefs()
	v.expectRefs()
	v.viewRefs()
}

// viewRefs checks the view's tab and keeps variant names unique.
func (v *val) viewRefs() {
	s := v.s
	tabs := newNamespace("queue, topic, log or service", "queues, topics, logs and services")
	for _, k := range []string{"queue", "topic", "log", "service"} {
		for _, n := range v.ns[k].list {
			if !tabs.has(n) {
				tabs.pos[n] = v.ns[k].pos[n]
				tabs.list = append(tabs.list, n)
			}
		}
	}
	if tab := s.View.Tab; tab != "" {
		v.ref(s.View.FieldPos("tab"), "view tab names", tabs, tab)
	}
	for i := range s.Narration {
		if tab := s.Narration[i].Tab; tab != "" {
			v.ref(s.Narration[i].FieldPos("tab"), "narration tab names", tabs, tab)
		}
	}
	variants := newNamespace("variant", "variants")
	for i := range s.Variants {
		v.declare(variants, s.Variants[i].Name, s.Variants[i].FieldPos("name"))
	}
}

// distinctActors keeps consumer, member, relay and subscriber names apart:
// fault rules match them by name.
func (v *val) distinctActors() {
	seen := map[string]string{}
	for _, k := range []string{"subscriber", "consumer", "member", "relay"} {
		ns := v.ns[k]
		for _, name := range ns.list {
			if other, ok := seen[name]; ok {
				v.errf(ns.pos[name], "%s %q has the name of a %s; consumers, members, relays and subscribers need distinct names (fault rules match them by name)", k, name, other)
				continue
			}
			seen[name] = k
		}
	}
}

// distinctLedgerNames keeps the ledger's logical consumers apart: every
// queue, group and subscriber is one.
func (v *val) distinctLedgerNames() {
	seen := map[string]string{}
	for _, k := range []string{"queue", "group", "subscriber"} {
		ns := v.ns[k]
		for _, name := range ns.list {
			if other, ok := seen[name]; ok {
				v.errf(ns.pos[name], "%s %q has the name of a %s; queues, groups and subscribers need distinct names (each is a consumer in the ledger)", k, name, other)
				continue
			}
			seen[name] = k
		}
	}
	for _, c := range v.s.Actors.Consumers {
		if other, ok := seen[c.Name]; ok && c.Name != c.Queue && other != "subscriber" {
			v.errf(c.FieldPos("name"), "consumer %q has the name of a %s; expectations could not tell them apart", c.Name, other)
		}
	}
}

func (v *val) target(t *Target, prefix string) {
	if t.Kind == "" {
		return
	}
	v.ref(t.FieldPos(t.Kind), prefix, v.ns[t.Kind], t.Name)
}

func (v *val) topologyRefs() {
	t := &v.s.Topology
	dlq := map[string]string{}
	for i := range t.Queues {
		q := &t.Queues[i]
		if q.DeadLetter == nil || q.DeadLetter.Queue == "" {
			continue
		}
		p := q.DeadLetter.FieldPos("queue")
		if q.DeadLetter.Queue == q.Name {
			v.errf(p, "queue %q cannot be its own dead-letter queue", q.Name)
			continue
		}
		if v.ref(p, fmt.Sprintf("queue %q dead-letters to", q.Name), v.ns["queue"], q.DeadLetter.Queue) {
			dlq[q.Name] = q.DeadLetter.Queue
			if d := v.queue(q.DeadLetter.Queue); d != nil && d.FIFO != q.FIFO {
				v.errf(p, "queue %q is %s and dead-letters to queue %q, which is %s; a dead-letter queue must be of its source's kind (the same fifo on both)",
					q.Name, queueKind(q.FIFO), d.Name, queueKind(d.FIFO))
			}
		}
	}
	// A dead-letter chain must end: follow it at most len(queues) steps.
	for i := range t.Queues {
		q := &t.Queues[i]
		cur, steps := q.Name, 0
		for {
			next, ok := dlq[cur]
			if !ok {
				break
			}
			if cur = next; cur == q.Name || steps > len(t.Queues) {
				v.errf(q.DeadLetter.FieldPos("queue"), "dead-letter queues of %q form a cycle", q.Name)
				break
			}
			steps++
		}
	}
	for i := range t.Topics {
		tp := &t.Topics[i]
		seen := map[string]bool{}
		for j, q := range tp.FanOutToQueues {
			p := tp.fanOutPos[j]
			if v.ref(p, fmt.Sprintf("topic %q fans out to", tp.Name), v.ns["queue"], q) && seen[q] {
				v.errf(p, "topic %q fans out to queue %q twice", tp.Name, q)
			}
			seen[q] = true
		}
		for j := range tp.Subscribers {
			sub := &tp.Subscribers[j]
			for k := range sub.Emits {
				e := &sub.Emits[k]
				v.ref(e.FieldPos("topic"), fmt.Sprintf("subscriber %q emits to", sub.Name), v.ns["topic"], e.Topic)
			}
		}
	}
	for i := range t.Groups {
		g := &t.Groups[i]
		v.ref(g.FieldPos("log"), fmt.Sprintf("group %q reads", g.Name), v.ns["log"], g.Log)
	}
	for i := range t.Services {
		sv := &t.Services[i]
		v.target(&sv.PublishTo, fmt.Sprintf("service %q publishes to", sv.Name))
	}
}

func (v *val) actorRefs() {
	s := v.s
	a := &s.Actors
	total := 0
	for i := range a.Producers {
		p := &a.Producers[i]
		v.target(&p.To, fmt.Sprintf("producer %q sends to", p.Name))
		total += p.Count
	}
	if total > MaxMessages {
		v.errf(a.FieldPos("producers"), "producers send %d messages in total; at most %d are allowed", total, MaxMessages)
	}
	for i := range a.Consumers {
		if f := a.Consumers[i].Forward; f != nil && f.To.Kind == TargetService {
			v.errf(f.To.Pos, "consumer %q forwards to a service; a forward goes to a queue, topic or log", a.Consumers[i].Name)
		} else if f != nil {
			v.target(&f.To, fmt.Sprintf("consumer %q forwards to", a.Consumers[i].Name))
		}
	}
	for i := range a.Consumers {
		c := &a.Consumers[i]
		if v.ref(c.FieldPos("queue"), fmt.Sprintf("consumer %q reads", c.Name), v.ns["queue"], c.Queue) {
			if q := v.queue(c.Queue); q != nil && q.Strict && c.Batch > queue.MaxStrictBatch {
				v.errf(c.FieldPos("batch"), "batch of consumer %q must be between 1 and %d: queue %q is strict (an SQS receive takes at most %d messages), got %d",
					c.Name, queue.MaxStrictBatch, q.Name, queue.MaxStrictBatch, c.Batch)
			}
		}
	}
	for i := range a.Sagas {
		g := &a.Sagas[i]
		v.ref(g.FieldPos("queue"), fmt.Sprintf("saga %q reads", g.Name), v.ns["queue"], g.Queue)
		if g.Has("steps") && len(g.Steps) == 0 {
			v.errf(g.FieldPos("steps"), "saga %q has no steps; 1 to %d are allowed", g.Name, saga.MaxSteps)
		}
		seen := map[string]bool{}
		for j := range g.Steps {
			if st := &g.Steps[j]; seen[st.Name] {
				v.errf(st.FieldPos("name"), "saga %q has step %q twice; step names must be distinct", g.Name, st.Name)
			} else {
				seen[st.Name] = true
			}
		}
	}
	for i := range a.Members {
		m := &a.Members[i]
		v.ref(m.FieldPos("group"), fmt.Sprintf("member %q joins", m.Name), v.ns["group"], m.Group)
	}
	for i := range a.Relays {
		r := &a.Relays[i]
		if v.ref(r.FieldPos("service"), fmt.Sprintf("relay %q serves", r.Name), v.ns["service"], r.Service) {
			if sv := v.service(r.Service); sv != nil && sv.Writer != outbox.Outbox {
				v.errf(r.FieldPos("service"), "relay %q serves service %q, whose writer is %s; relays need writer: outbox", r.Name, sv.Name, sv.Writer)
			}
		}
	}
}

func (v *val) queue(name string) *Queue {
	for i := range v.s.Topology.Queues {
		if v.s.Topology.Queues[i].Name == name {
			return &v.s.Topology.Queues[i]
		}
	}
	return nil
}

// queueKind names a queue's kind for messages.
func queueKind(fifo bool) string {
	if fifo {
		return "FIFO"
	}
	return "standard"
}

func (v *val) service(name string) *Service {
	for i := range v.s.Topology.Services {
		if v.s.Topology.Services[i].Name == name {
			return &v.s.Topology.Services[i]
		}
	}
	return nil
}

func (v *val) log(name string) *Log {
	for i := range v.s.Topology.Logs {
		if v.s.Topology.Logs[i].Name == name {
			return &v.s.Topology.Logs[i]
		}
	}
	return nil
}

func (v *val) group(name string) *Group {
	for i := range v.s.Topology.Groups {
		if v.s.Topology.Groups[i].Name == name {
			return &v.s.Topology.Groups[i]
		}
	}
	return nil
}

func literal(s string) bool { return s != "" && !strings.ContainsAny(s, "*?[\\") }

// whereKinds are the component prefixes a fault's match.where may name.
var whereKinds = []string{"queue", "topic", "log", "group", "service", "relay"}

// ackWhere are the match.where kinds at which broker.ack_lost can fire:
// queues (acks, deletes) and logs and groups (offset commits); pub/sub
// has no acks.
var ackWhere = []string{"queue", "log", "group"}

func (v *val) faultRefs() {
	// A service is the consumer its writer points are consulted with
	// (writer.crash_after_commit, ...), so a rule may match its name.
	actors := newNamespace("consumer, member, relay, saga, service or subscriber", "consumers, members, relays, sagas, services and subscribers")
	for _, k := range []string{"consumer", "member", "relay", "saga", "service", "subscriber"} {
		for _, n := range v.ns[k].list {
			if !actors.has(n) {
				actors.pos[n] = v.ns[k].pos[n]
				actors.list = append(actors.list, n)
			}
		}
	}
	sort.Strings(actors.list)
	globs := &consumerGlobs{s: v.s}
	for i := range v.s.Faults {
		f := &v.s.Faults[i]
		m := &f.matchNode
		if literal(f.Match.Consumer) {
			v.ref(m.FieldPos("consumer"), fmt.Sprintf("fault %q matches", f.Name), actors, f.Match.Consumer)
		}
		switch g, bad, over := globs.glob(f.Match.Consumer); {
		case over:
			v.errf(m.FieldPos("consumer"), "fault %q: match consumer %q: the patterns of this file need more than %d matches to be widened to the instances of consumers; end the pattern with * or write names",
				f.Name, clip(f.Match.Consumer), MaxGlobWork)
		case bad != "":
			v.errf(m.FieldPos("consumer"), "fault %q: match consumer %q names consumers with instances (NAME#1 ... NAME#N), "+
				"and no pattern that matches their instances leaves out %q; write a narrower pattern", f.Name, clip(f.Match.Consumer), bad)
		default:
			f.consumerGlob = g
		}
		if literal(f.Match.Group) {
			v.ref(m.FieldPos("group"), fmt.Sprintf("fault %q matches", f.Name), v.ns["group"], f.Match.Group)
		}
		if literal(f.Match.Where) {
			kind, name, ok := strings.Cut(f.Match.Where, ":")
			if !ok || !contains(whereKinds, kind) {
				v.errf(m.FieldPos("where"), "match where %q must be <kind>:<name> with kind one of %s, e.g. queue:orders",
					clip(f.Match.Where), strings.Join(whereKinds, ", "))
			} else if v.ref(m.FieldPos("where"), fmt.Sprintf("fault %q matches", f.Name), v.ns[kind], name) &&
				f.Point == faults.BrokerAckLost && !contains(ackWhere, kind) {
				v.errf(m.FieldPos("where"), "fault %q: %s applies to queue acks and deletes and to group commits, never at a %s; match where must be one of %s",
					f.Name, f.Point, kind, strings.Join(ackWhere, ", "))
			}
		}
	}
}

func (v *val) atInRun(n *Node, at sim.Tick, what string) {
	r := &v.s.Run
	if c := r.Cap(); c > 0 && at > c {
		v.errf(n.FieldPos("at"), "%s at tick %d comes after the end of the run (tick %d)", what, at, c)
	}
}

func (v *val) timelineRefs() {
	s := v.s
	added := map[string]int{}
	dlqs := map[string]bool{}
	for _, q := range s.Topology.Queues {
		if q.DeadLetter != nil {
			dlqs[q.DeadLetter.Queue] = true
		}
	}
	// Partition counts grow with add_partitions in tick order.
	order := make([]int, len(s.Timeline))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return s.Timeline[order[i]].At < s.Timeline[order[j]].At })
	for _, i := range order {
		a := &s.Timeline[i]
		v.atInRun(&a.Node, a.At, "action "+a.Action)
		prefix := "action " + a.Action + " names"
		// An action given two subjects where it takes one has been
		// reported once, as that; naming either is not a second mistake.
		given := 0
		for _, f := range actionFields[a.Action] {
			if a.Has(f) {
				given++
			}
		}
		for _, x := range []struct{ kind, name string }{
			{"queue", a.Queue}, {"log", a.Log}, {"group", a.Group}, {"consumer", a.Consumer}, {"member", a.Member},
			{"subscriber", a.Subscriber}, {"relay", a.Relay}, {"fault", a.Fault},
		} {
			if x.name != "" && (given <= 1 || !contains(actionFields[a.Action], x.kind)) {
				v.ref(a.FieldPos(x.kind), prefix, v.ns[x.kind], x.name)
			}
		}
		switch a.Action {
		case ActionRedrive:
			if v.ns["queue"].has(a.Queue) && !dlqs[a.Queue] {
				v.errf(a.FieldPos("queue"), "redrive needs a dead-letter queue; %q is no queue's dead_letter", a.Queue)
			}
		case ActionAddPartitions:
			if l := v.log(a.Log); l != nil && l.Partitions > 0 {
				added[a.Log] += a.Count
				if n := l.Partitions + added[a.Log]; n > MaxPartitions {
					v.errf(a.FieldPos("count"), "log %q would have %d partitions; partitions are capped at %d", a.Log, n, MaxPartitions)
				}
			}
		case ActionSeek:
			if g := v.group(a.Group); g != nil && a.Partition >= 0 {
				if l := v.log(g.Log); l != nil && l.Partitions > 0 && a.Partition >= l.Partitions+added[l.Name] {
					v.errf(a.FieldPos("partition"), "log %q has partitions 0 to %d at tick %d, not %d", l.Name, l.Partitions+added[l.Name]-1, a.At, a.Partition)
				}
			}
			if a.To == eventlog.SeekToTick && a.Tick > a.At {
				v.errf(a.FieldPos("tick"), "seek at tick %d cannot go to the future tick %d", a.At, a.Tick)
			}
		case ActionRead:
			if !a.Has("key") {
				v.errf(a.Pos, "action read needs the field \"key\"")
			}
			if g := v.group(a.Group); g != nil && !g.Projection {
				v.errf(a.FieldPos("group"), "read needs a group with projection: true; group %q builds none", a.Group)
			}
		}
	}
	for i := range s.Narration {
		v.atInRun(&s.Narration[i].Node, s.Narration[i].At, "narration step")
	}
	for i := range s.Expect {
		e := &s.Expect[i]
		if c := s.Run.Cap(); e.Judged() && c > 0 && e.By > c {
			v.errf(e.FieldPos("by"), "expectation judged by tick %d comes after the end of the run (tick %d)", e.By, c)
		}
	}
	v.partitionFaults(added)
}

// partitionFaults keeps log.partitions_added rules within the partition
// cap: a rule must fire a bounded number of times (nth, or count), and the
// partitions it can add, on top of the log's own and those add_partitions
// adds, must stay within MaxPartitions.
func (v *val) partitionFaults(added map[string]int) {
	for i := range v.s.Faults {
		f := &v.s.Faults[i]
		if f.Point != faults.PartitionsAdded {
			continue
		}
		firings := f.Count
		if f.Nth > 0 {
			firings = 1
		}
		if firings == 0 {
			v.errf(f.FieldPos("point"), "fault %q: a %s rule needs count or nth, so it fires a bounded number of times (partitions are capped at %d)",
				f.Name, f.Point, MaxPartitions)
			continue
		}
		most := 0
		for _, l := range v.s.Topology.Logs {
			if kind, name, _ := strings.Cut(f.Match.Where, ":"); literal(f.Match.Where) && kind == "log" && name != l.Name {
				continue
			}
			most = max(most, l.Partitions+added[l.Name])
		}
		if n := int64(most) + int64(firings)*max(f.Param, 1); most > 0 && n > MaxPartitions {
			v.errf(f.FieldPos("point"), "fault %q could grow a log to %d partitions; partitions are capped at %d", f.Name, n, MaxPartitions)
		}
	}
}

func (v *val) expectRefs() {
	ledger := newNamespace("queue, group, subscriber or consumer", "queues, groups, subscribers and consumers")
	for _, k := range []string{"queue", "group", "subscriber", "consumer"} {
		for _, n := range v.ns[k].list {
			if !ledger.has(n) {
				ledger.pos[n] = v.ns[k].pos[n]
				ledger.list = append(ledger.list, n)
			}
		}
	}
	sort.Strings(ledger.list)
	for i := range v.s.Expect {
		e := &v.s.Expect[i]
		if e.Consumer != "" {
			v.ref(e.FieldPos("consumer"), fmt.Sprintf("check %s names", e.Check), ledger, e.Consumer)
		}
		m := e.Metric
		if m.Kind == "" || m.Kind == "ledger" {
			continue
		}
		p := e.FieldPos("metric")
		if m.Kind == "consumer" {
			v.ref(p, fmt.Sprintf("metric %s names", m), ledger, m.Name)
			continue
		}
		kind := m.Kind
		if kind == "outbox" {
			kind = "service"
		}
		if !v.ref(p, fmt.Sprintf("metric %s names", m), v.ns[kind], m.Name) {
			continue
		}
		switch {
		case m.Kind == "queue" && m.Field == "dlq":
			for _, q := range v.s.Topology.Queues {
				if q.Name == m.Name && q.DeadLetter == nil {
					v.errf(p, "metric %s: queue %q has no dead_letter", m, m.Name)
				}
			}
		case m.Kind == "outbox":
			if sv := v.service(m.Name); sv != nil && sv.Writer != outbox.Outbox {
				v.errf(p, "metric %s: service %q has writer %s and no outbox", m, m.Name, sv.Writer)
			}
		}
	}
}

// listNames joins names for a message, at most 20 of them.
func listNames(names []string) string {
	const max = 20
	if len(names) <= max {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:max], ", ") + fmt.Sprintf(" and %d more", len(names)-max)
}

// Warnings returns what in s is valid but likely a mistake, in position
// order. It costs time linear in the topics, subscribers and emits of s.
//
// A loop of pub/sub topics is one: a subscriber that emits into a topic
// it receives from, directly or through other subscribers, passes every
// message that enters the loop on forever, and in growing numbers when
// the loop emits more than one message per message. A loop is bounded
// when one of its topics has a cascade_limit or one of its subscribers a
// source_check; a supervisor subscriber's emits reach no subscriber, so
// they close no loop.
//
// So is a shape whose derived work goes past the run's budget (see
// workWarnings): a fan-out retried at once into a queue that may be down,
// several CDC relays each publishing every row, messages that always fail
// on a queue without a dead-letter queue for a long run, more component
// steps than MaxSteps, a queue redriven a hundred times or more.
func (s *Scenario) Warnings() []Warning {
	var ws []Warning
	for _, l := range s.topicLoops() {
		ws = append(ws, Warning{File: s.File, Line: l.at.Line, Col: l.at.Col, Msg: l.msg})
	}
	ws = append(ws, s.workWarnings()...)
	sort.SliceStable(ws, func(i, j int) bool {
		a, b := ws[i], ws[j]
		return a.Line < b.Line || a.Line == b.Line && a.Col < b.Col
	})
	return ws
}

type topicLoop struct {
	at  Pos
	msg string
}

// emitEdge is an emit of a subscriber of topic from into topic to.
type emitEdge struct {
	from, to int
	sub      *Subscriber
	emit     *Emit
}

// topicLoops finds the unbounded loops of topics: the strongly connected
// components (Tarjan's algorithm) of the graph whose nodes are the topics
// without a cascade_limit and whose edges are the emits of subscribers
// that are neither supervisors nor source-checked. Each component with an
// edge inside is one loop, reported once, at its first emit in the file.
func (s *Scenario) topicLoops() []topicLoop {
	ts := s.Topology.Topics
	index := map[string]int{}
	for i := range ts {
		index[ts[i].Name] = i
	}
	out := make([][]emitEdge, len(ts))
	for i := range ts {
		if ts[i].CascadeLimit > 0 {
			continue
		}
		for j := range ts[i].Subscribers {
			sub := &ts[i].Subscribers[j]
			if sub.Supervisor || sub.SourceCheck {
				continue
			}
			for k := range sub.Emits {
				e := &sub.Emits[k]
				if to, ok := index[e.Topic]; ok && ts[to].CascadeLimit == 0 {
					out[i] = append(out[i], emitEdge{i, to, sub, e})
				}
			}
		}
	}
	// Tarjan's algorithm; the recursion is at most len(ts) deep, and
	// there are at most MaxEntities topics.
	comp := make([]int, len(ts))
	low := make([]int, len(ts))
	order := make([]int, len(ts))
	var stack []int
	onStack := make([]bool, len(ts))
	next, ncomp := 1, 0
	var visit func(v int)
	visit = func(v int) {
		order[v], low[v] = next, next
		next++
		stack = append(stack, v)
		onStack[v] = true
		for _, e := range out[v] {
			switch {
			case order[e.to] == 0:
				visit(e.to)
				low[v] = min(low[v], low[e.to])
			case onStack[e.to]:
				low[v] = min(low[v], order[e.to])
			}
		}
		if low[v] == order[v] {
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				comp[w] = ncomp
				if w == v {
					break
				}
			}
			ncomp++
		}
	}
	for v := range ts {
		if order[v] == 0 {
			visit(v)
		}
	}
	// The edges inside each component, in file order.
	inside := make([][]emitEdge, ncomp)
	for v := range ts {
		for _, e := range out[v] {
			if comp[e.from] == comp[e.to] {
				inside[comp[v]] = append(inside[comp[v]], e)
			}
		}
	}
	var loops []topicLoop
	for c, edges := range inside {
		if len(edges) == 0 {
			continue
		}
		first := edges[0]
		for _, e := range edges[1:] {
			if p, q := e.emit.FieldPos("topic"), first.emit.FieldPos("topic"); p.Line < q.Line || p.Line == q.Line && p.Col < q.Col {
				first = e
			}
		}
		topics, emitted := 0, 0
		for v := range ts {
			if comp[v] == c {
				topics++
			}
		}
		for _, e := range edges {
			emitted += e.emit.Count
		}
		grows := "each message that enters it is passed on forever"
		if emitted > topics {
			grows = "each message that enters it is passed on forever, in more copies every round"
		}
		path, hops := loopPath(ts, comp, out, first)
		more := ""
		if n := len(edges) - hops; n == 1 {
			more = ", and 1 more emit inside it"
		} else if n > 1 {
			more = fmt.Sprintf(", and %d more emits inside it", n)
		}
		loops = append(loops, topicLoop{at: first.emit.FieldPos("topic"), msg: fmt.Sprintf(
			"subscriber %q emits into a loop that nothing stops: %s%s, so %s; set cascade_limit on a topic of the loop, or source_check on one of its subscribers",
			first.sub.Name, path, more, grows)})
	}
	return loops
}

// loopPath describes the shortest way round the loop that starts with
// edge first, e.g. `topic "a" -> x -> topic "b" -> y -> topic "a"`, and
// returns the number of emits on it.
func loopPath(ts []Topic, comp []int, out [][]emitEdge, first emitEdge) (string, int) {
	// Breadth-first from first.to back to first.from, inside the loop.
	via := map[int]emitEdge{}
	seen := map[int]bool{first.to: true}
	queue := []int{first.to}
	for len(queue) > 0 && !seen[first.from] {
		v := queue[0]
		queue = queue[1:]
		for _, e := range out[v] {
			if comp[e.to] == comp[first.from] && !seen[e.to] {
				seen[e.to], via[e.to] = true, e
				queue = append(queue, e.to)
			}
		}
	}
	hops := []emitEdge{first}
	var back []emitEdge
	for v := first.from; v != first.to; {
		e, ok := via[v]
		if !ok {
			break // cannot happen inside a strongly connected component
		}
		back = append(back, e)
		v = e.from
	}
	for i := len(back) - 1; i >= 0; i-- {
		hops = append(hops, back[i])
	}
	var b strings.Builder
	b.WriteString("topic " + strconv.Quote(ts[first.from].Name))
	for _, e := range hops {
		b.WriteString(" -> " + e.sub.Name + " -> topic " + strconv.Quote(ts[e.to].Name))
	}
	return b.String(), len(hops)
}
