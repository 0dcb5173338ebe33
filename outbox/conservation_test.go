package outbox

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"testing"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/producer"
	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/sim"
)

// modelled is the set of causes a loss in these runs may have.
var modelled = map[sim.Cause]bool{
	sim.CauseDualWrite: true, sim.CauseBrokerUnavailable: true,
}

// ledgerCharge is one effect of the conservation test's consumer: the
// charged order and the message copy that carried it.
type ledgerCharge struct {
	N       uint64
	OrderID uint64
	Msg     sim.ID
}

var ledgerChargesTable = &memdb.TableSchema{Name: "charges", Indexes: map[string]*memdb.IndexSchema{
	"id": {Name: "id", Unique: true, Indexer: &memdb.UintFieldIndex{Field: "N"}},
}}

// tally sums what the seeds of a conservation run produced.
type tally struct {
	seeds, origins, phantoms, dups, dupEffects, relayCrashes, writerCrashes, acksLost int
	verdicts                                                                          map[string]int
	causes                                                                            map[sim.Cause]int
	modes                                                                             map[string]int
	ordered                                                                           map[string]int // seeds whose relay order was checked, by ordering
}

func (t *tally) String() string {
	keys := func(m map[string]int) string {
		var ks []string
		for k := range m {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		s := ""
		for _, k := range ks {
			s += " " + k + "=" + strconv.Itoa(m[k])
		}
		return s
	}
	causes := map[string]int{}
	for c, n := range t.causes {
		causes[string(c)] = n
	}
	return fmt.Sprintf("%d seeds, %d origins; verdicts:%s; losses by cause:%s; %d phantoms, %d duplicate deliveries, %d duplicate effects (naive consumers), %d relay crashes, %d writer crashes, %d acks lost; modes:%s; seeds order-checked:%s",
		t.seeds, t.origins, keys(t.verdicts), keys(causes), t.phantoms, t.dups, t.dupEffects, t.relayCrashes, t.writerCrashes, t.acksLost, keys(t.modes), keys(t.ordered))
}

// TestConservation runs random systems (a commander, one of the three
// writer modes, zero to three polling relays with leases or a CDC relay, a
// queue with a dead-letter queue and a worker pool whose handler is the
// idempotent consumer or the naive one) under random fault mixes: relay
// crashes after publish, writer crashes on both sides of the commit,
// broker outages at the writer, the relays and the queue, acks the queue
// never gets (broker.ack_lost), consumer crashes after the effect, handler
// failures, a killed relay and dead rows retried by hand or left parked. After the system drains, every origin has a
// verdict that is neither pending nor unsettled, every loss has a
// modelled cause, the ledger agrees with the databases (orders, outbox
// rows, charges), relays keep their order promise (checkRelayOrder) and
// never write over another relay's lease (InFlightCheck), and the ledger
// folded from the JSON Lines trace equals the live one.
func TestConservation(t *testing.T) {
	seeds := 1000
	if testing.Short() {
		seeds = 100
	}
	tl := &tally{verdicts: map[string]int{}, causes: map[sim.Cause]int{}, modes: map[string]int{}, ordered: map[string]int{}}
	for seed := 1; seed <= seeds; seed++ {
		conserve(t, uint64(seed), tl)
		if t.Failed() {
			t.Fatalf("seed %d failed", seed)
		}
	}
	t.Log(tl)
	for _, v := range []string{"applied", "parked@outbox:shop", "parked@queue:billing", "lost"} {
		if tl.verdicts[v] == 0 {
			t.Errorf("no origin was %s over %d seeds: the fault mix is too weak", v, seeds)
		}
	}
	if tl.phantoms == 0 || tl.dups == 0 || tl.relayCrashes == 0 || tl.causes[sim.CauseDualWrite] == 0 || tl.causes[sim.CauseBrokerUnavailable] == 0 {
		t.Errorf("the fault mix did not produce every lineage feature: %s", tl)
	}
}

// conserve runs and checks one seed.
func conserve(t *testing.T, seed uint64, tl *tally) {
	w := mustWorld(t, seed)
	var jsonl bytes.Buffer
	w.Trace().Attach(sim.NewJSONWriter(&jsonl))
	rnd := w.Env().Stream("test/conservation")
	p := func(max float64) float64 {
		if rnd.IntN(3) == 0 {
			return 0 // a third of the mixes leave each fault out
		}
		return max * rnd.Float64()
	}
	const faultsUntil = 120
	mode := Mode(rnd.IntN(3))
	rule := func(name string, point faults.Point, prob float64, m faults.Match) faults.Rule {
		return faults.Rule{Name: name, Point: point, Probability: prob, Until: faultsUntil, Match: m}
	}
	var rules []faults.Rule
	for _, r := range []faults.Rule{
		rule("relay-crash", faults.RelayCrashAfterPublish, p(0.15), faults.Match{}),
		rule("writer-crash-after-commit", faults.WriterCrashAfterCommit, p(0.15), faults.Match{}),
		rule("writer-crash-before-commit", faults.WriterCrashAfterPublish, p(0.15), faults.Match{}),
		rule("outbox-side-down", faults.BrokerUnavailable, p(0.2), faults.Match{Where: "outbox:*"}),
		rule("queue-down", faults.BrokerUnavailable, p(0.1), faults.Match{Where: "queue:billing"}),
		rule("ack-lost", faults.BrokerAckLost, p(0.1), faults.Match{Where: "queue:billing"}), // a lost ack redelivers: the idempotent consumer absorbs it
		rule("consumer-crash", faults.ConsumerCrashAfterEffect, p(0.1), faults.Match{}),
		rule("handler-transient", faults.HandlerTransient, p(0.1), faults.Match{}),
		rule("handler-permanent", faults.HandlerPermanent, p(0.03), faults.Match{}),
	} {
		if r.Probability > 0 {
			rules = append(rules, r)
		}
	}
	in := mustFaults(t, w, rules...)
	dlq, err := queue.New(w, queue.Config{Name: "billing-dlq"})
	if err != nil {
		t.Fatal(err)
	}
	q, err := queue.New(w, queue.Config{Name: "billing", Faults: in, VisibilityTimeout: sim.Tick(2 + rnd.IntN(4)),
		DeadLetter: dlq, MaxReceiveCount: 20})
	if err != nil {
		t.Fatal(err)
	}
	cdc := mode == Outbox && rnd.IntN(4) == 0
	s := mustService(t, w, cdc)
	wr := mustWriter(t, w, WriterConfig{Name: "shop", Service: s, Mode: mode, Target: q, Faults: in})
	onRefused := producer.OnRefusedRetry
	if rnd.IntN(2) == 0 {
		onRefused = producer.OnRefusedDrop
	}
	cmd := mustCommander(t, w, CommanderConfig{Name: "client", Writer: wr, Count: 20 + rnd.IntN(40), Rate: 1 + rnd.IntN(3),
		Keys: []string{"kunde-A", "kunde-B", "kunde-C", "kunde-D"}, RandomKeys: rnd.IntN(2) == 0, OnRefused: onRefused})
	type killable interface {
		Kill()
		Resume()
	}
	var relays []*Relay
	var kills []killable
	if mode == Outbox {
		if cdc {
			r, err := NewCDCRelay(w, CDCConfig{Service: s, Target: q, Faults: in, CommitEvery: rnd.IntN(4), MaxPerStep: rnd.IntN(8),
				RestartAfter: sim.Tick(1 + rnd.IntN(5)), Interval: sim.Tick(1 + rnd.IntN(3))})
			if err != nil {
				t.Fatal(err)
			}
			kills = append(kills, r)
		} else {
			lease := sim.Tick(2 + rnd.IntN(5))
			for i := 0; i < 1+rnd.IntN(3); i++ {
				batch, maxAttempts, backoff := 1+rnd.IntN(6), 1+rnd.IntN(4), sim.Tick(rnd.IntN(3))
				ordering, markEach, continueOnError := Ordering(rnd.IntN(2)), rnd.IntN(2) == 0, rnd.IntN(2) == 0
				r := mustRelay(t, w, RelayConfig{Name: "relay-" + strconv.Itoa(i), Service: s, Target: q, Faults: in,
					Batch: batch, Lease: lease, MaxAttempts: maxAttempts, Backoff: backoff,
					Ordering: ordering, MarkEach: markEach, ContinueOnError: continueOnError && ordering == PerAggregate,
					RestartAfter: sim.Tick(1 + rnd.IntN(8)), PollEvery: sim.Tick(1 + rnd.IntN(2)), Start: sim.Tick(rnd.IntN(10))})
				relays = append(relays, r)
				kills = append(kills, r)
			}
		}
	}
	if len(kills) > 0 && rnd.IntN(3) == 0 {
		k := kills[0]
		at := sim.Tick(5 + rnd.IntN(50))
		w.At(at, "kill relay", k.Kill)
		w.At(at+sim.Tick(1+rnd.IntN(40)), "resume relay", k.Resume)
	}
	retryDead := rnd.IntN(2) == 0
	if retryDead {
		w.At(faultsUntil, "retry dead rows", func() {
			for _, d := range s.DeadLetters() {
				if err := s.Retry(d.ID); err != nil {
					t.Errorf("seed %d: retry row %d: %v", seed, d.ID, err)
				}
			}
		})
	}
	audit := NewInFlightCheck(relays...)
	w.Trace().Attach(audit)
	var outboxEvents sim.Recorder // relayed and dead_lettered at the outbox, for the order check
	w.Trace().Attach(sim.FilterSink{Next: &outboxEvents, Keep: func(e *sim.Event) bool {
		return e.Where == "outbox:shop" && (e.Kind == sim.KindRelayed || e.Kind == sim.KindDeadLettered)
	}})
	db, err := memdb.NewMemDB(ConsumerSchema(ledgerChargesTable))
	if err != nil {
		t.Fatal(err)
	}
	var n uint64
	dedup := Dedup(rnd.IntN(3))
	billing := mustConsumer(t, w, ConsumerConfig{Name: "billing", DB: db, Dedup: dedup, TTL: sim.Tick(rnd.IntN(2) * 1000),
		Effect: func(txn *memdb.Txn, d *sim.Delivery) error {
			ev, err := DecodeOrderPlaced(d.Msg.Body)
			if err != nil {
				return fmt.Errorf("%w: %w", sim.ErrPoison, err)
			}
			n++
			return txn.Insert("charges", &ledgerCharge{N: n, OrderID: ev.OrderID, Msg: d.Msg.ID})
		}})
	if _, err := queue.NewConsumer(w, queue.ConsumerConfig{Queue: q, Name: "worker", Instances: 1 + rnd.IntN(2), Batch: 1 + rnd.IntN(4),
		Handler: billing, Faults: in, Retry: queue.FixedRetry(1)}); err != nil {
		t.Fatal(err)
	}
	done := func() bool {
		return w.Now() > faultsUntil+1 && cmd.Done() && s.Metrics().Pending == 0 && q.Len() == 0
	}
	if err := w.RunUntil(done, 3000); err != nil {
		t.Fatalf("seed %d (%s): %v; commander done=%v, outbox %+v, queue %d", seed, mode, err, cmd.Done(), s.Metrics(), q.Len())
	}
	fail := func(format string, args ...any) {
		t.Helper()
		t.Errorf("seed %d (%s, cdc=%v, %d relays, dedup %s): "+format, append([]any{seed, mode, cdc, len(relays), dedup}, args...)...)
	}
	if err := audit.Err(); err != nil {
		fail("%v", err)
	}
	l := w.Ledger()

	// Every origin has a verdict: from its outcome for the worker pool, or,
	// for one that never reached the queue, from its broker-level state.
	outcomes := map[sim.ID]sim.Outcome{}
	for _, o := range l.Outcomes("") {
		if o.Consumer != "billing" {
			fail("outcome for an unknown consumer %q", o.Consumer)
		}
		outcomes[o.Origin] = o
	}
	charges := map[sim.ID]int{}
	chargedOrders := map[uint64]int{}
	it, err := db.Txn(false).Get("charges", "id")
	if err != nil {
		t.Fatal(err)
	}
	for obj := it.Next(); obj != nil; obj = it.Next() {
		c := obj.(*ledgerCharge)
		charges[l.Root(c.Msg)]++
		chargedOrders[c.OrderID]++
	}
	phantoms := 0
	for _, r := range l.Records() {
		if r.Phantom {
			phantoms++
		}
		if r.Origin != 0 {
			continue
		}
		verdict := ""
		if o, ok := outcomes[r.ID]; ok {
			verdict = o.Verdict.String()
			switch o.Verdict {
			case sim.VerdictPending, sim.VerdictUnsettled:
				fail("origin %s is %s: %+v", r.ID, o.Verdict, o)
			case sim.VerdictLost:
				if !modelled[o.Cause] {
					fail("origin %s lost with cause %q", r.ID, o.Cause)
				}
			}
			if charges[r.ID] != o.Effects {
				fail("origin %s: %d effects in the ledger, %d charges in the database", r.ID, o.Effects, charges[r.ID])
			}
			if dedup != NoDedup && o.Effects > 1 {
				fail("origin %s applied %d times by the idempotent consumer", r.ID, o.Effects)
			}
		} else {
			switch r.State {
			case sim.StateLost:
				verdict = "lost"
			case sim.StateDeadLettered:
				verdict = "parked"
				if r.Where != "outbox:shop" {
					fail("origin %s dead-lettered at %s without reaching the worker pool", r.ID, r.Where)
				}
			default:
				fail("origin %s reached no consumer and is %s at %s", r.ID, r.State, r.Where)
			}
			if charges[r.ID] != 0 {
				fail("origin %s charged %d times without an outcome", r.ID, charges[r.ID])
			}
		}
		if verdict == "parked" {
			verdict += "@" + r.Where // a dead row at the outbox, or a dead letter of the queue
		}
		tl.verdicts[verdict]++
		tl.origins++
	}
	losses := l.Losses()
	for _, x := range losses {
		if !modelled[x.Cause] {
			fail("loss %+v has no modelled cause", x)
		}
		tl.causes[x.Cause]++
	}
	st := l.Stats()

	// The ledger agrees with the service's database.
	orders := len(s.Orders())
	switch mode {
	case Outbox:
		if st.Origins != orders || st.Origins != len(s.Rows()) || len(losses) != 0 || phantoms != 0 {
			fail("%d origins for %d orders and %d rows, %d losses, %d phantoms", st.Origins, orders, len(s.Rows()), len(losses), phantoms)
		}
		// A dead row is parked at the outbox, unless a crashed relay had
		// published its message before and the queue took it on.
		for _, row := range s.DeadLetters() {
			rec, _ := l.Record(row.Msg)
			if _, reached := outcomes[row.Msg]; !reached && (rec.State != sim.StateDeadLettered || rec.Where != "outbox:shop") {
				fail("dead row %d: ledger record %+v", row.ID, rec)
			}
		}
		if retryDead && len(s.DeadLetters()) != 0 {
			fail("%d dead rows after the retry", len(s.DeadLetters()))
		}
	case CommitThenPublish:
		if st.Origins != orders || phantoms != 0 {
			fail("%d origins for %d orders, %d phantoms", st.Origins, orders, phantoms)
		}
		for _, x := range losses {
			if x.Consumer != "" {
				fail("a dual-write loss for a consumer: %+v", x)
			}
		}
	case PublishThenCommit:
		if st.Origins != orders+phantoms || len(losses) != 0 {
			fail("%d origins for %d orders and %d phantoms, %d losses", st.Origins, orders, phantoms, len(losses))
		}
		// Every order charged that does not exist is a phantom's, and
		// every applied phantom charged one.
		ghost, appliedPhantoms := 0, 0
		for id := range chargedOrders {
			if _, ok := s.Order(id); !ok {
				ghost++
			}
		}
		for _, r := range l.Records() {
			if r.Phantom && outcomes[r.ID].Effects > 0 {
				appliedPhantoms++
			}
		}
		if ghost != appliedPhantoms {
			fail("%d charged orders do not exist, %d phantoms were applied", ghost, appliedPhantoms)
		}
	}
	if dedup != NoDedup {
		for id, k := range chargedOrders {
			if k > 1 {
				fail("order %d charged %d times by the idempotent consumer", id, k)
			}
		}
	}
	if st.DuplicateEffects > 0 {
		tl.dupEffects += st.DuplicateEffects
		if dedup != NoDedup {
			fail("%d duplicate effects with dedup %s", st.DuplicateEffects, dedup)
		}
	}
	if mode == Outbox && !cdc {
		checked, err := checkRelayOrder(relays, s.Rows(), outboxEvents.Events())
		if err != nil {
			fail("%v", err)
		}
		if checked != "" {
			tl.ordered[checked]++
		}
	}
	foldsAgain(t, w, &jsonl)
	tl.seeds++
	tl.phantoms += phantoms
	tl.dups += st.Duplicates
	tl.modes[mode.String()]++
	tl.relayCrashes += s.Metrics().RelayCrash
	tl.writerCrashes += wr.Stats().Crashes
	for _, st := range in.Stats() {
		if st.Name == "ack-lost" {
			tl.acksLost += st.Fired
		}
	}
}

// checkRelayOrder checks the order promise of polling relays against the
// trace: with a single InOrder relay the first publishes of the rows come
// in id order, and with PerAggregate relays (any number of them) the first
// publishes of one aggregate do. A row that became a dead letter before
// its first publish left the order stream (its manual retry is published
// out of order) and is not judged. Re-publishes after a crash are
// duplicates of rows already published and are not judged either.
//
// It returns the ordering it checked ("" when the relays promise no common
// order: several in-order relays, or a mix).
func checkRelayOrder(relays []*Relay, rows []Row, events []sim.Event) (string, error) {
	if len(relays) == 0 {
		return "", nil
	}
	perAgg := relays[0].cfg.Ordering == PerAggregate
	for _, r := range relays {
		if (r.cfg.Ordering == PerAggregate) != perAgg {
			return "", nil // a mix promises neither order
		}
	}
	if !perAgg && len(relays) > 1 {
		return "", nil // several in-order relays keep only per-relay order
	}
	byMsg := map[sim.ID]Row{}
	for _, r := range rows {
		byMsg[r.Msg] = r
	}
	published, deadFirst := map[sim.ID]bool{}, map[sim.ID]bool{}
	last := map[string]uint64{} // highest row id first-published, per aggregate ("" for in-order)
	for _, e := range events {
		row, ok := byMsg[e.Msg]
		if !ok {
			return "", fmt.Errorf("event %v names no outbox row", e)
		}
		switch e.Kind {
		case sim.KindDeadLettered:
			if !published[e.Msg] {
				deadFirst[e.Msg] = true
			}
		case sim.KindRelayed:
			if published[e.Msg] || deadFirst[e.Msg] {
				continue
			}
			published[e.Msg] = true
			k := ""
			if perAgg {
				k = row.AggregateID
			}
			if row.ID < last[k] {
				return "", fmt.Errorf("t=%d: row %d (%s) first published after row %d: out of order (%s)", e.Tick, row.ID, row.AggregateID, last[k], relays[0].cfg.Ordering)
			}
			last[k] = row.ID
		}
	}
	return relays[0].cfg.Ordering.String(), nil
}
