package outbox

import (
	"testing"

	"github.com/brokerlab/brokerlab/sim"
)

// FuzzDecodeOrderPlaced feeds arbitrary payloads to the decoder and checks
// that every order the service encodes decodes to itself.
func FuzzDecodeOrderPlaced(f *testing.F) {
	f.Add([]byte(`{"order_id":1,"customer":"kunde-A","amount":100}`), "kunde-\"Ä\"", int64(7))
	f.Add([]byte(`{"order_id":-1}`), "", int64(-5))
	f.Add([]byte(`nul`), "x\x00y", int64(0))
	f.Fuzz(func(t *testing.T, body []byte, customer string, amount int64) {
		_, _ = DecodeOrderPlaced(body)
		o := Order{ID: 42, Customer: customer, Amount: amount, Created: sim.Tick(3)}
		ev, err := DecodeOrderPlaced(encodeOrderPlaced(o))
		if err != nil {
			t.Fatalf("encoded order does not decode: %v", err)
		}
		if ev.OrderID != 42 || ev.Amount != amount {
			t.Fatalf("round trip %+v", ev)
		}
	})
}
