package outbox

import (
	"fmt"
	"strconv"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
)

// Mode is how a Writer combines its database write and its event.
type Mode uint8

// The writer modes.
const (
	// CommitThenPublish commits the order, then publishes the event
	// directly. A crash in between loses the event (sim.CauseDualWrite).
	CommitThenPublish Mode = iota
	// PublishThenCommit publishes the event, then commits the order. A
	// crash before the commit leaves a phantom event.
	PublishThenCommit
	// Outbox commits the order and its outbox row in one transaction; a
	// relay publishes the row later.
	Outbox
)

var modeNames = [...]string{"commit-then-publish", "publish-then-commit", "outbox"}

// String returns the mode's name.
func (m Mode) String() string {
	if int(m) < len(modeNames) {
		return modeNames[m]
	}
	return "unknown"
}

// WriterConfig configures a Writer.
type WriterConfig struct {
	// Name names the writer (trace Actor, fault Consumer); default "writer".
	Name string
	// Service is the service whose database the writer writes. Required.
	Service *Service
	// Mode selects the write path.
	Mode Mode
	// Target receives the events in the two dual-write modes (required
	// there, ignored in Outbox mode).
	Target sim.Publisher
	// Faults is consulted at two crash points per order, in every mode so
	// one plan hits the same orders in each: faults.WriterCrashAfterPublish
	// just before the commit (after the publish in PublishThenCommit; in the
	// other modes the transaction simply aborts) and
	// faults.WriterCrashAfterCommit just after it (before the publish in
	// CommitThenPublish). The dual-write modes also consult
	// faults.BrokerUnavailable before publishing.
	Faults *faults.Injector
	// Customers are the aggregate ids of the workload; default
	// kunde-A, kunde-B, kunde-C.
	Customers []string
	// PerTick is how many orders Step places; default 1.
	PerTick int
	// MaxAmount bounds the amounts, drawn in [1, MaxAmount]; default 100.
	MaxAmount int64
	// Limit stops Step after that many orders (0 = no limit).
	Limit int
}

// Validate reports a configuration error.
func (c WriterConfig) Validate() error {
	switch {
	case c.Service == nil:
		return fmt.Errorf("%w: a writer needs a service", ErrInvalidConfig)
	case c.Mode > Outbox:
		return fmt.Errorf("%w: unknown writer mode %d", ErrInvalidConfig, c.Mode)
	case c.Mode != Outbox && c.Target == nil:
		return fmt.Errorf("%w: mode %s needs a target", ErrInvalidConfig, c.Mode)
	case c.PerTick < 0 || c.MaxAmount < 0 || c.Limit < 0:
		return fmt.Errorf("%w: per-tick, max amount and limit must not be negative", ErrInvalidConfig)
	}
	for _, k := range c.Customers {
		if k == "" {
			return fmt.Errorf("%w: empty customer name", ErrInvalidConfig)
		}
	}
	return nil
}

// WriterStats are the counters of a writer.
type WriterStats struct {
	Attempts  int // orders tried
	Committed int // orders stored
	Published int // events published directly (dual-write modes)
	Crashes   int
	Lost      int // events lost: committed but never published
	Phantoms  int // events published for an order that never committed
	Failed    int // orders refused without a crash (broker down in PublishThenCommit)
}

// Writer is a service front end that places orders, a sim.Actor for
// PhaseProducer. Each order is one database transaction.
type Writer struct {
	cfg    WriterConfig
	s      *Service
	stream *sim.Stream
	stats  WriterStats
}

// NewWriter returns a writer.
func NewWriter(cfg WriterConfig) (*Writer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Name == "" {
		cfg.Name = "writer"
	}
	if len(cfg.Customers) == 0 {
		cfg.Customers = []string{"kunde-A", "kunde-B", "kunde-C"}
	}
	if cfg.PerTick == 0 {
		cfg.PerTick = 1
	}
	if cfg.MaxAmount == 0 {
		cfg.MaxAmount = 100
	}
	return &Writer{cfg: cfg, s: cfg.Service, stream: cfg.Service.env.Stream("outbox/" + cfg.Service.name + "/" + cfg.Name)}, nil
}

// Stats returns the writer's counters.
func (w *Writer) Stats() WriterStats { return w.stats }

// Mode returns the writer's mode.
func (w *Writer) Mode() Mode { return w.cfg.Mode }

// Step places PerTick orders for customers and amounts drawn from the
// writer's own stream.
func (w *Writer) Step(now sim.Tick) {
	for i := 0; i < w.cfg.PerTick; i++ {
		if w.cfg.Limit > 0 && w.stats.Attempts >= w.cfg.Limit {
			return
		}
		c := w.cfg.Customers[w.stream.IntN(len(w.cfg.Customers))]
		amount := 1 + int64(w.stream.IntN(int(w.cfg.MaxAmount)))
		_, _ = w.PlaceOrder(c, amount)
	}
}

