package outbox

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
)

// charge is the consumer's effect: one row per applied order event.
type charge struct {
	N       uint64
	OrderID uint64
	Amount  int64
}

var chargesTable = &memdb.TableSchema{Name: "charges", Indexes: map[string]*memdb.IndexSchema{
	"id": {Name: "id", Unique: true, Indexer: &memdb.UintFieldIndex{Field: "N"}},
}}

type bank struct {
	db *memdb.MemDB
	n  uint64
}

func newBank(t testing.TB) *bank {
	t.Helper()
	db, err := memdb.NewMemDB(ConsumerSchema(chargesTable))
	if err != nil {
		t.Fatal(err)
	}
	return &bank{db: db}
}

// charge inserts a charge for the order in d.
func (b *bank) charge(txn *memdb.Txn, d *sim.Delivery) error {
	ev, err := DecodeOrderPlaced(d.Msg.Body)
	if err != nil {
		return fmt.Errorf("%w: %w", sim.ErrPoison, err)
	}
	b.n++
	return txn.Insert("charges", &charge{N: b.n, OrderID: ev.OrderID, Amount: ev.Amount})
}

func (b *bank) charges(t testing.TB) []charge {
	t.Helper()
	it, err := b.db.Txn(false).Get("charges", "id")
	if err != nil {
		t.Fatal(err)
	}
	var out []charge
	for o := it.Next(); o != nil; o = it.Next() {
		out = append(out, *o.(*charge))
	}
	return out
}

// processed counts the dedup entries in db.
func processed(t testing.TB, db *memdb.MemDB) int {
	t.Helper()
	it, err := db.Txn(false).Get(TableProcessed, IndexID)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for o := it.Next(); o != nil; o = it.Next() {
		n++
	}
	return n
}

func (b *bank) processed(t testing.TB) int { return processed(t, b.db) }

