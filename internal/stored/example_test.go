package stored_test

import (
	"fmt"

	"github.com/brokerlab/brokerlab/internal/stored"
	"github.com/brokerlab/brokerlab/sim"
)

// A model stores what it holds and gives the message back unchanged.
func Example() {
	var c stored.Cache
	h := sim.Headers{Type: "order.placed", Source: "shop"}
	a := c.Store(&sim.Message{ID: 1, Key: "order-1", Body: []byte("1"), Headers: h})
	b := c.Store(&sim.Message{ID: 2, Key: "order-2", Body: []byte("2"), Headers: h})
	fmt.Println(a.Message().Key, a.Headers().Type, b.Message().Headers.Source, a.Headers() == b.Headers())
	// Output: order-1 order.placed shop true
}
