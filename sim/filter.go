package sim

// Filter returns the events for which keep returns true, in order, in a new
// slice.
func Filter(events []Event, keep func(e *Event) bool) []Event {
	var out []Event
	for i := range events {
		if keep(&events[i]) {
			out = append(out, events[i])
		}
	}
	return out
}

// ByCorr returns a keep function for Filter and FilterSink that selects the
// events carrying the correlation ID corr, i.e. every hop of one cascade.
func ByCorr(corr string) func(e *Event) bool {
	return func(e *Event) bool { return e.Corr == corr }
}

// FilterSink is a Sink that forwards to Next only the events Keep accepts.
type FilterSink struct {
	Keep func(e *Event) bool
	Next Sink
}

// Emit forwards e to Next when Keep accepts it.
func (f FilterSink) Emit(e *Event) {
	if f.Next != nil && (f.Keep == nil || f.Keep(e)) {
		f.Next.Emit(e)
	}
}
