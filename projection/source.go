package projection

import (
	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/sim"
)

// LogSource is a Source that reads a log topic: the latest record of a key
// is the last one in the key's partition. Latest costs O(records in that
// partition).
func LogSource(t *eventlog.Log) Source { return logSource{t} }

type logSource struct{ t *eventlog.Log }

func (s logSource) Latest(key string) (sim.ID, bool) {
	p := eventlog.PartitionFor(key, s.t.Partitions())
	var last sim.ID
	found := false
	var buf []eventlog.Record
	for off := s.t.Start(p); off < s.t.End(p); {
		recs, err := s.t.Fetch(p, off, 64, buf[:0])
		if err != nil || len(recs) == 0 {
			break
		}
		for _, r := range recs {
			if r.Message.Key == key {
				last, found = r.Message.ID, true
			}
		}
		off = recs[len(recs)-1].Offset + 1
		buf = recs
	}
	return last, found
}
