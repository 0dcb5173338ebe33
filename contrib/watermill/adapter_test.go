package watermill_test

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	wm "github.com/brokerlab/brokerlab/contrib/watermill"
	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/sim"
)

const wait = 10 * time.Second

func subscribe(t *testing.T, b *wm.Broker, cfg wm.SubscriberConfig, ctx context.Context, topic string) (*wm.Subscriber, <-chan *message.Message) {
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

func publish(t *testing.T, b *wm.Broker, topic string, uuids ...string) {
	t.Helper()
	for _, id := range uuids {
		if err := b.Publisher().Publish(topic, message.NewMessage(id, []byte(id))); err != nil {
			t.Fatal(err)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	bad := []wm.Config{
		{Kind: 9}, {TickEvery: -1}, {VisibilityTimeout: -1}, {NackDelay: -1}, {MaxReceiveCount: -1},
		{Buffer: -1}, {Partitions: -1}, {Faults: []faults.Rule{{Name: "x", Point: "no.such.point"}}},
	}
	for _, c := range bad {
		if _, err := wm.New(c); !errors.Is(err, wm.ErrInvalidConfig) {
			t.Errorf("%+v: %v", c, err)
		}
	}
}

// A message left unacked past the visibility timeout goes to another
// competing consumer; the late ack is refused as stale and traced.
func TestQueueVisibilityTimeoutRedelivers(t *testing.T) {
	b := newBroker(t, wm.Config{Kind: wm.KindQueue, VisibilityTimeout: 5})
	publish(t, b, "jobs", "j1")
	_, slow := subscribe(t, b, wm.SubscriberConfig{Name: "slow"}, context.Background(), "jobs")
	first := next(t, slow)
	_, fast := subscribe(t, b, wm.SubscriberConfig{Name: "fast"}, context.Background(), "jobs")
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
}

// Nack redelivers; past MaxReceiveCount the message goes to the
// dead-letter queue, a topic of its own.
func TestQueueNackAndDeadLetter(t *testing.T) {
	b := newBroker(t, wm.Config{Kind: wm.KindQueue, MaxReceiveCount: 2})
	publish(t, b, "mail", "poison")
	_, ch := subscribe(t, b, wm.SubscriberConfig{}, context.Background(), "mail")
	next(t, ch).Nack()
	next(t, ch).Nack()
	_, dlq := subscribe(t, b, wm.SubscriberConfig{}, context.Background(), "mail"+wm.DeadLetterSuffix)
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
	b := newBroker(t, wm.Config{Kind: wm.KindQueue, Faults: []faults.Rule{{Name: "down", Point: faults.BrokerUnavailable, Count: 1}}})
	err := b.Publisher().Publish("orders", message.NewMessage("o1", nil))
	if !errors.Is(err, queue.ErrUnavailable) {
		t.Fatalf("publish while down: %v", err)
	}
	publish(t, b, "orders", "o1") // the retry goes through
	_, ch := subscribe(t, b, wm.SubscriberConfig{}, context.Background(), "orders")
	next(t, ch).Ack()
}

// broker.delay holds a message for Param ticks before it is visible.
func TestQueueDelay(t *testing.T) {
	b := newBroker(t, wm.Config{Kind: wm.KindQueue, Faults: []faults.Rule{{Name: "slow", Point: faults.BrokerDelay, Param: 20}}})
	publish(t, b, "d", "late")
	sent := b.Now()
	_, ch := subscribe(t, b, wm.SubscriberConfig{}, context.Background(), "d")
	m := next(t, ch)
	if got := b.Now(); got < sent+20 {
		t.Fatalf("delivered at t=%d, sent at t=%d, delay 20", got, sent)
	}
	m.Ack()
}

// Metadata, payload and UUID survive the trip; the key comes from
// KeyMetadata and the sim ID is stable per UUID.
func TestMessageMapping(t *testing.T) {
	b := newBroker(t, wm.Config{Kind: wm.KindQueue, KeyMetadata: "customer"})
	in := message.NewMessage("u-1", []byte("body"))
	in.Metadata.Set("customer", "c7")
	in.Metadata.Set("correlation_id", "corr")
	if err := b.Publisher().Publish("q", in, in); err != nil {
		t.Fatal(err)
	}
	_, ch := subscribe(t, b, wm.SubscriberConfig{}, context.Background(), "q")
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
	if _, err := b.Sim(message.NewMessage("x", nil)); !errors.Is(err, wm.ErrNotDelivered) {
		t.Fatalf("Sim of a foreign message: %v", err)
	}
	if err := b.Applied(message.NewMessage("x", nil)); !errors.Is(err, wm.ErrNotDelivered) {
		t.Fatalf("Applied of a foreign message: %v", err)
	}
}

// Subscriber goroutines stop on context cancel and on Close; later calls fail.
func TestStopOnCancelAndClose(t *testing.T) {
	for _, k := range []wm.Kind{wm.KindQueue, wm.KindPubSub, wm.KindLog} {
		t.Run(k.String(), func(t *testing.T) {
			b := newBroker(t, wm.Config{Kind: k})
			ctx, cancel := context.WithCancel(context.Background())
			s, ch := subscribe(t, b, wm.SubscriberConfig{}, ctx, "t")
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
			if _, err := s.Subscribe(context.Background(), "t"); !errors.Is(err, wm.ErrClosed) {
				t.Fatalf("Subscribe after Close: %v", err)
			}
			p := b.Publisher()
			_ = p.Close()
			if err := p.Publish("t", message.NewMessage("m", nil)); !errors.Is(err, wm.ErrClosed) {
				t.Fatalf("Publish after Close: %v", err)
			}
			_ = b.Close()
			if err := b.Do(func(*sim.World) {}); !errors.Is(err, wm.ErrClosed) {
				t.Fatalf("Do after Close: %v", err)
			}
		})
	}
}

// Pub/sub fans out to every connected subscriber and keeps nothing for
// one that connects later; the ledger books the later one as not expected.
func TestPubSubFanOutIsEphemeral(t *testing.T) {
	b := newBroker(t, wm.Config{Kind: wm.KindPubSub})
	a, _ := b.Subscriber(wm.SubscriberConfig{Name: "a"})
	c, _ := b.Subscriber(wm.SubscriberConfig{Name: "c"})
	defer a.Close()
	defer c.Close()
	for _, s := range []*wm.Subscriber{a, c} {
		if err := s.SubscribeInitialize("news"); err != nil {
			t.Fatal(err)
		}
	}
	publish(t, b, "news", "n1")
	late, _ := b.Subscriber(wm.SubscriberConfig{Name: "late"})
	defer late.Close()
	lateCh, _ := late.Subscribe(context.Background(), "news")
	var chans []<-chan *message.Message
	for _, s := range []*wm.Subscriber{a, c} {
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
			if err := b.Applied(m); err != nil {
				t.Fatal(err)
			}
			m.Ack()
		}
	}
	if m := next(t, lateCh); m.UUID != "n2" {
		t.Fatalf("late subscriber got %s, want only n2", m.UUID)
	}
	if err := b.Check(sim.ExactlyOnce(a.Consumer("news")), sim.ExactlyOnce(c.Consumer("news"))); err != nil {
		t.Fatal(err)
	}
}

// Log consumer groups: each group reads every record; within a group the
// committed offset carries over to the next subscriber.
func TestLogConsumerGroups(t *testing.T) {
	b := newBroker(t, wm.Config{Kind: wm.KindLog})
	publish(t, b, "events", "e1", "e2", "e3")
	s1, ch1 := subscribe(t, b, wm.SubscriberConfig{Group: "billing"}, context.Background(), "events")
	next(t, ch1).Ack()
	m := next(t, ch1) // e2, never acked
	if m.UUID != "e2" {
		t.Fatalf("got %s", m.UUID)
	}
	_ = s1.Close()
	_, ch2 := subscribe(t, b, wm.SubscriberConfig{Group: "billing"}, context.Background(), "events")
	for _, want := range []string{"e2", "e3"} {
		if m := next(t, ch2); m.UUID != want {
			t.Fatalf("got %s, want %s", m.UUID, want)
		} else {
			m.Ack()
		}
	}
	_, ch3 := subscribe(t, b, wm.SubscriberConfig{Group: "audit"}, context.Background(), "events")
	for _, want := range []string{"e1", "e2", "e3"} {
		if m := next(t, ch3); m.UUID != want {
			t.Fatalf("audit got %s, want %s", m.UUID, want)
		} else {
			m.Ack()
		}
	}
}

// On the log, broker.duplicate loses a commit: the acked record comes again.
func TestLogDuplicateAndUnavailable(t *testing.T) {
	b := newBroker(t, wm.Config{Kind: wm.KindLog, Faults: []faults.Rule{
		{Name: "dup", Point: faults.BrokerDuplicate, Count: 1},
		{Name: "down", Point: faults.BrokerUnavailable, Count: 1, Match: faults.Match{Where: "log:x"}},
	}})
	if err := b.Publisher().Publish("x", message.NewMessage("r1", nil)); !errors.Is(err, eventlog.ErrUnavailable) {
		t.Fatalf("publish while down: %v", err)
	}
	publish(t, b, "x", "r1")
	_, ch := subscribe(t, b, wm.SubscriberConfig{Group: "g"}, context.Background(), "x")
	a := next(t, ch)
	a.Ack()
	c := next(t, ch)
	c.Ack()
	if a.UUID != "r1" || c.UUID != "r1" {
		t.Fatalf("got %s then %s", a.UUID, c.UUID)
	}
}

// On the log, broker.delay holds the partition for Param ticks before the
// record is delivered, once per record.
func TestLogDelay(t *testing.T) {
	b := newBroker(t, wm.Config{Kind: wm.KindLog, Faults: []faults.Rule{{Name: "slow", Point: faults.BrokerDelay, Param: 20, Count: 1}}})
	publish(t, b, "x", "r1", "r2")
	sent := b.Now()
	_, ch := subscribe(t, b, wm.SubscriberConfig{}, context.Background(), "x")
	m := next(t, ch)
	if got := b.Now(); m.UUID != "r1" || got < sent+20 {
		t.Fatalf("%s delivered at t=%d, sent at t=%d, delay 20", m.UUID, got, sent)
	}
	m.Ack()
	next(t, ch).Ack()
}

// On pub/sub, broker.duplicate places a second copy in the connection.
func TestPubSubDuplicate(t *testing.T) {
	b := newBroker(t, wm.Config{Kind: wm.KindPubSub, Faults: []faults.Rule{{Name: "dup", Point: faults.BrokerDuplicate, Count: 1}}})
	s, _ := b.Subscriber(wm.SubscriberConfig{Name: "s"})
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
		if err := b.Applied(m); err != nil {
			t.Fatal(err)
		}
		m.Ack()
	}
	if err := b.Check(sim.ExactlyOnce(s.Consumer("news"))); err == nil {
		t.Fatal("ExactlyOnce missed the duplicate")
	}
}

// No goroutine outlives its Broker and Subscribers: subscriptions stop on
// context cancel and on Close, the driver on Broker.Close.
func TestNoGoroutineLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	var closers []func() error
	for _, k := range []wm.Kind{wm.KindQueue, wm.KindPubSub, wm.KindLog} {
		b, err := wm.New(wm.Config{Kind: k})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		for i := range 4 {
			s, _ := b.Subscriber(wm.SubscriberConfig{})
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
