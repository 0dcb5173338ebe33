package scenario

// This file gives a runner (package lab) what it needs of a loaded file
// beyond the file's own fields: positions the decoder kept, the patterns
// Load derived, and the way this package reports a problem at a position.
// Everything here is a read of a loaded Scenario or a pure function; none
// of it runs anything.

// ErrorAt returns a positioned *Errors (wrapping ErrInvalid) with one
// problem of file at p (1:1 when p is not valid), its control characters
// escaped, as Load reports its own.
func ErrorAt(file string, p Pos, msg string) error {
	c := collector{file: file}
	c.add(p, msg)
	return c.result()
}

// ErrorList returns list as a *Errors of file (wrapping ErrInvalid), sorted
// by position, exact duplicates dropped and capped at MaxErrors as Load's
// own; nil when list is empty. It sorts list in place.
func ErrorList(file string, list []Error) error {
	c := collector{file: file, list: list}
	return c.result()
}

// FanOutPos returns the position of the topic's k-th fan_out entry (the
// zero Pos when the file did not write it).
func (t *Topic) FanOutPos(k int) Pos {
	if k < 0 || k >= len(t.fanOutPos) {
		return Pos{}
	}
	return t.fanOutPos[k]
}

// ConsumerGlob returns the match.consumer pattern of f widened by Load to
// the instances of the consumers it names (NAME#i, see InstanceName), or
// "" when f has no consumer pattern to widen.
func (f *Fault) ConsumerGlob() string { return f.consumerGlob }

// Literal reports whether s is a plain name rather than a glob pattern
// (it is not empty and has none of * ? [ \).
func Literal(s string) bool { return literal(s) }

// SuggestName returns the name of names closest to s when it is a likely
// typo of it, as Load's "did you mean" hints choose it, else "".
func SuggestName(s string, names []string) string { return suggestName(s, names) }

// BudgetCaps lists the caps on derived work every run has, in words:
// "1,000,000 copies, ... component steps".
func BudgetCaps() string {
	return thousands(MaxCopies) + " copies, " + thousands(MaxDeliveriesPerTick) + " deliveries per tick, " + thousands(MaxCascadePerRoot) + " copies per cascade, " + thousands(MaxSends) + " sends, " +
		thousands(MaxEvents) + " events, " + thousands(MaxSteps) + " component steps"
}