func (w *Writer) check(p faults.Point, m *sim.Message) (faults.Firing, bool) {
	if !w.cfg.Faults.Has(p) {
		return faults.Firing{}, false
	}
	return w.cfg.Faults.Check(p, faults.Context{Where: w.s.where, Consumer: w.cfg.Name, Key: m.Key, Type: m.Headers.Type, Msg: m.ID})
}

func (w *Writer) crash(m *sim.Message, f faults.Firing, what string) {
	w.stats.Crashes++
	w.s.env.Emit(sim.Event{Kind: sim.KindCrashed, Where: w.s.where, Actor: w.cfg.Name, Msg: m.ID, Key: m.Key, Rule: f.Rule, Detail: what})
}

// PlaceOrder places one order in the writer's mode. The order's message is
// allocated before the transaction in every mode, so IDs line up across
// modes. It returns an error wrapping ErrCrashed when the writer crashed
// (the order may or may not be stored: see the mode) and one wrapping the
// publish error when the broker refused the event.
func (w *Writer) PlaceOrder(customer string, amount int64) (Order, error) {
	w.stats.Attempts++
	s := w.s
	var o Order
	var m sim.Message
	var crashed error
	beforeCommit := func() error {
		if w.cfg.Mode == PublishThenCommit {
			if err := w.publish(&m); err != nil {
				w.stats.Failed++
				return err
			}
		}
		if f, ok := w.check(faults.WriterCrashAfterPublish, &m); ok {
			switch w.cfg.Mode {
			case PublishThenCommit:
				w.stats.Phantoms++
				s.env.Ledger.MarkPhantom(m.ID)
				w.crash(&m, f, "crashed after publish, before commit: phantom event")
			default:
				w.crash(&m, f, "crashed before commit: nothing stored")
			}
			crashed = fmt.Errorf("outbox: writer %s before commit: %w", w.cfg.Name, ErrCrashed)
			return crashed
		}
		return nil
	}
	err := s.update(func(tx *Tx) error {
		var err error
		if o, err = tx.InsertOrder(customer, amount); err != nil {
			return err
		}
		e := orderEvent(o)
		if w.cfg.Mode == Outbox {
			r, err := tx.Append(e)
			if err != nil {
				return err
			}
			m = r.Message(s.name)
			return nil
		}
		m = s.env.NewMessage(e.AggregateID, e.Payload, sim.Headers{Type: e.EventType, Source: s.name})
		return nil
	}, beforeCommit)
	if err != nil {
		return Order{}, err
	}
	w.stats.Committed++
	if s.env.Trace.Enabled() {
		s.env.Emit(sim.Event{Kind: KindWritten, Where: s.where, Actor: w.cfg.Name, Msg: m.ID, Key: m.Key,
			Detail: "order " + strconv.FormatUint(o.ID, 10) + " amount " + strconv.FormatInt(o.Amount, 10) + " (" + w.cfg.Mode.String() + ")"})
	}
	if f, ok := w.check(faults.WriterCrashAfterCommit, &m); ok {
		if w.cfg.Mode == CommitThenPublish {
			w.stats.Lost++
			w.crash(&m, f, "crashed after commit, before publish: event lost")
			s.env.Ledger.Lost(m.ID, sim.NoConsumer, sim.CauseDualWrite, s.env.Now())
			s.env.Emit(sim.Event{Kind: sim.KindLost, Where: s.where, Actor: w.cfg.Name, Msg: m.ID, Key: m.Key, Detail: string(sim.CauseDualWrite)})
		} else {
			w.crash(&m, f, "crashed after commit: nothing lost")
		}
		return o, fmt.Errorf("outbox: writer %s after commit: %w", w.cfg.Name, ErrCrashed)
	}
	if w.cfg.Mode == CommitThenPublish {
		if err := w.publish(&m); err != nil {
			w.stats.Lost++
			s.env.Ledger.Lost(m.ID, sim.NoConsumer, sim.CauseBrokerUnavailable, s.env.Now())
			s.env.Emit(sim.Event{Kind: sim.KindLost, Where: s.where, Actor: w.cfg.Name, Msg: m.ID, Key: m.Key, Detail: string(sim.CauseBrokerUnavailable)})
			return o, err
		}
	}
	return o, nil
}

func (w *Writer) publish(m *sim.Message) error {
	if f, ok := w.check(faults.BrokerUnavailable, m); ok {
		err := unavailable(f)
		w.s.env.Emit(sim.Event{Kind: sim.KindRejected, Where: w.s.where, Actor: w.cfg.Name, Msg: m.ID, Key: m.Key, Rule: f.Rule, Detail: err.Error()})
		return fmt.Errorf("outbox: writer %s: %w", w.cfg.Name, err)
	}
	if err := w.cfg.Target.Publish(*m); err != nil {
		return fmt.Errorf("outbox: writer %s: %w", w.cfg.Name, err)
	}
	w.stats.Published++
	return nil
}
