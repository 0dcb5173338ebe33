package watermillsim_test

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/brokerlab/brokerlab/contrib/watermillsim"
	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/live"
	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/sim"
)

const wait = 10 * time.Second

func subscribe(t *testing.T, b *watermillsim.Broker, cfg watermillsim.SubscriberConfig, ctx context.Context, topic string) (*watermillsim.Subscriber, <-chan *message.Message) {
	t.Helper()
	s, err := b.Subscriber(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	ch, err := s.Subscribe(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	return s, ch
}

func next(t *testing.T, ch <-chan *message.Message) *message.Message {
	t.Helper()
	select {
	case m, ok := <-ch:
		if !ok {
			t.Fatal("channel closed")
		}
		return m
	case <-time.After(wait):
		t.Fatal("no message")
	}
	return nil
}

func publish(t *testing.T, b *watermillsim.Broker, topic string, uuids ...string) {
	t.Helper()
	for _, id := range uuids {
		if err := b.Publisher().Publish(topic, message.NewMessage(id, []byte(id))); err != nil {
			t.Fatal(err)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	bad := []watermillsim.Config{
		{Kind: 9}, {TickEvery: -1}, {VisibilityTimeout: -1}, {NackDelay: -1}, {MaxReceiveCount: -1},
		{Buffer: -1}, {Partitions: -1}, {Faults: []faults.Rule{{Name: "x", Point: "no.such.point"}}},
		{Commit: 9}, {SessionTimeout: -1},
		{Kind: watermillsim.KindLog, Faults: []faults.Rule{{Name: "pause", Point: faults.MemberSessionTimeout}}},
	}
	for _, c := range bad {
		if _, err := watermillsim.New(c); !errors.Is(err, watermillsim.ErrInvalidConfig) {
			t.Errorf("%+v: %v", c, err)
		}
	}
}

// A message left unacked past the visibility timeout goes to another
// competing consumer; the late ack is refused as stale and traced.
func TestQueueVisibilityTimeoutRedelivers(t *testing.T) {
	b := newBroker(t, watermillsim.Config{Kind: watermillsim.KindQueue, VisibilityTimeout: 5})
	publish(t, b, "jobs", "j1")
	_, slow := subscribe(t, b, watermillsim.SubscriberConfig{Name: "slow"}, context.Background(), "jobs")
	first := next(t, slow)
	_, fast := subscribe(t, b, watermillsim.SubscriberConfig{Name: "fast"}, context.Background(), "jobs")
	again := next(t, fast)
	if again.UUID != "j1" {
		t.Fatalf("got %s", again.UUID)
	}
	again.Ack()
	first.Ack() // stale now
	deadline := time.Now().Add(wait)
	for {
		m, _ := b.QueueMetrics("jobs")
		if m.Acks == 1 && m.Rejected == 1 {
			if m.VisibilityExpired < 1 || m.Redeliveries < 1 {
				t.Fatalf("metrics %+v", m)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("metrics %+v", m)
		}
		time.Sleep(time.Millisecond)
	}
	if err := b.Check(sim.NoLoss(), sim.AtLeastOnce("jobs")); err != nil {
		t.Fatal(err)
	}
	// Both handlers acked, so both applied the job: the late one is a
	// duplicate effect, whatever the queue made of its Ack.
	if err := b.Check(sim.ExactlyOnce("jobs")); err == nil || !strings.Contains(err.Error(), "effect applied 2 times") {
		t.Fatalf("ExactlyOnce after two acked deliveries: %v", err)
	}
}

// Nack redelivers; past MaxReceiveCount the message goes to the
// dead-letter queue, a topic of its own.
func TestQueueNackAndDeadLetter(t *testing.T) {
	b := newBroker(t, watermillsim.Config{Kind: watermillsim.KindQueue, MaxReceiveCount: 2})
	publish(t, b, "mail", "poison")
	_, ch := subscribe(t, b, watermillsim.SubscriberConfig{}, context.Background(), "mail")
	next(t, ch).Nack()
	next(t, ch).Nack()
	_, dlq := subscribe(t, b, watermillsim.SubscriberConfig{}, context.Background(), "mail"+watermillsim.DeadLetterSuffix)
	if m := next(t, dlq); m.UUID != "poison" || string(m.Payload) != "poison" {
		t.Fatalf("dead letter %s %q", m.UUID, m.Payload)
	} else {
		m.Ack()
	}
	m, _ := b.QueueMetrics("mail")
	if m.DeadLettered != 1 || m.Nacks != 2 {
		t.Fatalf("metrics %+v", m)
	}
}

// broker.unavailable makes Publish fail with the model's error; the message
// was not accepted.
func TestQueueUnavailable(t *testing.T) {
	b := newBroker(t, watermillsim.Config{Kind: watermillsim.KindQueue, Faults: []faults.Rule{{Name: "down", Point: faults.BrokerUnavailable, Count: 1}}})
	err := b.Publisher().Publish("orders", message.NewMessage("o1", nil))
	if !errors.Is(err, queue.ErrUnavailable) {
		t.Fatalf("publish while down: %v", err)
	}
	publish(t, b, "orders", "o1") // the retry goes through
	_, ch := subscribe(t, b, watermillsim.SubscriberConfig{}, context.Background(), "orders")
	next(t, ch).Ack()
}

// broker.delay holds a message for Param ticks before it is visible.
func TestQueueDelay(t *testing.T) {
	b := newBroker(t, watermillsim.Config{Kind: watermillsim.KindQueue, Faults: []faults.Rule{{Name: "slow", Point: faults.BrokerDelay, Param: 20}}})
	rec := &sim.Recorder{}
	if err := b.Do(func(w *sim.World) { w.Trace().Attach(rec) }); err != nil {
		t.Fatal(err)
	}
	publish(t, b, "d", "late")
	_, ch := subscribe(t, b, watermillsim.SubscriberConfig{}, context.Background(), "d")
	m := next(t, ch)
	sm, err := b.Sim(m)
	if err != nil {
		t.Fatal(err)
	}
	// The ticks come from the trace: b.Now() moves on in real time
	// between Publish returning and the call that reads it.
	sent, delivered := sm.Created, sim.Tick(-1)
	if err := b.Do(func(*sim.World) {
		for _, e := range rec.Events() {
			if e.Msg == sm.ID && e.Kind == sim.KindReceived && delivered < 0 {
				delivered = e.Tick
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	if delivered < 0 {
		t.Fatalf("no received event for %s in the trace", sm.ID)
	}
	if delivered < sent+20 {
		t.Fatalf("delivered at t=%d, sent at t=%d, delay 20", delivered, sent)
	}
	m.Ack()
}

// Metadata, payload and UUID survive the trip; the key comes from
// KeyMetadata and the sim ID is stable per UUID.
func TestMessageMapping(t *testing.T) {
	b := newBroker(t, watermillsim.Config{Kind: watermillsim.KindQueue, KeyMetadata: "customer"})
	in := message.NewMessage("u-1", []byte("body"))
	in.Metadata.Set("customer", "c7")
	in.Metadata.Set("correlation_id", "corr")
	if err := b.Publisher().Publish("q", in, in); err != nil {
		t.Fatal(err)
	}
	_, ch := subscribe(t, b, watermillsim.SubscriberConfig{}, context.Background(), "q")
	a := next(t, ch)
	sa, err := b.Sim(a)
	if err != nil {
		t.Fatal(err)
	}
	a.Ack()
	c := next(t, ch)
	sc, _ := b.Sim(c)
	c.Ack()
	if a.UUID != "u-1" || string(a.Payload) != "body" || a.Metadata.Get("customer") != "c7" {
		t.Fatalf("message %s %q %v", a.UUID, a.Payload, a.Metadata)
	}
	if sa.ID != sc.ID || sa.Key != "c7" || sa.Headers.CorrelationID != "corr" || sa.Headers.Type != "q" {
		t.Fatalf("sim messages %+v %+v", sa, sc)
	}
	if _, err := b.Sim(message.NewMessage("x", nil)); !errors.Is(err, watermillsim.ErrNotDelivered) {
		t.Fatalf("Sim of a foreign message: %v", err)
	}
	foreign := message.NewMessage("x", nil)
	if err := b.Applied(foreign); !errors.Is(err, watermillsim.ErrNotDelivered) {
		t.Fatalf("Applied of a foreign message: %v", err)
	}
	if err := b.Skip(foreign, ""); !errors.Is(err, watermillsim.ErrNotDelivered) {
		t.Fatalf("Skip of a foreign message: %v", err)
	}
	if err := b.Handle(foreign, sim.Effect("")); !errors.Is(err, watermillsim.ErrNotDelivered) {
		t.Fatalf("Handle of a foreign message: %v", err)
	}
}

// An Ack records one effect unless the handler recorded something on the
// delivery first: a Skip (a duplicate it recognised), effects of its own
// (Applied), or whatever a brokerlab handler run with Handle recorded.
func TestAckRecordsTheEffectUnlessTheHandlerDid(t *testing.T) {
	b := newBroker(t, watermillsim.Config{Kind: watermillsim.KindQueue})
	publish(t, b, "q", "plain", "dup", "twice", "handled")
	s, ch := subscribe(t, b, watermillsim.SubscriberConfig{}, context.Background(), "q")
	for range 4 {
		m := next(t, ch)
		switch m.UUID {
		case "dup":
			if err := b.Skip(m, "seen before"); err != nil {
				t.Fatal(err)
			}
		case "twice":
			_ = b.Applied(m)
			_ = b.Applied(m)
		case "handled":
			if err := b.Handle(m, sim.HandlerFunc(func(d *sim.Delivery) error {
				if d.Consumer != "q" || d.Where != "queue:q" || d.Attempt != 1 {
					t.Errorf("delivery %+v", d)
				}
				d.Apply("booked")
				return nil
			})); err != nil {
				t.Fatal(err)
			}
		}
		m.Ack()
	}
	_ = s.Close() // the Acks made before Close are settled
	want := map[string]struct {
		v       sim.Verdict
		effects int
	}{"plain": {sim.VerdictApplied, 1}, "dup": {sim.VerdictAbsorbed, 0}, "twice": {sim.VerdictApplied, 2}, "handled": {sim.VerdictApplied, 1}}
	_ = b.Do(func(w *sim.World) {
		outs := w.Ledger().Outcomes("q")
		if len(outs) != 4 {
			t.Fatalf("outcomes %+v", outs)
		}
		for i, o := range outs {
			id := []string{"plain", "dup", "twice", "handled"}[i]
			if x := want[id]; o.Verdict != x.v || o.Effects != x.effects || !o.Acked {
				t.Errorf("%s: %s with %d effects (acked %v), want %s with %d", id, o.Verdict, o.Effects, o.Acked, x.v, x.effects)
			}
		}
	})
}

// Subscriber goroutines stop on context cancel and on Close; later calls fail.
func TestStopOnCancelAndClose(t *testing.T) {
	for _, k := range []watermillsim.Kind{watermillsim.KindQueue, watermillsim.KindPubSub, watermillsim.KindLog} {
		t.Run(k.String(), func(t *testing.T) {
			b := newBroker(t, watermillsim.Config{Kind: k})
			ctx, cancel := context.WithCancel(context.Background())
			s, ch := subscribe(t, b, watermillsim.SubscriberConfig{}, ctx, "t")
			cancel()
			if _, ok := <-ch; ok {
				t.Fatal("message after cancel")
			}
			ch2, err := s.Subscribe(context.Background(), "t")
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if _, ok := <-ch2; ok {
				t.Fatal("message after close")
			}
			if _, err := s.Subscribe(context.Background(), "t"); !errors.Is(err, watermillsim.ErrClosed) {
				t.Fatalf("Subscribe after Close: %v", err)
			}
			p := b.Publisher()
			_ = p.Close()
			if err := p.Publish("t", message.NewMessage("m", nil)); !errors.Is(err, watermillsim.ErrClosed) {
				t.Fatalf("Publish after Close: %v", err)
			}
			_ = b.Close()
			if err := b.Do(func(*sim.World) {}); !errors.Is(err, watermillsim.ErrClosed) {
				t.Fatalf("Do after Close: %v", err)
			}
		})
	}
}

// Pub/sub fans out to every connected subscriber and keeps nothing for
// one that connects later: the ledger never routes it the earlier publish,
// and the copy it holds unacked when it closes is lost with cause
// "disconnect".
func TestPubSubFanOutIsEphemeral(t *testing.T) {
	b := newBroker(t, watermillsim.Config{Kind: watermillsim.KindPubSub})
	a, _ := b.Subscriber(watermillsim.SubscriberConfig{Name: "a"})
	c, _ := b.Subscriber(watermillsim.SubscriberConfig{Name: "c"})
	defer a.Close()
	defer c.Close()
	for _, s := range []*watermillsim.Subscriber{a, c} {
		if err := s.SubscribeInitialize("news"); err != nil {
			t.Fatal(err)
		}
	}
	publish(t, b, "news", "n1")
	late, _ := b.Subscriber(watermillsim.SubscriberConfig{Name: "late"})
	lateCh, _ := late.Subscribe(context.Background(), "news")
	var chans []<-chan *message.Message
	for _, s := range []*watermillsim.Subscriber{a, c} {
		ch, err := s.Subscribe(context.Background(), "news")
		if err != nil {
			t.Fatal(err)
		}
		chans = append(chans, ch)
	}
	publish(t, b, "news", "n2")
	for _, ch := range chans {
		for _, want := range []string{"n1", "n2"} {
			m := next(t, ch)
			if m.UUID != want {
				t.Fatalf("got %s, want %s", m.UUID, want)
			}
			m.Ack()
		}
	}
	if m := next(t, lateCh); m.UUID != "n2" {
		t.Fatalf("late subscriber got %s, want only n2", m.UUID)
	}
	_ = a.Close()
	_ = c.Close()
	_ = late.Close() // n2 was never acked
	if err := b.Check(sim.ExactlyOnce(a.Consumer("news")), sim.ExactlyOnce(c.Consumer("news"))); err != nil {
		t.Fatal(err)
	}
	_ = b.Do(func(w *sim.World) {
		outs := w.Ledger().Outcomes(late.Consumer("news"))
		if len(outs) != 1 || outs[0].Verdict != sim.VerdictLost || outs[0].Cause != sim.CauseDisconnect || outs[0].Deliveries != 1 {
			t.Fatalf("late subscriber's outcomes %+v, want n2 alone, delivered once and lost at disconnect", outs)
		}
	})
}

// Log consumer groups: each group reads every record; within a group the
// committed offset carries over to the next subscriber, whose member
// resumes where the group committed.
func TestLogConsumerGroups(t *testing.T) {
	b := newBroker(t, watermillsim.Config{Kind: watermillsim.KindLog})
	publish(t, b, "events", "e1", "e2", "e3")
	s1, ch1 := subscribe(t, b, watermillsim.SubscriberConfig{Group: "billing"}, context.Background(), "events")
	next(t, ch1).Ack()
	m := next(t, ch1) // e2, never acked
	if m.UUID != "e2" {
		t.Fatalf("got %s", m.UUID)
	}
	_ = s1.Close()
	s2, ch2 := subscribe(t, b, watermillsim.SubscriberConfig{Group: "billing"}, context.Background(), "events")
	for _, want := range []string{"e2", "e3"} {
		if m := next(t, ch2); m.UUID != want {
			t.Fatalf("got %s, want %s", m.UUID, want)
		} else {
			m.Ack()
		}
	}
	s3, ch3 := subscribe(t, b, watermillsim.SubscriberConfig{Group: "audit"}, context.Background(), "events")
	for _, want := range []string{"e1", "e2", "e3"} {
		if m := next(t, ch3); m.UUID != want {
			t.Fatalf("audit got %s, want %s", m.UUID, want)
		} else {
			m.Ack()
		}
	}
	_ = s2.Close()
	_ = s3.Close()
	for _, g := range []string{"billing", "audit"} {
		gm, ok := b.LogMetrics("events", g)
		if !ok || gm.Lag != 0 || len(gm.Partitions) != 1 || gm.Partitions[0].Committed != 3 || gm.Members != 0 {
			t.Errorf("group %s: %+v", g, gm)
		}
	}
	// e2 came twice to billing (its first subscription ended before the
	// Ack) and was applied once.
	if err := b.Check(sim.NoLoss(), sim.ExactlyOnce("billing"), sim.ExactlyOnce("audit"), sim.MaxDuplicates("billing", 1)); err != nil {
		t.Fatal(err)
	}
}

// Subscriptions of one group are members of the group: they share its
// partitions (a join rebalances), each reads only its own, and together
// they read every record once.
func TestLogSubscriptionsShareTheGroupsPartitions(t *testing.T) {
	b := newBroker(t, watermillsim.Config{Kind: watermillsim.KindLog, Partitions: 4, KeyMetadata: "k"})
	s, err := b.Subscriber(watermillsim.SubscriberConfig{Group: "g"})
	if err != nil {
		t.Fatal(err)
	}
	ch1, _ := s.Subscribe(context.Background(), "t")
	ch2, _ := s.Subscribe(context.Background(), "t")
	gm, _ := b.LogMetrics("t", "g")
	if gm.Members != 2 || gm.Rebalances < 2 {
		t.Fatalf("group %+v, want two members after two rebalances", gm)
	}
	const n = 40
	for i := range n {
		in := message.NewMessage("m"+strconv.Itoa(i), nil)
		in.Metadata.Set("k", "key-"+strconv.Itoa(i))
		if err := b.Publisher().Publish("t", in); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string]int{}
	parts := map[int]int{} // partition -> which channel read it
	for len(got) < n {
		var m *message.Message
		which := 0
		select {
		case m = <-ch1:
			which = 1
		case m = <-ch2:
			which = 2
		case <-time.After(wait):
			t.Fatalf("%d of %d records read", len(got), n)
		}
		sm, _ := b.Sim(m)
		p := eventlog.PartitionFor(sm.Key, 4)
		if w, ok := parts[p]; ok && w != which {
			t.Fatalf("partition %d read by both subscriptions", p)
		}
		parts[p] = which
		got[m.UUID]++
		m.Ack()
	}
	_ = s.Close()
	if len(parts) != 4 {
		t.Fatalf("partitions read: %v", parts)
	}
	if err := b.Check(sim.NoLoss(), sim.ExactlyOnce("g")); err != nil {
		t.Fatal(err)
	}
}

// A Nack marks the record failed in the group: with the default commit
// mode the member reads it again; with eventlog.CommitBefore the poll has
// committed it already, so it is lost, booked with its cause.
func TestLogNackPerCommitMode(t *testing.T) {
	for _, c := range []struct {
		mode eventlog.CommitMode
		want []string
	}{{eventlog.CommitAfter, []string{"r1", "r1", "r2"}}, {eventlog.CommitBefore, []string{"r1", "r2"}}} {
		t.Run(c.mode.String(), func(t *testing.T) {
			b := newBroker(t, watermillsim.Config{Kind: watermillsim.KindLog, Commit: c.mode})
			publish(t, b, "x", "r1", "r2")
			s, ch := subscribe(t, b, watermillsim.SubscriberConfig{Group: "g"}, context.Background(), "x")
			var got []string
			for i := range c.want {
				m := next(t, ch)
				got = append(got, m.UUID)
				if i == 0 {
					m.Nack()
				} else {
					m.Ack()
				}
			}
			_ = s.Close()
			if strings.Join(got, " ") != strings.Join(c.want, " ") {
				t.Fatalf("read %v, want %v", got, c.want)
			}
			err := b.Check(sim.NoLoss())
			if c.mode == eventlog.CommitAfter && err != nil {
				t.Fatal(err)
			}
			if c.mode == eventlog.CommitBefore && (err == nil || !strings.Contains(err.Error(), string(sim.CauseCommitBeforeProcess))) {
				t.Fatalf("NoLoss after a nack with commit before: %v", err)
			}
		})
	}
}

// With a session timeout, a handler that holds a record longer loses the
// partition, as with Kafka's max.poll.interval: its Ack commits nothing
// and the record comes again.
func TestLogSessionTimeoutRedelivers(t *testing.T) {
	b := newBroker(t, watermillsim.Config{Kind: watermillsim.KindLog, SessionTimeout: 3})
	publish(t, b, "x", "r1")
	s, ch := subscribe(t, b, watermillsim.SubscriberConfig{Group: "g"}, context.Background(), "x")
	m := next(t, ch)
	if err := b.Advance(5); err != nil { // longer than the session timeout
		t.Fatal(err)
	}
	m.Ack() // too late
	again := next(t, ch)
	if again.UUID != "r1" {
		t.Fatalf("got %s", again.UUID)
	}
	again.Ack()
	_ = s.Close()
	if err := b.Check(sim.ExactlyOnce("g")); err == nil || !strings.Contains(err.Error(), "effect applied 2 times") {
		t.Fatalf("ExactlyOnce after a late ack: %v", err)
	}
}

// On the log, broker.duplicate loses a commit: the group resumes at the
// acked record, which comes again. A publish refused while the broker is
// down is not in the ledger until the retry succeeds.
func TestLogDuplicateAndUnavailable(t *testing.T) {
	b := newBroker(t, watermillsim.Config{Kind: watermillsim.KindLog, Faults: []faults.Rule{
		{Name: "dup", Point: faults.BrokerDuplicate, Count: 1},
		{Name: "down", Point: faults.BrokerUnavailable, Count: 1, Match: faults.Match{Where: "log:x"}},
	}})
	err := b.Publisher().Publish("x", message.NewMessage("r1", nil))
	if !errors.Is(err, eventlog.ErrUnavailable) || !errors.Is(err, sim.ErrUnavailable) {
		t.Fatalf("publish while down: %v", err)
	}
	publish(t, b, "x", "r1")
	s, ch := subscribe(t, b, watermillsim.SubscriberConfig{Group: "g"}, context.Background(), "x")
	a := next(t, ch)
	a.Ack()
	c := next(t, ch)
	c.Ack()
	if a.UUID != "r1" || c.UUID != "r1" {
		t.Fatalf("got %s then %s", a.UUID, c.UUID)
	}
	_ = s.Close()
	if err := b.Check(sim.NoLoss(), sim.AtLeastOnce("g")); err != nil {
		t.Fatal(err)
	}
	if err := b.Check(sim.ExactlyOnce("g")); err == nil {
		t.Fatal("ExactlyOnce missed the redelivery after the lost commit")
	}
	if gm, _ := b.LogMetrics("x", "g"); gm.Partitions[0].Committed != 1 {
		t.Fatalf("committed %+v", gm.Partitions[0])
	}
}

// On the log, broker.delay holds the partition for Param ticks before the
// record is delivered, once per record.
func TestLogDelay(t *testing.T) {
	b := newBroker(t, watermillsim.Config{Kind: watermillsim.KindLog, Faults: []faults.Rule{{Name: "slow", Point: faults.BrokerDelay, Param: 20, Count: 1}}})
	publish(t, b, "x", "r1", "r2")
	sent := b.Now()
	_, ch := subscribe(t, b, watermillsim.SubscriberConfig{}, context.Background(), "x")
	m := next(t, ch)
	if got := b.Now(); m.UUID != "r1" || got < sent+20 {
		t.Fatalf("%s delivered at t=%d, sent at t=%d, delay 20", m.UUID, got, sent)
	}
	m.Ack()
	next(t, ch).Ack()
}

// On pub/sub, broker.duplicate places a second copy in the connection;
// a handler that acks both applies the publish twice.
func TestPubSubDuplicate(t *testing.T) {
	b := newBroker(t, watermillsim.Config{Kind: watermillsim.KindPubSub, Faults: []faults.Rule{{Name: "dup", Point: faults.BrokerDuplicate, Count: 1}}})
	s, _ := b.Subscriber(watermillsim.SubscriberConfig{Name: "s"})
	defer s.Close()
	ch, err := s.Subscribe(context.Background(), "news")
	if err != nil {
		t.Fatal(err)
	}
	publish(t, b, "news", "n1")
	for range 2 {
		m := next(t, ch)
		if m.UUID != "n1" {
			t.Fatalf("got %s", m.UUID)
		}
		m.Ack()
	}
	_ = s.Close()
	if err := b.Check(sim.ExactlyOnce(s.Consumer("news"))); err == nil {
		t.Fatal("ExactlyOnce missed the duplicate")
	}
	if err := b.Check(sim.AtLeastOnce(s.Consumer("news"))); err != nil {
		t.Fatal(err)
	}
}

// A Nack on pub/sub redelivers the copy on the same connection, traced as
// a redelivery; the copy is applied once.
func TestPubSubNackRedelivers(t *testing.T) {
	b := newBroker(t, watermillsim.Config{Kind: watermillsim.KindPubSub})
	s, _ := b.Subscriber(watermillsim.SubscriberConfig{Name: "s"})
	ch, _ := s.Subscribe(context.Background(), "news")
	publish(t, b, "news", "n1")
	next(t, ch).Nack()
	next(t, ch).Ack()
	_ = s.Close()
	if err := b.Check(sim.ExactlyOnce(s.Consumer("news")), sim.MaxDuplicates(s.Consumer("news"), 1)); err != nil {
		t.Fatal(err)
	}
	_ = b.Do(func(w *sim.World) {
		if o := w.Ledger().Outcomes(s.Consumer("news")); len(o) != 1 || o[0].Deliveries != 2 {
			t.Fatalf("outcomes %+v, want one origin delivered twice", o)
		}
	})
}

// The handler fault points apply to every kind: a firing fails the
// delivery before it reaches the Watermill handler, as the model fails a
// handler of its own. The queue and the log deliver the message again;
// ephemeral pub/sub has no retry and loses the copy.
func TestHandlerFaultsFailTheDelivery(t *testing.T) {
	for _, k := range []watermillsim.Kind{watermillsim.KindQueue, watermillsim.KindLog, watermillsim.KindPubSub} {
		t.Run(k.String(), func(t *testing.T) {
			b := newBroker(t, watermillsim.Config{Kind: k, Faults: []faults.Rule{{Name: "flaky", Point: faults.HandlerTransient, Count: 1}}})
			s, _ := b.Subscriber(watermillsim.SubscriberConfig{Name: "s", Group: "g"})
			if err := s.SubscribeInitialize("t"); err != nil {
				t.Fatal(err)
			}
			ch, _ := s.Subscribe(context.Background(), "t")
			publish(t, b, "t", "m1", "m2")
			var got []string
			want := []string{"m1", "m2"}
			if k == watermillsim.KindPubSub {
				want = want[1:]
			}
			for range want {
				m := next(t, ch)
				got = append(got, m.UUID)
				m.Ack()
			}
			_ = s.Close()
			if k == watermillsim.KindQueue {
				sort.Strings(got) // a standard queue may hand m2 out before the nacked m1
			}
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Fatalf("delivered %v, want %v", got, want)
			}
			consumer := s.Consumer("t")
			_ = b.Do(func(w *sim.World) {
				outs := w.Ledger().Outcomes(consumer)
				if len(outs) != 2 {
					t.Fatalf("outcomes %+v", outs)
				}
				first := outs[0]
				switch {
				case k == watermillsim.KindPubSub && (first.Verdict != sim.VerdictLost || first.Cause != sim.CauseHandlerFailed):
					t.Errorf("m1: %+v, want lost (handler failed)", first)
				case k != watermillsim.KindPubSub && (first.Verdict != sim.VerdictApplied || first.Deliveries != 2 || first.Effects != 1):
					t.Errorf("m1: %+v, want applied once after two deliveries", first)
				}
			})
		})
	}
}

// The ledger folded from the JSON Lines trace the Broker wrote equals the
// live one, for every kind: the adapter's own events (failed deliveries,
// pub/sub redeliveries and disconnect losses) are complete facts too.
func TestTraceRefoldsToTheSameLedger(t *testing.T) {
	for _, k := range []watermillsim.Kind{watermillsim.KindQueue, watermillsim.KindPubSub, watermillsim.KindLog} {
		t.Run(k.String(), func(t *testing.T) {
			var buf bytes.Buffer
			b, err := watermillsim.New(watermillsim.Config{Kind: k, Seed: 3, MaxReceiveCount: 3, Trace: sim.NewJSONWriter(&buf), Faults: []faults.Rule{
				{Name: "dup", Point: faults.BrokerDuplicate, Probability: 0.3},
				{Name: "flaky", Point: faults.HandlerTransient, Probability: 0.2},
			}})
			if err != nil {
				t.Fatal(err)
			}
			s, _ := b.Subscriber(watermillsim.SubscriberConfig{Name: "s", Group: "g"})
			_ = s.SubscribeInitialize("t")
			ch, _ := s.Subscribe(context.Background(), "t")
			for i := range 20 {
				publish(t, b, "t", "m"+strconv.Itoa(i))
			}
			read := 0
		loop:
			for read < 25 {
				select {
				case m := <-ch:
					if read%4 == 3 {
						m.Nack()
					} else {
						m.Ack()
					}
					read++
				case <-time.After(300 * time.Millisecond):
					break loop // pub/sub lost the rest
				}
			}
			_ = s.Close()
			if read < 10 {
				t.Fatalf("only %d deliveries", read)
			}
			// The trace sink runs on the owner goroutine: read it there.
			var live, got string
			var rerr error
			_ = b.Do(func(w *sim.World) {
				live = w.Ledger().Dump()
				_ = w.Trace().Close()
				l2 := sim.NewLedger()
				rerr = sim.ReadJSONL(bytes.NewReader(buf.Bytes()), l2)
				got = l2.Dump()
			})
			_ = b.Close()
			if rerr != nil {
				t.Fatal(rerr)
			}
			if got != live {
				t.Fatalf("refolded ledger differs:\n--- live\n%s\n--- refolded\n%s", live, got)
			}
		})
	}
}

// No goroutine outlives its Broker and Subscribers: subscriptions stop on
// context cancel and on Close, the driver on Broker.Close.
func TestNoGoroutineLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	var closers []func() error
	for _, k := range []watermillsim.Kind{watermillsim.KindQueue, watermillsim.KindPubSub, watermillsim.KindLog} {
		b, err := watermillsim.New(watermillsim.Config{Kind: k})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		for i := range 4 {
			s, _ := b.Subscriber(watermillsim.SubscriberConfig{})
			c := context.Background()
			if i%2 == 0 {
				c = ctx
			}
			if _, err := s.Subscribe(c, "t"); err != nil {
				t.Fatal(err)
			}
			closers = append(closers, s.Close)
		}
		publish(t, b, "t", "a", "b", "c")
		cancel()
		closers = append(closers, b.Close)
	}
	for _, c := range closers {
		if err := c(); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(wait)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines, %d before", runtime.NumGoroutine(), before)
		}
		time.Sleep(time.Millisecond)
	}
}

// A handler run by Handle that calls back into the Broker gets
// live.ErrReentrant at once instead of deadlocking the owner goroutine.
func TestHandleCallingBackIsReentrant(t *testing.T) {
	b := newBroker(t, watermillsim.Config{Kind: watermillsim.KindQueue})
	publish(t, b, "q", "m1")
	s, ch := subscribe(t, b, watermillsim.SubscriberConfig{}, context.Background(), "q")
	m := next(t, ch)
	var inner error
	if err := b.Handle(m, sim.HandlerFunc(func(d *sim.Delivery) error {
		inner = b.Applied(m)
		d.Apply("")
		return nil
	})); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(inner, live.ErrReentrant) || errors.Is(inner, watermillsim.ErrClosed) {
		t.Fatalf("Applied from inside Handle: %v, want live.ErrReentrant", inner)
	}
	m.Ack()
	_ = s.Close()
	if err := b.Check(sim.ExactlyOnce("q")); err != nil {
		t.Fatal(err)
	}
}
