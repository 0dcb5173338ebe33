package sim

import (
	"strconv"
	"strings"
)

// Dump returns the whole ledger as deterministic text: every record in ID
// order with its entries per consumer, every recorded loss, and every
// outcome. Two ledgers that folded the same events have the same Dump, which
// is how tests compare the ledger of a live run with the one folded from
// its JSON Lines trace. It costs O(copies x consumers).
func (l *Ledger) Dump() string {
	var b strings.Builder
	if l == nil {
		return ""
	}
	l.eachRecord(func(r *Record) {
		b.WriteString(r.ID.String())
		b.WriteString(" key=" + strconv.Quote(r.Key) + " type=" + strconv.Quote(r.Type) + " where=" + r.Where)
		b.WriteString(" created=" + strconv.FormatInt(int64(r.Created), 10) + " sends=" + strconv.Itoa(r.Sends))
		b.WriteString(" state=" + r.State.String() + "@" + strconv.FormatInt(int64(r.Changed), 10))
		if r.Origin != 0 {
			b.WriteString(" origin=" + r.Origin.String())
		}
		if r.Redriven != 0 {
			b.WriteString(" redriven=" + r.Redriven.String())
		}
		if r.Phantom {
			b.WriteString(" phantom")
		}
		b.WriteByte('\n')
		for _, c := range l.consumers {
			e, ok := c.entries.get(uint64(r.ID))
			if !ok || e == (delivery{}) {
				continue
			}
			d := l.exportDelivery(r.ID, c.ref, &e)
			b.WriteString("  " + c.name + ": delivered=" + strconv.Itoa(int(d.Delivered)) + " applied=" + strconv.Itoa(int(d.Applied)) +
				" skipped=" + strconv.Itoa(int(d.Skipped)) + " expected=" + strconv.FormatBool(d.Expected) + " acked=" + strconv.FormatBool(d.Acked) +
				" handled=" + strconv.FormatBool(d.Handled) + " missed=" + strconv.FormatBool(d.Missed) + " lost=" + strconv.Quote(string(d.Lost)) +
				" first=" + strconv.FormatInt(int64(d.FirstApplied), 10) + " seen=" + strconv.FormatInt(int64(d.LastSeen), 10) + "\n")
		}
	})
	for x := range l.allLosses() {
		b.WriteString("loss " + x.ID.String() + " consumer=" + strconv.Quote(x.Consumer) + " cause=" + strconv.Quote(string(x.Cause)) +
			" t=" + strconv.FormatInt(int64(x.Tick), 10) + "\n")
	}
	for _, o := range l.Outcomes("") {
		b.WriteString("outcome " + o.Origin.String() + " " + o.Consumer + " " + o.Verdict.String() + " effects=" + strconv.Itoa(o.Effects) +
			" deliveries=" + strconv.Itoa(o.Deliveries) + " copies=" + strconv.Itoa(o.Copies) + "\n")
	}
	return b.String()
}
