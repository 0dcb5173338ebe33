package watermillsim_test

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/message/router/middleware"

	"github.com/brokerlab/brokerlab/contrib/watermillsim"
	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
)

// billingConfig is the configuration of the README's example.
func billingConfig(seed uint64) watermillsim.HarnessConfig {
	return watermillsim.HarnessConfig{
		Config: watermillsim.Config{
			Kind: watermillsim.KindQueue, Seed: seed,
			Faults: []faults.Rule{
				{Name: "dup", Point: faults.BrokerDuplicate, Probability: 0.2},
				{Name: "late", Point: faults.BrokerDelay, Probability: 0.2, Param: 5},
			},
		},
		Topics: []string{"orders"},
	}
}

// TestBillingIsIdempotent is the README's example of the synctest
// harness, verbatim (TestReadmeExampleIsThisTest keeps them equal).
func TestBillingIsIdempotent(t *testing.T) {
	cfg := watermillsim.HarnessConfig{
		Config: watermillsim.Config{
			Kind: watermillsim.KindQueue, Seed: 42,
			Faults: []faults.Rule{
				{Name: "dup", Point: faults.BrokerDuplicate, Probability: 0.2},
				{Name: "late", Point: faults.BrokerDelay, Probability: 0.2, Param: 5},
			},
		},
		Topics: []string{"orders"}, // every topic, up front
	}
	watermillsim.Test(t, cfg, func(t *testing.T, h *watermillsim.Harness) {
		router, _ := message.NewRouter(message.RouterConfig{}, watermill.NopLogger{})
		router.AddMiddleware(h.Middleware( // checked: nothing that draws from math/rand
			middleware.Retry{MaxRetries: 3, InitialInterval: time.Millisecond},
			middleware.Recoverer,
		)...)
		billed := map[string]bool{}
		router.AddNoPublisherHandler("billing", "orders", h.Subscriber("billing"), func(msg *message.Message) error {
			if billed[msg.UUID] {
				return h.Broker().Skip(msg, "already billed") // a duplicate: apply nothing
			}
			billed[msg.UUID] = true
			return nil // the Ack records the effect
		})
		h.Run(router) // returns once its subscriptions are set up

		for i := range 10 {
			_ = h.Publisher().Publish("orders", h.NewMessage([]byte(strconv.Itoa(i))))
		}
		if err := h.RunUntil(h.Settled, 1000); err != nil {
			t.Fatal(err) // names the cap and what was still waiting
		}
		if err := h.Check(sim.ExactlyOnce("orders"), sim.NoLoss()); err != nil {
			t.Fatal(err)
		}
	})
}

// The same run without the Skip: ExactlyOnce names the messages the
// handler applied twice, and the seed gives the same ones every run.
func TestBillingWithoutSkipFailsTheSameWay(t *testing.T) {
	var first string
	for range 5 {
		watermillsim.Test(t, billingConfig(42), func(t *testing.T, h *watermillsim.Harness) {
			router, _ := message.NewRouter(message.RouterConfig{}, watermill.NopLogger{})
			router.AddNoPublisherHandler("billing", "orders", h.Subscriber("billing"), func(*message.Message) error { return nil })
			h.Run(router)
			for i := range 10 {
				_ = h.Publisher().Publish("orders", h.NewMessage([]byte(strconv.Itoa(i))))
			}
			if err := h.RunUntil(h.Settled, 1000); err != nil {
				t.Fatal(err)
			}
			err := h.Check(sim.ExactlyOnce("orders"))
			if err == nil || !strings.Contains(err.Error(), "effect applied 2 times") {
				t.Fatalf("ExactlyOnce: %v", err)
			}
			if first == "" {
				first = err.Error()
				t.Log(first)
				// The README shows these violations word for word.
				readme, rerr := os.ReadFile("README.md")
				if rerr != nil {
					t.Fatal(rerr)
				}
				if !strings.Contains(string(readme), "```\n"+first+"\n```") {
					t.Errorf("README.md does not show the violations as they are:\n%s", first)
				}
			} else if err.Error() != first {
				t.Errorf("another run, other violations:\n%v\nwant\n%v", err, first)
			}
		})
	}
}

// The README shows TestBillingIsIdempotent as it is in this file.
func TestReadmeExampleIsThisTest(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("readme_test.go")
	if err != nil {
		t.Fatal(err)
	}
	block := func(text []byte) string {
		s := string(text)
		i := strings.Index(s, "func TestBillingIsIdempotent")
		if i < 0 {
			return ""
		}
		j := strings.Index(s[i:], "\n}\n")
		return s[i : i+j+2]
	}
	if b := block(readme); b == "" || b != block(src) {
		t.Errorf("README.md's TestBillingIsIdempotent differs from readme_test.go's:\n%s", b)
	}
}
