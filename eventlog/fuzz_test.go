package eventlog_test

import (
	"testing"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/sim"
)

// FuzzCheckHistory feeds arbitrary histories to the checker: it must never
// panic, and a history that only sends is clean unless its offsets repeat.
func FuzzCheckHistory(f *testing.F) {
	f.Add([]byte{0, 0, 1, 1, 0, 1, 2, 1, 0, 0})
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	f.Fuzz(func(t *testing.T, data []byte) {
		var h eventlog.History
		for i := 0; i+3 < len(data); i += 4 {
			p, off, v := int(data[i+1]%3), int64(data[i+2]%16), sim.ID(data[i+3]%20)
			if data[i]%2 == 0 {
				h.Send(sim.Tick(i), "p", p, off, v)
			} else {
				h.Poll(sim.Tick(i), "g", "m", eventlog.Read{Partition: p, Offset: off, Value: v, Epoch: uint32(data[i] % 3)})
			}
		}
		_ = h.String()
		for _, opts := range []eventlog.CheckOptions{{}, {PerGroup: true}} {
			rep := eventlog.CheckHistoryWith(&h, opts)
			_ = rep.Err()
			for _, a := range rep.Anomalies {
				if len(a.Offsets) == 0 || a.String() == "" {
					t.Fatalf("anomaly without offsets: %v", a)
				}
			}
		}
	})
}
