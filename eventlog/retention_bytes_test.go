package eventlog_test

import (
	"testing"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/sim"
)

// Retention by bytes never deletes a partition's newest record, as Kafka
// never deletes the active segment: a record larger than RetentionBytes
// stays until a newer one arrives.
func TestRetentionBytesKeepsTheNewestRecord(t *testing.T) {
	r := newRig(t, 1, eventlog.Config{Partitions: 1, RetentionBytes: 10})
	for range 4 {
		if _, err := r.topic.Produce(r.env.NewMessage("kk", []byte("abcd"), sim.Headers{})); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.topic.Produce(r.env.NewMessage("kk", make([]byte, 50), sim.Headers{})); err != nil {
		t.Fatal(err)
	}
	_ = r.w.Run(2)
	pm := r.topic.Metrics().Partitions[0]
	if pm.LogStart != 4 || pm.End != 5 || pm.Records != 1 || pm.Bytes != 52 {
		t.Errorf("partition %+v, want only the newest record (offset 4, 52 bytes)", pm)
	}
	if _, err := r.topic.Produce(r.env.NewMessage("kk", []byte("abcd"), sim.Headers{})); err != nil {
		t.Fatal(err)
	}
	_ = r.w.Run(1)
	if pm := r.topic.Metrics().Partitions[0]; pm.LogStart != 5 || pm.Records != 1 || pm.Bytes != 6 {
		t.Errorf("partition %+v, want only offset 5", pm)
	}
}
