package queue

import (
	"bytes"
	"errors"
	"testing"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
)

var sentinels = []error{ErrInvalidConfig, ErrInvalidArgument, ErrUnavailable, ErrUnknownReceipt, ErrStaleReceipt, ErrNotInFlight, ErrNoDeadLetter, ErrNotMade, ErrOverLimit}

func isSentinel(err error) bool {
	for _, s := range sentinels {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// FuzzQueueAPI drives a random sequence of public operations, valid and
// invalid, from the fuzz bytes. Misuse must come back as an error wrapping
// a package sentinel, never as a panic, and the queue's bookkeeping must
// stay consistent after every step.
func FuzzQueueAPI(f *testing.F) {
	f.Add([]byte{0, 3, 0, 2, 0, 0, 1, 1, 0, 2, 0, 6, 5, 1, 3, 2, 0})
	f.Add([]byte{1, 2, 5, 3, 2, 0, 1, 0, 1, 0, 2, 1, 4, 3, 4, 0, 5, 0, 6, 9, 8, 2, 7})
	f.Add([]byte{2, 0xff, 0, 0, 0, 0x80, 1, 0x80, 3, 0, 0x80, 4, 0, 0xff, 9, 1, 2})
	f.Add([]byte{3, 1, 1, 3, 0, 0, 0, 0, 0, 1, 0, 1, 2, 0, 2, 0, 6, 2, 1, 3, 2, 1, 2, 8, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		next := func() byte {
			if len(data) == 0 {
				return 0
			}
			b := data[0]
			data = data[1:]
			return b
		}
		w, err := sim.New(sim.Config{Seed: uint64(next())})
		if err != nil {
			t.Fatal(err)
		}
		env := w.Env()
		var trace bytes.Buffer
		w.Trace().Attach(sim.NewJSONWriter(&trace))
		in, err := faults.New(w, faults.Config{Plan: faults.Plan{Rules: []faults.Rule{
			{Name: "dup", Point: faults.BrokerDuplicate, Probability: 0.2},
			{Name: "reorder", Point: faults.BrokerReorder, Probability: 0.2},
			{Name: "down", Point: faults.BrokerUnavailable, Probability: 0.1},
			{Name: "lost", Point: faults.BrokerAckLost, Probability: 0.1},
			{Name: "late", Point: faults.BrokerDelay, Probability: 0.1, Param: 3},
		}}})
		if err != nil {
			t.Fatal(err)
		}
		flags := next()
		dlq, err := New(w, Config{Name: "dlq", FIFO: flags&8 != 0})
		if err != nil {
			t.Fatal(err)
		}
		cfg := Config{Name: "q", FIFO: flags&1 != 0, VisibilityTimeout: sim.Tick(int8(next())),
			Retention: sim.Tick(int8(next())), MaxReceiveCount: int(int8(next())), Strict: flags&16 != 0}
		if flags&32 != 0 {
			cfg.MaxInFlight = int(int8(next()))
			cfg.Delay = sim.Tick(int8(next()))
		}
		if flags&2 != 0 {
			cfg.DeadLetter = dlq
		}
		if flags&4 != 0 {
			cfg.Faults = in
		}
		if cfg.FIFO {
			cfg.DedupWindow = sim.Tick(int8(next()))
			cfg.ContentBasedDedup = flags&64 != 0
		}
		q, err := New(w, cfg)
		if err != nil {
			if !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("New: %v", err)
			}
			return
		}
		var receipts []Receipt
		pick := func() Receipt {
			b := next()
			if len(receipts) == 0 || b == 0xff {
				return Receipt{q: q, slot: uint32(next()), gen: uint32(next())}
			}
			return receipts[int(b)%len(receipts)]
		}
		check := func(op string, err error) {
			if err != nil && !isSentinel(err) {
				t.Fatalf("%s: error without a sentinel: %v", op, err)
			}
		}
		for steps := 0; len(data) > 0 && steps < 400; steps++ {
			switch next() % 12 {
			case 0, 10:
				k := next()
				m := sim.Message{Key: string(rune('a' + k%4))}
				if k&0x80 != 0 {
					m = env.NewMessage(m.Key, nil, sim.Headers{})
				}
				check("send", q.Send(m, sim.Tick(int8(next()))))
			case 1:
				var ds []Delivery
				var err error
				if b := next(); b&1 != 0 {
					ds, err = q.ReceiveWith("w", ReceiveOptions{Max: int(int8(next())), VisibilityTimeout: sim.Tick(int8(next()))})
				} else {
					ds, err = q.Receive("w", int(int8(b)>>1))
				}
				check("receive", err)
				for _, d := range ds {
					receipts = append(receipts, d.Receipt)
				}
			case 2:
				check("ack", q.Ack(pick()))
			case 3:
				check("nack", q.Nack(pick(), sim.Tick(int8(next()))))
			case 4:
				check("change visibility", q.ChangeVisibility(pick(), sim.Tick(int8(next()))))
			case 5:
				check("dead-letter", q.DeadLetter(pick(), "fuzz"))
			case 6:
				for n := int(next() % 16); n >= 0; n-- {
					w.Tick()
				}
			case 7:
				if next()%4 == 0 {
					q.Purge()
				}
			case 8:
				_, err := dlq.Redrive(int(int8(next())))
				check("redrive", err)
			case 9:
				ds, err := dlq.Receive("d", int(int8(next())))
				check("dlq receive", err)
				for _, d := range ds {
					check("dlq ack", dlq.Ack(d.Receipt))
					check("dlq double ack", func() error {
						if err := dlq.Ack(d.Receipt); err == nil {
							return errors.New("double ack accepted")
						} else {
							return err
						}
					}())
				}
			case 11:
				_ = q.Metrics()
				check("redrive to", func() error { _, err := dlq.RedriveTo(q, 1+int(next()%3)); return err }())
			}
			for _, x := range []*Queue{q, dlq} {
				if err := checkInternals(x); err != nil {
					t.Fatalf("%s after step %d: %v", x.Name(), steps, err)
				}
			}
		}
		if err := w.Trace().Close(); err != nil {
			t.Fatal(err)
		}
		folded := sim.NewLedger()
		if err := sim.ReadJSONL(&trace, folded); err != nil {
			t.Fatal(err)
		}
		if a, b := w.Ledger().Dump(), folded.Dump(); a != b {
			t.Fatalf("the ledger folded from the JSON Lines trace differs:\nlive:\n%s\nfolded:\n%s", a, b)
		}
	})
}
