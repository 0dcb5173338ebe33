package sim

import "sort"

// StatsByScan is Ledger.Stats as a scan over every record, outcome and
// loss: the reference the kept summary is tested against.
var StatsByScan = (*Ledger).statsByScan

// statsByScan computes Stats by a pass over every record, outcome and loss.
func (l *Ledger) statsByScan() Stats {
	var s Stats
	if l == nil {
		return s
	}
	l.eachRecord(func(r *Record) {
		s.Messages++
		if r.Origin == 0 {
			s.Origins++
		}
		switch r.State {
		case StatePending:
			s.Pending++
		case StateDone:
			s.Done++
		case StateDeadLettered:
			s.DeadLettered++
		case StateExpired:
			s.Expired++
		case StatePurged:
			s.Purged++
		}
		if l.recFlags(r.ID)&recRedriven != 0 {
			s.Redriven++
		}
		if r.Phantom {
			s.Phantoms++
		}
	})
	by := map[Cause]int{}
	at := map[string]int{}
	for i, name := range l.Consumers() {
		at[name] = i
		s.Consumers = append(s.Consumers, ConsumerStats{Consumer: name})
	}
	l.eachOutcome(func(o *Outcome) {
		if i, ok := at[o.Consumer]; ok {
			c := &s.Consumers[i]
			c.Applied += o.Effects
			c.Absorbed += o.Skipped
			if o.Effects > 1 {
				c.Repeated += o.Effects - 1
			}
			if o.Effects > c.Worst {
				c.Worst = o.Effects
			}
			if o.Deliveries > 1 {
				c.Repeats += o.Deliveries - 1
			}
		}
		s.Delivered += o.Deliveries
		s.Applied += o.Effects
		s.Absorbed += o.Skipped
		if o.Deliveries > 1 {
			s.Duplicates += o.Deliveries - 1
		}
		if o.Effects > 1 {
			s.DuplicateEffects += o.Effects - 1
		}
		switch o.Verdict {
		case VerdictMissed:
			s.Missed++
		case VerdictLost:
			s.Lost++
			by[o.Cause]++
		}
	})
	for x := range l.allLosses() {
		if l.standsBeforeConsumers(x) {
			s.Lost++
			by[x.Cause]++
		}
	}
	for c, n := range by {
		s.LostBy = append(s.LostBy, CauseCount{c, n})
	}
	sort.Slice(s.LostBy, func(i, j int) bool { return s.LostBy[i].Cause < s.LostBy[j].Cause })
	return s
}
