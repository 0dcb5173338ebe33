package scenario_test

import (
	"bytes"
	"fmt"

	"github.com/brokerlab/brokerlab/scenario"
)

// A variant is the file with a few values set at dotted paths; list
// entries are chosen by name.
func ExampleScenario_Variant() {
	s, err := scenario.Load("orders.yaml", []byte(`title: Orders
run: {ticks: 10}
topology:
  queues: [{name: orders}]
actors:
  producers: [{name: shop, to: {queue: orders}, count: 3}]
  consumers: [{name: billing, queue: orders}]
view: {tab: orders}
variants:
  - name: idempotent
    set: {consumers.billing.idempotency: message_id}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	v, err := s.Variant("idempotent")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(s.View.Tab, s.Actors.Consumers[0].Idempotency, v.Actors.Consumers[0].Idempotency)
	_, err = s.Variant("fast")
	fmt.Println(err)
	// Output:
	// orders none message_id
	// scenario: no such variant "fast"; variants: idempotent
}

// JSONSchema is what `brokerlab schema` prints, for editors.
func ExampleJSONSchema() {
	schema := scenario.JSONSchema()
	fmt.Println(bytes.Contains(schema, []byte(`"$schema": "https://json-schema.org/draft/2020-12/schema"`)))
	// Output:
	// true
}