func mustConsumer(t testing.TB, w *sim.World, cfg ConsumerConfig) *Consumer {
	t.Helper()
	c, err := NewConsumer(w, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// bus is a tiny broker for handler tests: every publish is one copy that
// it delivers at once to each of its logical consumers through the one
// handler contract, acking it when the handler succeeded.
type bus struct {
	env      *sim.Env
	names    []string
	handlers []sim.Handler
	attempts map[sim.ID]int
}

func newBus(w *sim.World) *bus { return &bus{env: w.Env(), attempts: map[sim.ID]int{}} }

func (b *bus) add(name string, h sim.Handler) {
	b.names = append(b.names, name)
	b.handlers = append(b.handlers, h)
}

func (b *bus) Publish(m sim.Message) error {
	env := b.env
	env.Emit(sim.Event{Kind: sim.KindSent, Where: "bus", Msg: m.ID, Key: m.Key, Type: m.Headers.Type})
	b.attempts[m.ID]++
	for i, h := range b.handlers {
		name := b.names[i]
		kind := sim.KindReceived
		if b.attempts[m.ID] > 1 {
			kind = sim.KindRedelivered
		}
		env.Emit(sim.Event{Kind: kind, Where: "bus", Actor: name, Consumer: name, Msg: m.ID, Key: m.Key, Attempt: b.attempts[m.ID]})
		if err := h.Handle(sim.NewDelivery(env, m, "bus", name, "", b.attempts[m.ID])); err != nil {
			env.Emit(sim.Event{Kind: sim.KindFailed, Where: "bus", Actor: name, Consumer: name, Msg: m.ID, Key: m.Key, Detail: err.Error()})
			continue
		}
		env.Emit(sim.Event{Kind: sim.KindAcked, Where: "bus", Actor: name, Consumer: name, Msg: m.ID, Key: m.Key})
	}
	return nil
}

// TestIdempotentConsumerUnderDuplicates publishes three orders through a
// relay that crashes after every first publish, so every message is
// delivered twice, to an idempotent and a naive consumer: the naive one
// charges twice, the idempotent one passes exactly-once.
func TestIdempotentConsumerUnderDuplicates(t *testing.T) {
	w := mustWorld(t, 5)
	var jsonl bytes.Buffer
	w.Trace().Attach(sim.NewJSONWriter(&jsonl))
	env := w.Env()
	s := mustService(t, w, false)
	idemBank, naiveBank := newBank(t), newBank(t)
	idem := mustConsumer(t, w, ConsumerConfig{Name: "billing", DB: idemBank.db, Effect: idemBank.charge})
	naive := mustConsumer(t, w, ConsumerConfig{Name: "billing-naive", DB: naiveBank.db, Effect: naiveBank.charge, Dedup: NoDedup})
	target := newBus(w)
	target.add("billing", idem)
	target.add("billing-naive", naive)
	customers := []string{"kunde-A", "kunde-B", "kunde-C"}
	var rules []faults.Rule
	for _, c := range customers {
		rules = append(rules, faults.Rule{Name: "crash-" + c, Point: faults.RelayCrashAfterPublish, Match: faults.Match{Key: c}, Nth: 1})
	}
	in := mustFaults(t, w, rules...)
	r := mustRelay(t, w, RelayConfig{Service: s, Target: target, Faults: in, MarkEach: true, Batch: 1})
	for i, c := range customers {
		if _, _, err := s.PlaceOrder(c, int64(10*(i+1))); err != nil {
			t.Fatal(err)
		}
	}
	for tick := sim.Tick(1); tick <= 6; tick++ {
		env.Clock.Set(tick)
		_ = r.Poll()
	}
	l := w.Ledger()
	if d := l.Duplicates("billing"); d != 3 {
		t.Fatalf("%d duplicate deliveries, want 3 (each of 3 messages twice)", d)
	}
	if err := sim.Check(l, sim.NoLoss(), sim.ExactlyOnce("billing")); err != nil {
		t.Errorf("idempotent consumer: %v", err)
	}
	err := sim.Check(l, sim.ExactlyOnce("billing-naive"))
	var ce *sim.CheckError
	if !errors.As(err, &ce) || len(ce.Violations) != 3 || !strings.Contains(ce.Violations[0].Detail, "applied 2 times") {
		t.Errorf("naive consumer: %v, want 3 effects applied twice", err)
	}
	if err := sim.Check(l, sim.AtLeastOnce("billing-naive")); err != nil {
		t.Errorf("the naive consumer still applies every order: %v", err)
	}
	if n := len(idemBank.charges(t)); n != 3 {
		t.Errorf("idempotent consumer charged %d times, want 3", n)
	}
	if n := len(naiveBank.charges(t)); n != 6 {
		t.Errorf("naive consumer charged %d times, want 6 (double charging)", n)
	}
	if st := idem.Stats(); st.Applied != 3 || st.Duplicates != 3 {
		t.Errorf("idempotent stats %+v", st)
	}
	for _, o := range l.Outcomes("billing") {
		if o.Verdict != sim.VerdictApplied || o.Effects != 1 || o.Skipped != 1 || o.Deliveries != 2 {
			t.Errorf("billing outcome %+v, want applied once and one duplicate absorbed", o)
		}
	}
	foldsAgain(t, w, &jsonl)
}

// TestConsumerDedupAndEffectCommitTogether: an effect that fails half-way
// (a crash before the commit) leaves neither the effect nor the dedup
// entry, and keeps its failure class; the redelivery applies it once and
// the next one is a duplicate.
func TestConsumerDedupAndEffectCommitTogether(t *testing.T) {
	w := mustWorld(t, 1)
	env := w.Env()
	b := newBank(t)
	crash := true
	c := mustConsumer(t, w, ConsumerConfig{Name: "billing", DB: b.db, Effect: func(txn *memdb.Txn, d *sim.Delivery) error {
		if err := b.charge(txn, d); err != nil {
			return err
		}
		if crash {
			return fmt.Errorf("process died before the commit: %w", sim.ErrPermanent)
		}
		return nil
	}})
	m := env.NewMessage("kunde-A", encodeOrderPlaced(Order{ID: 1, Customer: "kunde-A", Amount: 10}), sim.Headers{Type: EventOrderPlaced})
	deliver := func(attempt int) (*sim.Delivery, error) {
		d := sim.NewDelivery(env, m, "bus", "billing", "", attempt)
		return d, c.Handle(d)
	}
	d, err := deliver(1)
	if err == nil || sim.Classify(err) != sim.ClassPermanent || d.Effects() != 0 {
		t.Fatalf("Handle = %v (class %s), %d effects; want the permanent failure and no effect", err, sim.Classify(err), d.Effects())
	}
	if n, p := len(b.charges(t)), b.processed(t); n != 0 || p != 0 {
		t.Fatalf("after the failed effect: %d charges, %d dedup rows; want both rolled back", n, p)
	}
	crash = false
	for i, want := range []int{1, 0} {
		d, err := deliver(i + 2)
		if err != nil || d.Effects() != want || d.Skipped() != (want == 0) {
			t.Fatalf("delivery %d: %v, %d effects, skipped=%v; want %d", i+2, err, d.Effects(), d.Skipped(), want)
		}
	}
	if n, p := len(b.charges(t)), b.processed(t); n != 1 || p != 1 {
		t.Fatalf("%d charges, %d dedup rows; want 1 and 1", n, p)
	}
	if err := sim.Check(w.Ledger(), sim.ExactlyOnce("billing")); err != nil {
		t.Error(err)
	}
	if st := c.Stats(); st.Handled != 3 || st.Applied != 1 || st.Duplicates != 1 || st.Failed != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestConsumerBusinessKeyBucketAndTTL(t *testing.T) {
	w := mustWorld(t, 1)
	env := w.Env()
	b := newBank(t)
	c := mustConsumer(t, w, ConsumerConfig{Name: "billing", DB: b.db, Effect: b.charge, Dedup: ByBusinessKey,
		BusinessKey: func(m sim.Message) string {
			ev, _ := DecodeOrderPlaced(m.Body)
			return ev.Customer + "/" + string(rune('0'+ev.Amount%10))
		}, Bucket: 10, TTL: 20})
	body := encodeOrderPlaced(Order{ID: 1, Customer: "kunde-A", Amount: 10})
	handle := func(at sim.Tick) bool {
		env.Clock.Set(at)
		// A retried request: a new message ID, the same business key.
		m := env.NewMessage("kunde-A", body, sim.Headers{Type: EventOrderPlaced})
		d := sim.NewDelivery(env, m, "bus", "billing", "", 1)
		if err := c.Handle(d); err != nil {
			t.Fatal(err)
		}
		return d.Effects() > 0
	}
	if !handle(1) {
		t.Fatal("first request not applied")
	}
	if handle(5) {
		t.Fatal("same key in the same bucket applied twice")
	}
	if !handle(12) {
		t.Fatal("same key in the next bucket not applied")
	}
	if got := c.Key(sim.Message{Body: body, Created: 35}); got != "kunde-A/0@3" {
		t.Errorf("Key = %q", got)
	}
	// TTL: at t=25 the entry from t=1 is forgotten; the one from t=12 stays.
	env.Clock.Set(25)
	if n, err := c.Expire(); err != nil || n != 1 {
		t.Errorf("Expire = %d, %v; want 1", n, err)
	}
	if st := c.Stats(); st.Forgotten != 1 || b.processed(t) != 1 {
		t.Errorf("stats %+v, %d dedup rows left", st, b.processed(t))
	}
	// The next delivery forgets in its own transaction: at t=40 the entry
	// from t=12 has expired, so the same key in bucket 1 applies again.
	env.Clock.Set(40)
	m := env.NewMessage("kunde-A", body, sim.Headers{Type: EventOrderPlaced})
	m.Created = 12
	d := sim.NewDelivery(env, m, "bus", "billing", "", 1)
	if err := c.Handle(d); err != nil || d.Effects() != 1 || c.Stats().Forgotten != 2 {
		t.Errorf("after the TTL: %v, %d effects, stats %+v", err, d.Effects(), c.Stats())
	}
	// The default business key is type, key and body: a redriven copy
	// with a new ID has the same one.
	c2 := mustConsumer(t, w, ConsumerConfig{Name: "billing-2", DB: b.db, Effect: b.charge, Dedup: ByBusinessKey})
	x, y := env.NewMessage("k", body, sim.Headers{Type: "t"}), env.NewMessage("k", body, sim.Headers{Type: "t"})
	if c2.Key(x) != c2.Key(y) || c2.Key(x) != BusinessKey(y) {
		t.Errorf("default business keys %q and %q differ", c2.Key(x), c2.Key(y))
	}
}

// TestConsumerWrapsHandler makes a scripted handler idempotent: its
// processing time is kept, a failed attempt records nothing, the
// successful one records its key, and a repeat is skipped without calling
// the handler.
func TestConsumerWrapsHandler(t *testing.T) {
	w := mustWorld(t, 1)
	env := w.Env()
	s := mustService(t, w, false)
	script := &sim.Script{Behaviour: sim.Transient, Failures: 1, Ticks: 3}
	calls := 0
	inner := sim.HandlerFunc(func(d *sim.Delivery) error { calls++; return script.Handle(d) })
	c := mustConsumer(t, w, ConsumerConfig{Name: "mailer", Service: s, Handler: timed{inner, script}})
	other := mustConsumer(t, w, ConsumerConfig{Name: "audit", Service: s, Effect: func(*memdb.Txn, *sim.Delivery) error { return nil }})
	m := env.NewMessage("kunde-A", []byte("hi"), sim.Headers{Type: "mail"})
	var got []string
	for i := 1; i <= 3; i++ {
		d := sim.NewDelivery(env, m, "bus", "mailer", "", i)
		if dur := sim.DurationOf(c, d); dur != 3 {
			t.Fatalf("duration %d, want the handler's 3", dur)
		}
		err := c.Handle(d)
		got = append(got, fmt.Sprintf("%v/%d/%v", sim.Classify(err), d.Effects(), d.Skipped()))
	}
	if s := strings.Join(got, " "); s != "transient/0/false none/1/false none/0/true" || calls != 2 {
		t.Errorf("deliveries %s, %d handler calls; want a failure, an effect, a skip and 2 calls", s, calls)
	}
	// Consumers sharing the service's database keep their own entries.
	d := sim.NewDelivery(env, m, "bus", "audit", "", 1)
	if err := other.Handle(d); err != nil || d.Effects() != 1 {
		t.Errorf("audit: %v, %d effects; the mailer's entry must not count for it", err, d.Effects())
	}
	if n := processed(t, s.DB()); n != 2 {
		t.Errorf("%d dedup rows in the service database, want 2", n)
	}
}

// timed is a handler with the processing time of a Timed.
type timed struct {
	sim.Handler
	t sim.Timed
}

func (x timed) Duration(d *sim.Delivery) sim.Tick { return x.t.Duration(d) }

func TestConsumerConfigValidate(t *testing.T) {
	w := mustWorld(t, 1)
	b := newBank(t)
	plain, err := memdb.NewMemDB(&memdb.DBSchema{Tables: map[string]*memdb.TableSchema{"charges": chargesTable}})
	if err != nil {
		t.Fatal(err)
	}
	eff := func(*memdb.Txn, *sim.Delivery) error { return nil }
	s := mustService(t, w, false)
	bad := []ConsumerConfig{
		{DB: b.db, Effect: eff},
		{Name: "x", Effect: eff},
		{Name: "x", DB: b.db},
		{Name: "x", DB: b.db, Service: s, Effect: eff},
		{Name: "x", DB: b.db, Effect: eff, Handler: sim.Effect("")},
		{Name: "x", DB: plain, Effect: eff},
		{Name: "x", DB: b.db, Effect: eff, TTL: -1},
		{Name: "x", DB: b.db, Effect: eff, Dedup: 9},
	}
	for i, c := range bad {
		if _, err := NewConsumer(w, c); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("config %d: %v", i, err)
		}
	}
	if _, err := NewConsumer(w, ConsumerConfig{Name: "naive", DB: plain, Effect: eff, Dedup: NoDedup}); err != nil {
		t.Errorf("naive consumer without dedup table: %v", err)
	}
	if _, err := NewConsumer(mustWorld(t, 2), ConsumerConfig{Name: "x", Service: s, Effect: eff}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("a consumer of another world's service: %v", err)
	}
	if _, err := NewConsumer(nil, ConsumerConfig{Name: "x", DB: b.db, Effect: eff}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("a consumer without a world: %v", err)
	}
}
