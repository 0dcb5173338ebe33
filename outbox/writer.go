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

var modeNames = [...]string{"commit_then_publish", "publish_then_commit", "outbox"}

// String returns the mode's name: "commit_then_publish",
// "publish_then_commit" or "outbox", as scenario files write it.
func (m Mode) String() string {
	if int(m) < len(modeNames) {
		return modeNames[m]
	}
	return "unknown"
}

// MarshalText returns the mode's name as String does; a mode that is none
// of the three is an error wrapping ErrInvalidConfig.
func (m Mode) MarshalText() ([]byte, error) {
	if int(m) >= len(modeNames) {
		return nil, fmt.Errorf("%w: unknown writer mode %d", ErrInvalidConfig, m)
	}
	return []byte(modeNames[m]), nil
}

// UnmarshalText sets m from its name as String returns it; any other text
// is an error wrapping ErrInvalidConfig.
func (m *Mode) UnmarshalText(text []byte) error {
	for i, n := range modeNames {
		if n == string(text) {
			*m = Mode(i)
			return nil
		}
	}
	return fmt.Errorf("%w: unknown writer mode %q", ErrInvalidConfig, text)
}

// WriterConfig configures a Writer.
type WriterConfig struct {
	// Name names the writer (trace Actor, fault Consumer); default "writer".
	Name string
	// Service is the service whose database the writer writes. Required;
	// it must belong to the writer's world.
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

// Writer is a service front end that places orders, one database
// transaction each. It is passive, not a component: callers, or a
// Commander (the producer-phase component that places a workload of
// commands), call PlaceOrder.
//
// Its events are what the ledger folds: in Outbox mode the committed
// outbox row is "stored" at "outbox:"+service; in the dual-write modes the
// target broker's own event (sent, produced, published) records the
// publish, a crash between commit and publish is "lost" with
// sim.CauseDualWrite and no consumer, a publish the broker refused after
// the commit is "lost" with sim.CauseBrokerUnavailable, and a crash after
// the publish and before the commit is "phantom" for the published
// message.
type Writer struct {
	cfg   WriterConfig
	s     *Service
	stats WriterStats
}

// NewWriter returns a writer of the world w.
func NewWriter(w *sim.World, cfg WriterConfig) (*Writer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := cfg.Service.sameWorld(w, "a writer"); err != nil {
		return nil, err
	}
	if cfg.Name == "" {
		cfg.Name = "writer"
	}
	return &Writer{cfg: cfg, s: cfg.Service}, nil
}

// Name returns the writer's name.
func (w *Writer) Name() string { return w.cfg.Name }

// Service returns the service the writer writes.
func (w *Writer) Service() *Service { return w.s }

// Stats returns the writer's counters.
func (w *Writer) Stats() WriterStats { return w.stats }

// Mode returns the writer's mode.
func (w *Writer) Mode() Mode { return w.cfg.Mode }

func (w *Writer) check(p faults.Point, m *sim.Message) *faults.Firing {
	if !w.cfg.Faults.Has(p) {
		return nil
	}
	c := faults.Context{Where: w.s.where, Consumer: w.cfg.Name, Key: m.Key, Type: m.Headers.Type, Msg: m.ID}
	return w.cfg.Faults.CheckRef(p, &c)
}

// emit traces one event of the writer about m, with detail when a sink
// shows details.
func (w *Writer) emit(k sim.Kind, m *sim.Message, rule string, cause sim.Cause, detail func() string) {
	env := w.s.env
	ev := sim.Event{Kind: k, Where: w.s.where, Actor: w.cfg.Name, Msg: m.ID, Key: m.Key, Rule: rule, Cause: cause}
	if k == sim.KindLost {
		ev.Type = m.Headers.Type // the loss may be the only event that names the message
	}
	if detail != nil && env.Trace.Detailed() {
		ev.Detail = detail()
	}
	env.Emit(ev)
}

func (w *Writer) crash(m *sim.Message, f *faults.Firing, what string) {
	w.stats.Crashes++
	w.emit(sim.KindCrashed, m, f.Rule, "", func() string { return what })
}

// PlaceOrder places one order in the writer's mode. The order's message is
// allocated inside the transaction in every mode, so IDs line up across
// modes. It returns an error wrapping ErrCrashed when the writer crashed
// (the order may or may not be stored: see the mode) and one wrapping the
// publish error when the broker refused the event (in CommitThenPublish
// the order is stored then and its event lost).
func (w *Writer) PlaceOrder(customer string, amount int64) (Order, error) {
	w.stats.Attempts++
	s := w.s
	var o Order
	var m sim.Message
	beforeCommit := func() error {
		if w.cfg.Mode == PublishThenCommit {
			if err := w.publish(&m); err != nil {
				w.stats.Failed++
				return err
			}
		}
		if f := w.check(faults.WriterCrashAfterPublish, &m); f != nil {
			switch w.cfg.Mode {
			case PublishThenCommit:
				w.stats.Phantoms++
				w.crash(&m, f, "crashed after publish, before commit: phantom event")
				w.emit(sim.KindPhantom, &m, f.Rule, "", func() string {
					return "order " + strconv.FormatUint(o.ID, 10) + " was never committed"
				})
			default:
				w.crash(&m, f, "crashed before commit: nothing stored")
			}
			return fmt.Errorf("outbox: writer %s before commit: %w", w.cfg.Name, ErrCrashed)
		}
		return nil
	}
	note := func(*Row) string {
		return "order " + strconv.FormatUint(o.ID, 10) + " amount " + strconv.FormatInt(o.Amount, 10) + " (" + w.cfg.Mode.String() + ")"
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
	}, beforeCommit, w.cfg.Name, note)
	if err != nil {
		return Order{}, err
	}
	w.stats.Committed++
	if w.cfg.Mode != Outbox {
		w.emit(KindWritten, &m, "", "", func() string { return note(nil) })
	}
	if f := w.check(faults.WriterCrashAfterCommit, &m); f != nil {
		if w.cfg.Mode == CommitThenPublish {
			w.stats.Lost++
			w.crash(&m, f, "crashed after commit, before publish: event lost")
			w.emit(sim.KindLost, &m, f.Rule, sim.CauseDualWrite, nil)
		} else {
			w.crash(&m, f, "crashed after commit: nothing lost")
		}
		return o, fmt.Errorf("outbox: writer %s after commit: %w", w.cfg.Name, ErrCrashed)
	}
	if w.cfg.Mode == CommitThenPublish {
		if err := w.publish(&m); err != nil {
			w.stats.Lost++
			w.emit(sim.KindLost, &m, "", sim.CauseBrokerUnavailable, err.Error)
			return o, err
		}
	}
	return o, nil
}

func (w *Writer) publish(m *sim.Message) error {
	if f := w.check(faults.BrokerUnavailable, m); f != nil {
		err := unavailable(f)
		w.emit(sim.KindRejected, m, f.Rule, "", err.Error)
		return fmt.Errorf("outbox: writer %s: %w", w.cfg.Name, err)
	}
	if err := w.cfg.Target.Publish(*m); err != nil {
		return fmt.Errorf("outbox: writer %s: %w", w.cfg.Name, err)
	}
	w.stats.Published++
	return nil
}
