package projection

import (
	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/sim"
)

// LogSource is a Source that reads a log topic: the latest record of a key
// is the last one still in the key's partition (eventlog.PartitionFor over
// the topic's current partition count), and a key none of whose records
// remains there has none.
//
// The source keeps an index per partition, from each key to its latest
// record read so far, and reads only the records appended since its last
// call, so a run of calls costs O(records appended) in all, plus, per call,
// a map lookup and a fetch of the indexed record to check that it is still
// in the log: O(1) on a partition compaction left without gaps, O(log n)
// on one with gaps. That check is all it takes to follow deletions: the
// log removes records only from a partition's head (retention) and by
// compaction, which keeps each key's latest record unless it is a
// tombstone whose time is up, and then removes every record of that key
// with it; so once a key's latest record is gone, none of that key
// remains, and while it is there it is the latest. A log whose end went
// back (no eventlog does so today) is read again from its start.
//
// Memory follows the distinct keys of the records in the partitions, not
// their history: the index of a partition drops the keys none of whose
// records remains whenever it has grown to twice the keys it kept at its
// last sweep (plus 64), or the partition's start has moved past as many
// offsets as the index has keys, so it holds less than twice the keys
// its partition held at its last sweep, plus 64; a sweep that drops more
// than half the keys moves the rest to a map sized for them, so the room
// a burst of keys once took is given back. An index is swept only when
// its partition is asked about: until then it keeps the keys it last
// read. A sweep costs a check per key, paid for by the records appended
// or deleted since the last one. The source is not safe for concurrent use: give each world its
// own, as each projection has.
func LogSource(t *eventlog.Log) Source { return newLogSource(t) }

// topic is what a logSource reads of a log: *eventlog.Log, or a wrapper
// that counts what is read.
type topic interface {
	Partitions() int
	Start(p int) int64
	End(p int) int64
	Fetch(p int, off int64, max int, dst []eventlog.Record) ([]eventlog.Record, error)
}

// logSource is the Source LogSource returns. parts has an index per
// partition the source has been asked about (and those before it); buf
// is the fetch buffer every read reuses, cleared after each read so it
// holds on to no record the log deleted.
type logSource struct {
	t     topic
	parts []keyIndex
	buf   []eventlog.Record
}

// keyIndex is the index of one partition: latest maps every key read to
// its latest record read, which may be gone from the log since (see
// logSource.holds); next is the first offset not read yet. kept and
// start are the number of keys left and the partition's start at the last
// sweep (see sweepDue).
type keyIndex struct {
	latest map[string]position
	next   int64
	kept   int
	start  int64
}

// position is a key's latest record read: its offset and message ID.
type position struct {
	off int64
	id  sim.ID
}

// fetchBatch is how many records a read of new records fetches at once.
const fetchBatch = 64

func newLogSource(t topic) *logSource { return &logSource{t: t} }

// Latest returns the ID of key's latest record still in its partition.
// Amortised O(1) plus a fetch of one record (see LogSource).
func (s *logSource) Latest(key string) (sim.ID, bool) {
	p := eventlog.PartitionFor(key, s.t.Partitions())
	if p < 0 {
		return 0, false
	}
	ix := s.catchUp(p)
	at, ok := ix.latest[key]
	if !ok {
		return 0, false
	}
	if !s.holds(p, at) {
		delete(ix.latest, key) // gone for good: no record of key remains
		return 0, false
	}
	return at.id, true
}

// catchUp reads into partition p's index the records appended since the
// last read, sweeps the index when it is due, and returns it. O(records
// read), plus the sweep.
func (s *logSource) catchUp(p int) *keyIndex {
	for len(s.parts) <= p {
		s.parts = append(s.parts, keyIndex{})
	}
	ix := &s.parts[p]
	start, end := s.t.Start(p), s.t.End(p)
	if end < ix.next {
		*ix = keyIndex{} // the log went back: read it again from its start
	}
	// Records below start are gone, read or not: an entry of a key whose
	// latest record was among them is gone too (holds).
	for off := max(ix.next, start); off < end; {
		recs, err := s.t.Fetch(p, off, fetchBatch, s.buf[:0])
		if err != nil || len(recs) == 0 {
			break // compaction left nothing more up to end
		}
		if ix.latest == nil {
			ix.latest = map[string]position{}
		}
		for i := range recs {
			r := &recs[i]
			ix.latest[r.Message.Key] = position{r.Offset, r.Message.ID}
		}
		off = recs[len(recs)-1].Offset + 1
		clear(recs)
		s.buf = recs[:0]
	}
	ix.next = max(ix.next, end)
	if ix.sweepDue(start) {
		s.sweep(p, ix, start)
	}
	return ix
}

// sweepDue reports whether the index should drop its keys none of whose
// records remains: it has doubled since the last sweep, or the partition's
// start has moved past as many offsets as it has keys. Either way the
// sweep's cost, a check per key, is paid for by as many records appended
// or deleted.
func (ix *keyIndex) sweepDue(start int64) bool {
	n := len(ix.latest)
	return n >= 2*ix.kept+64 || n > 0 && start-ix.start >= int64(n)
}

// sweep drops from ix, the index of partition p whose start is start, the
// keys whose latest record is gone, and moves the rest to a smaller map
// when it dropped more than half. O(keys) checks.
func (s *logSource) sweep(p int, ix *keyIndex, start int64) {
	before := len(ix.latest)
	for key, at := range ix.latest {
		if !s.holds(p, at) {
			delete(ix.latest, key)
		}
	}
	if n := len(ix.latest); n < before/2 {
		// A map keeps the room it once needed: the keys left move to one
		// sized for them, so memory follows the keys now, not their peak.
		kept := make(map[string]position, n)
		for key, at := range ix.latest {
			kept[key] = at
		}
		ix.latest = kept
	}
	ix.kept, ix.start = len(ix.latest), start
}

// holds reports whether the record at is still in partition p. O(1), or
// O(log n) when compaction left gaps in the partition.
func (s *logSource) holds(p int, at position) bool {
	if at.off < s.t.Start(p) {
		return false // deleted from the head
	}
	recs, err := s.t.Fetch(p, at.off, 1, s.buf[:0])
	ok := err == nil && len(recs) == 1 && recs[0].Offset == at.off && recs[0].Message.ID == at.id
	clear(recs)
	s.buf = recs[:0]
	return ok
}
