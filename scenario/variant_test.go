package scenario

import (
	"errors"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/sim"
)

const variantBase = `title: Variants
run: {ticks: 20}
topology:
  queues:
    - {name: orders, visibility_timeout: 5}
  topics:
    - name: events
actors:
  producers:
    - {name: shop, to: {queue: orders}, count: 4}
  consumers:
    - name: billing
      queue: orders
      batch: 2
view: {tab: orders}
variants:
  - name: idempotent
    description: The consumer keeps the IDs it processed.
    set:
      consumers.billing.idempotency: message_id
      topology.queues.orders.visibility_timeout: 9
  - name: retrying
    set:
      consumers.billing.retry.policy: fixed
      consumers.billing.retry.base: 2
      consumers.billing.batch:
      run.ticks: 30
`

func TestViewAndVariants(t *testing.T) {
	s, err := Load("v.yaml", []byte(variantBase))
	if err != nil {
		t.Fatal(err)
	}
	if s.View.Tab != "orders" {
		t.Errorf("View.Tab = %q", s.View.Tab)
	}
	if len(s.Variants) != 2 || s.Variants[0].Name != "idempotent" || s.Variants[0].Description == "" || s.Variants[1].Name != "retrying" {
		t.Fatalf("Variants = %+v", s.Variants)
	}
	for range 2 { // building a variant leaves s as it was
		v, err := s.Variant("idempotent")
		if err != nil {
			t.Fatal(err)
		}
		if c := v.Actors.Consumers[0]; c.Idempotency != sim.KeyByMessageID || c.Batch != 2 {
			t.Errorf("idempotent consumer = %+v", c)
		}
		if q := v.Topology.Queues[0]; q.VisibilityTimeout != 9 {
			t.Errorf("idempotent visibility_timeout = %d", q.VisibilityTimeout)
		}
		if len(v.Variants) != 2 || v.View.Tab != "orders" {
			t.Errorf("variant lost the variants or the view: %+v %+v", v.Variants, v.View)
		}
		r, err := s.Variant("retrying")
		if err != nil {
			t.Fatal(err)
		}
		c := r.Actors.Consumers[0]
		if c.Retry.Policy != queue.RetryFixed || c.Retry.Base != 2 || c.Batch != 1 || c.Idempotency != sim.NotIdempotent || r.Run.Ticks != 30 {
			t.Errorf("retrying = %+v, run %+v", c, r.Run)
		}
		if s.Actors.Consumers[0].Idempotency != sim.NotIdempotent || s.Topology.Queues[0].VisibilityTimeout != 5 {
			t.Errorf("the base changed: %+v", s.Actors.Consumers[0])
		}
	}
	_, err = s.Variant("nope")
	if !errors.Is(err, ErrNoVariant) || !strings.Contains(err.Error(), "variants: idempotent, retrying") {
		t.Errorf("Variant(nope) = %v", err)
	}
	plain, err := Load("p.yaml", []byte(strings.SplitN(variantBase, "view:", 2)[0]))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plain.Variant("x"); !errors.Is(err, ErrNoVariant) {
		t.Errorf("Variant on a file without variants = %v", err)
	}
}

// TestVariantErrors: a bad variant fails Load, at the set entry's
// position, naming the variant.
func TestVariantErrors(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"unknown field", "      consumers.billing.idempotent: message_id\n",
			`v.yaml:19:25: variant "bad": unknown field "idempotent" in consumer (did you mean "idempotency"?)`},
		{"unknown entry", "      consumers.biling.batch: 3\n",
			`v.yaml:19:17: variant "bad": set path "consumers.biling.batch": consumers has no entry named "biling" (did you mean "billing"?); names: billing`},
		{"bad value", "      queues.orders.visibility_timeout: -1\n",
			`v.yaml:19:41: variant "bad": visibility_timeout must be between 1 and 1000000 (ticks are capped at 1000000), got -1`},
		{"bad reference", "      actors.consumers.billing.queue: order\n",
			`v.yaml:19:39: variant "bad": consumer "billing" reads queue "order", which is not defined (did you mean "orders"?); queues: orders`},
		{"into a value", "      run.ticks.max: 3\n",
			`v.yaml:19:17: variant "bad": set path "run.ticks.max": run.ticks is the integer 20, so it has no "max" to set`},
		{"empty part", "      run..ticks: 3\n", `v.yaml:19:7: set path "run..ticks" has an empty part`},
		{"variants", "      variants.x: 3\n", `v.yaml:19:7: set path "variants.x" names variants`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.SplitN(variantBase, "variants:", 2)[0] + "variants:\n  - name: bad\n    set:\n" + tc.yaml
			_, err := Load("v.yaml", []byte(src))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got:\n%v\nwant a line starting:\n%s", err, tc.want)
			}
		})
	}
	for _, tc := range []struct{ name, yaml, want string }{
		{"view tab", "view: {tab: ordres}\n", `v.yaml:1:13: view tab names queue, topic, log or service "ordres", which is not defined (did you mean "orders"?); queues, topics, logs and services: orders, events`},
		{"view field", "view: {tap: orders}\n", `unknown field "tap" in view (did you mean "tab"?); allowed: tab`},
		{"twice", "variants:\n  - {name: a, set: {run.ticks: 3}}\n  - {name: a, set: {run.ticks: 4}}\n", `v.yaml:3:12: variant "a" is defined twice (first at line 2)`},
		{"no set", "variants:\n  - {name: a}\n", `variant needs the field "set"`},
		{"empty set", "variants:\n  - {name: a, set: {}}\n", `set of variant "a" is empty`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := tc.yaml + strings.SplitN(variantBase, "view:", 2)[0]
			_, err := Load("v.yaml", []byte(src))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got:\n%v\nwant:\n%s", err, tc.want)
			}
		})
	}
}
