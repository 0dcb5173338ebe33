package pubsub

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
)

var update = flag.Bool("update", false, "rewrite golden files")

// goldenRun plays a small scenario touching every feature: wildcards, an
// offline window, a full drop-oldest buffer, a cascade muted halfway by a
// supervisor subscriber's emits, a sync loop with source tracking, and
// seeded probabilistic faults. Its trace must be byte-identical on every run.
func goldenRun(t *testing.T) []byte {
	var out bytes.Buffer
	r := newRig(t, 42, 3,
		faults.Rule{Name: "flaky-net", Point: faults.BrokerDuplicate, Probability: 0.3, Match: faults.Match{Consumer: "audit"}},
		faults.Rule{Name: "lag", Point: faults.BrokerDelay, Probability: 0.5, Param: 2, Match: faults.Match{Consumer: "billing"}},
		faults.Rule{Name: "nap", Point: faults.SubscriberOffline, From: 4, Until: 6, Match: faults.Match{Consumer: "audit"}},
	)
	r.w.Trace().Attach(sim.NewTextWriter(&out))
	r.sub(SubscriberConfig{Name: "audit", Pattern: ">"})
	r.sub(SubscriberConfig{Name: "billing", Pattern: "orders.*", Handler: HandlerFunc(func(ctx *Context, d *sim.Delivery) error {
		d.Apply("billed")
		if ctx.Depth() > 0 {
			return nil
		}
		_, err := ctx.Publish("invoices.created", d.Msg.Key, nil)
		return err
	})})
	r.sub(SubscriberConfig{Name: "ledger", Pattern: "invoices.>", Buffer: 2, Policy: DropOldest, Rate: 1, Supervisor: true,
		Emits: []Emit{{Subject: "orders.updated"}}})
	if _, err := NewSync(r.b, SyncConfig{Subject: "customer", Systems: [2]string{"crm", "shop"}, SourceTracking: true}); err != nil {
		t.Fatal(err)
	}
	r.producer(func(now sim.Tick) {
		if now > 6 {
			return
		}
		r.mustPublish("orders.placed", "order-"+string(rune('0'+now)))
		if now == 2 {
			for range 3 {
				r.mustPublish("invoices.manual", "adhoc")
			}
		}
	})
	r.w.At(3, "crm edits a customer", func() {
		m := r.env.NewMessage("customer-1", nil, sim.Headers{Type: "customer.crm", Source: "crm"})
		if err := r.b.Publish(m); err != nil {
			t.Error(err)
		}
	})
	r.run(12)
	r.refold()
	return out.Bytes()
}

func TestGoldenTrace(t *testing.T) {
	got := goldenRun(t)
	if again := goldenRun(t); !bytes.Equal(got, again) {
		t.Fatal("two runs with the same seed produced different traces")
	}
	path := filepath.Join("testdata", "trace.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("trace differs from %s (run with -update after checking the diff):\n%s", path, got)
	}
}
