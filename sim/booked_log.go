package sim

// The typed forms of the consumer-group events of a log (committed,
// rebalanced, crashed), for a model on a hot path when the ledger is the
// trace's only listener. These kinds name no copy the ledger folds: Emit
// only notes the event's tick as the ledger's last and touches the stats
// of copy 0 (the event's Msg and Origin are zero), and the budget does
// not count them. Booking does exactly that and numbers the event,
// without building it.

// BookCommitted is the typed form of emitting a committed event (a group
// committed an offset) at tick. When the ledger is the trace's only
// listener it numbers the event and folds it exactly as Emit would,
// without building it, and reports true. Otherwise it does nothing and
// reports false, and the caller emits the event as usual. A budget does
// not count committed events, so it does not stop the typed form. O(1),
// and it does not allocate.
func (t *Trace) BookCommitted(tick Tick) bool { return t.bookUnfolded(tick) }

// BookRebalanced is the typed form of emitting a rebalanced event (a
// group's assignment changed) at tick, as BookCommitted is of a committed
// one. O(1), and it does not allocate.
func (t *Trace) BookRebalanced(tick Tick) bool { return t.bookUnfolded(tick) }

// BookCrashed is the typed form of emitting a crashed event that names no
// copy (a group member crashed) at tick, as BookCommitted is of a
// committed one. O(1), and it does not allocate.
func (t *Trace) BookCrashed(tick Tick) bool { return t.bookUnfolded(tick) }

// bookUnfolded numbers and folds an event that names no copy, of a kind
// the ledger's fold ignores and the budget does not count, at tick, when
// the ledger is the only listener, and reports whether it did.
func (t *Trace) bookUnfolded(tick Tick) bool {
	l := t.ledgerOnly()
	if l == nil {
		return false
	}
	t.seq++
	l.begin(tick, 0, 0) // all Emit does with such an event
	return true
}
