package eventlog

import (
	"errors"
	"fmt"
	"slices"

	"github.com/brokerlab/brokerlab/sim"
)

// Poll fetches up to max records from the member's partitions, starting at
// a rotating partition, and returns them; they are outstanding from now
// on. It returns nothing while the member is not active (not started,
// stalled, crashed, left) or busy (its handler is working on a slow
// record; the batch it is working through stays as it is, see Fetch), and
// when a fault point fires:
// member.leave (the member leaves), broker.unavailable (the poll fails,
// traced as rejected) or, with CommitBefore, consumer.crash_before_commit
// (the member crashes before its commit). Each returned record is traced
// as "polled", one delivery for the ledger. Polling keeps the member's
// session alive. The slice is the member's own and is reused by the next
// Poll. Every owned partition without a position gets one at the poll,
// as Kafka resets them all before fetching, whatever max allows. O(partitions
// owned + max x log n).
//
// With CommitBefore a refused commit returns nothing: the records fetched
// are put back (read again at the next poll) and are not processed. Fetch
// returns that error; Poll drops it.
func (m *Member) Poll(max int) []Record {
	recs, _ := m.Fetch(max)
	return recs
}

// Fetch is Poll returning the error of a refused commit under
// CommitBefore, as Kafka's commitSync throws: a poll-commit-process loop
// must not process a batch whose commit failed. The batch is put back,
// so the records are read again; nothing was committed past them.
//
// A handler member busy with a slow record refuses the poll with an error
// wrapping ErrBusy and changes nothing: the batch its handler is working
// through stays, and the member handles the rest of it when the record is
// done. The refused poll does not keep the member's session alive.
func (m *Member) Fetch(max int) ([]Record, error) {
	n, err := m.poll(max)
	if n == 0 {
		if m.x != nil {
			m.x.batch = m.x.batch[:0]
		}
		return nil, err
	}
	x := m.bufs()
	x.batch = x.batch[:0]
	for i := range m.got {
		x.batch = append(x.batch, m.got[i].record())
	}
	// The caller has the records now: holding the log's entries too would
	// only make retention and compaction copy them (Log.detach).
	m.handBack()
	return x.batch, nil
}

// poll is Fetch without the Records: it leaves the batch in m.got and
// returns its length. A handler member's Step polls with it, so a record
// is never copied out of the log: a 32-byte held record points at it.
// While the member is busy it leaves m.got alone (the handler is working
// through it) and returns an error wrapping ErrBusy.
func (m *Member) poll(max int) (int, error) {
	if m.busy {
		r := &m.got[m.next]
		return 0, fmt.Errorf("%w: %q in group %s handles partition %d offset %d until %s", ErrBusy, m.cfg.Name, m.g.cfg.Name, r.p, r.off, m.busyUntil)
	}
	letGo(m.got) // lets go of the last batch's entries
	m.got, m.next = m.got[:0], 0
	if m.state != stateActive {
		return 0, nil
	}
	g := m.g
	now := g.env.Now()
	if m.expired || !m.in {
		m.join("joined")
	}
	m.lastPoll = now
	if f := m.fault(m.g.t.fx.leave, nil); f != nil {
		rule := f.Rule
		ev := sim.Event{Kind: sim.KindAction, Where: g.t.where, Actor: m.cfg.Name, Consumer: g.cfg.Name, Rule: rule}
		if g.env.Trace.Detailed() {
			ev.Detail = "member leaves group " + g.cfg.Name
		}
		g.env.Emit(ev)
		m.leave(rule)
		return 0, nil
	}
	if m.cfg.Commit == CommitAuto && now-m.lastAuto >= m.cfg.AutoCommitEvery {
		_ = m.commitProgress()
		m.lastAuto = now
	}
	if f := m.fault(m.g.t.fx.unavailable, nil); f != nil {
		ev := sim.Event{Kind: sim.KindRejected, Where: g.t.where, Actor: m.cfg.Name, Consumer: g.cfg.Name, Rule: f.Rule}
		if g.env.Trace.Detailed() {
			ev.Detail = "poll: broker unavailable"
		}
		g.env.Emit(ev)
		return 0, nil
	}
	// Like Kafka's poll, resolve the position of every owned partition
	// that has none before fetching any: a partition the batch would not
	// reach is reset now (auto.offset.reset), not at a later poll.
	for _, p := range m.owned {
		if g.parts[p].pos < 0 {
			g.fetch(m, p, 0)
		}
	}
	if n := len(m.owned); n > 0 && max > 0 {
		j := m.rr % n // the index in owned of the partition fetched next
		m.rr++
		for i := 0; i < n && len(m.got) < max; i++ {
			p := m.owned[j]
			g.fetch(m, p, max-len(m.got))
			if j++; j == n {
				j = 0 // wrapped around: one division per poll, not one per partition
			}
		}
	}
	if len(m.got) == 0 {
		return 0, nil
	}
	if h := g.t.history; h != nil {
		x := m.bufs()
		x.reads = x.reads[:0]
		for i := range m.got {
			r := &m.got[i]
			x.reads = append(x.reads, Read{Partition: r.p, Offset: r.off, Value: r.e.id, Epoch: g.parts[r.p].epoch})
		}
		h.Poll(now, g.cfg.Name, m.cfg.Name, x.reads...)
	}
	if m.cfg.Commit == CommitBefore {
		if f := m.fault(m.g.t.fx.crashBefore, m.got[0].e); f != nil {
			m.crash(f.Rule, "before commit")
			m.got = m.got[:0]
			return 0, nil
		}
		// The partitions the poll read from, in the order it read them:
		// each fetch appends its records together, one fetch per
		// partition.
		for i := range m.got {
			p := m.got[i].p
			if i > 0 && p == m.got[i-1].p {
				continue
			}
			if err := g.commit(m, m.gen, p, g.parts[p].pos); err != nil {
				m.dropAll()
				m.handBack()
				return 0, err
			}
		}
	}
	return len(m.got), nil
}

// Delivery returns a delivery of record r for a handler: the group is its
// Consumer, the member its Instance, Where is "log:<topic>", HasPos,
// Partition and Offset are set, and Attempt is the record's delivery count
// in the group when it is outstanding (0 otherwise). The handler records
// its effects on it; it stays valid until the adapter reports r done.
func (m *Member) Delivery(r Record) *sim.Delivery {
	d := &sim.Delivery{}
	attempt := 0
	if i := m.find(r.Partition, r.Offset); i >= 0 {
		attempt = int(m.out[i].attempt)
	}
	m.prepare(d, r.Partition, r.Offset, &r.Message, attempt)
	return d
}

// prepare makes d a delivery to the member of a copy of *msg, the record
// at offset off of partition p. The message is passed by pointer so that
// it is copied once, into d.
func (m *Member) prepare(d *sim.Delivery, p int, off int64, msg *sim.Message, attempt int) {
	d.Msg = *msg
	m.prepareInPlace(d, p, off, attempt)
}

// prepareInPlace is prepare for a message already written into d.Msg.
func (m *Member) prepareInPlace(d *sim.Delivery, p int, off int64, attempt int) {
	d.ResetInPlace(m.g.env, m.g.t.where, m.g.cfg.Name, m.cfg.Name, attempt)
	d.HasPos, d.Partition, d.Offset = true, p, off
}

// MarkProcessed reports that the handler is done with the outstanding
// record of d (its effects, if any, were recorded on d). It returns an
// error wrapping ErrNotOutstanding when the record is not outstanding:
// never polled, already reported, or dropped since.
func (m *Member) MarkProcessed(d *sim.Delivery) error { return m.finish(d, nil) }

// MarkFailed reports that the handler failed on the outstanding record of
// d with err (traced as "failed"). The records of its partition fetched
// after it are dropped and the position moves back: with CommitBefore to
// the record after it, since the failed record is gone (and booked lost
// with sim.CauseCommitBeforeProcess when the committed offset covers it
// and the handler applied nothing); otherwise to the record itself, which
// is read again at the next poll. A nil err counts as a failure without
// text. It returns an error wrapping ErrNotOutstanding as MarkProcessed
// does.
func (m *Member) MarkFailed(d *sim.Delivery, err error) error {
	if err == nil {
		err = errors.New("handler failed")
	}
	return m.finish(d, err)
}

// finish ends the outstanding record of d, successfully when err is nil.
func (m *Member) finish(d *sim.Delivery, err error) error {
	if d.Effects() > 0 || d.Skipped() {
		m.g.markApplied(d.Partition, d.Offset) // counts even for a record dropped meanwhile
	}
	i := m.find(d.Partition, d.Offset)
	if i < 0 || m.out[i].id != d.Msg.ID {
		return fmt.Errorf("%w: %s p=%d off=%d (member %s)", ErrNotOutstanding, d.Msg.ID, d.Partition, d.Offset, m.cfg.Name)
	}
	if i == 0 {
		m.out = m.out[1:] // the usual case, as records are handled in fetch order: O(1)
	} else {
		m.out = append(m.out[:i], m.out[i+1:]...)
	}
	if err == nil {
		return nil
	}
	g := m.g
	ev := d.Event(sim.KindFailed)
	if g.env.Trace.Detailed() {
		ev.Detail = err.Error()
	}
	g.env.Trace.EmitRef(&ev)
	p, next := d.Partition, d.Offset
	if m.cfg.Commit == CommitBefore {
		next++
		part := g.t.parts[p]
		if i := part.at(d.Offset); i >= 0 && !g.applied(p, d.Offset) && d.Effects() == 0 && !d.Skipped() {
			gp := &g.parts[p]
			if c := gp.committed; c > d.Offset && c <= part.end {
				g.lose(m.cfg.Name, p, part.recs.at(i), d.Offset, gp.passedBy(), "")
			} else if !slices.Contains(gp.skipped, d.Offset) {
				// The broker has no commit past it (the commit was lost or
				// refused): a rebalance may still hand it to a reader.
				gp.skipped = append(gp.skipped, d.Offset)
			}
		}
	}
	m.rewind(p, next)
	return nil
}

// rewind drops the outstanding records of partition p at or after next and
// moves the position back to next.
func (m *Member) rewind(p int, next int64) {
	j := 0
	for _, o := range m.out {
		if int(o.p) == p && o.off >= next {
			continue
		}
		m.out[j] = o
		j++
	}
	m.out = m.out[:j]
	if gp := &m.g.parts[p]; gp.owner == m && next < gp.pos {
		gp.pos = next
		gp.epoch++
		k := 0
		for _, off := range gp.skipped {
			if off < next {
				gp.skipped[k] = off
				k++
			}
		}
		gp.skipped = gp.skipped[:k] // the member reads the others again
	}
}

// dropAll drops every outstanding record, moving each partition's
// position back to its first one: they are read again at the next poll.
func (m *Member) dropAll() {
	for len(m.out) > 0 {
		o := m.out[0]
		m.rewind(int(o.p), o.off)
	}
}

// drop drops the outstanding records of partition p, leaving the position
// alone.
func (m *Member) drop(p int) {
	j := 0
	for _, o := range m.out {
		if int(o.p) != p {
			m.out[j] = o
			j++
		}
	}
	m.out = m.out[:j]
}

// find returns the index in m.out of the outstanding record at offset off
// of partition p, or -1. O(outstanding records).
func (m *Member) find(p int, off int64) int {
	for i := range m.out {
		if int(m.out[i].p) == p && m.out[i].off == off {
			return i
		}
	}
	return -1
}

// Outstanding returns how many records the member fetched and has not
// reported done.
func (m *Member) Outstanding() int { return len(m.out) }

// progress is the offset of the member's first outstanding record of
// partition p, or its position when none is.
func (m *Member) progress(p int) int64 {
	off := m.g.parts[p].pos
	for i := range m.out {
		if o := &m.out[i]; int(o.p) == p && o.off < off {
			off = o.off
		}
	}
	return off
}

// release gives partition p up (a rebalance, a crash, a leave, a session
// timeout): the member drops its outstanding records of p. When the next
// owner resumes at a known offset (the committed one, or the start of an
// earliest group that committed nothing), the member books as lost with
// sim.CauseCommitBeforeProcess the records that offset has passed and the
// member never handled: its outstanding records below it, the records
// between its position and it, and the records it skipped after a
// CommitBefore failure. When the next owner's position is decided only at
// its fetch (a latest group that committed nothing, a committed offset
// past the end, or below the log start without ResetEarliest), the group
// owes the records from the member's progress on, and the fetch books
// those it passes. O(outstanding + records booked).
func (m *Member) release(p int, rule string) {
	g := m.g
	gp := &g.parts[p]
	part := g.t.parts[p]
	c := g.readFrom(p)
	var unresolved bool
	switch {
	case gp.committed > part.end:
		unresolved = true
	case gp.committed >= 0:
		unresolved = gp.committed < part.floor && g.cfg.Reset != ResetEarliest
	default:
		unresolved = g.cfg.Reset != ResetEarliest
	}
	if unresolved {
		if gp.pos >= 0 {
			if from := m.progress(p); gp.owe < 0 || from < gp.owe {
				gp.owe = from
			}
		}
		m.drop(p)
		return
	}
	j := 0
	for _, o := range m.out {
		if int(o.p) != p {
			m.out[j] = o
			j++
			continue
		}
		if o.off < c && o.off < gp.pos {
			if i := part.at(o.off); i >= 0 && !g.applied(p, o.off) {
				g.lose(m.cfg.Name, p, part.recs.at(i), o.off, gp.passedBy(), rule)
			}
		}
	}
	m.out = m.out[:j]
	if gp.pos >= 0 && gp.pos < c {
		for i := part.search(max(gp.pos, part.start)); i < part.recs.len() && part.off(i) < c; i++ {
			if o := part.off(i); !g.applied(p, o) {
				g.lose(m.cfg.Name, p, part.recs.at(i), o, gp.passedBy(), rule)
			}
		}
	}
	g.settle(m.cfg.Name, p, gp, c, false)
}

// Commit commits the member's progress in every partition it owns whose
// committed offset it would change (progress minus one with
// CommitOffByOne), and returns the rejections. The fault points
// consumer.crash_before_commit (the member crashes instead) and
// member.session_timeout (the member stalls past its session timeout and
// sends the commits when it wakes, too late) are consulted first; each
// commit then consults broker.unavailable (it fails, wrapping
// ErrUnavailable) and broker.ack_lost (it is lost, silently). It fails
// with ErrNotActive when the member is not in the group.
func (m *Member) Commit() error {
	if m.state != stateActive || !m.in {
		return fmt.Errorf("%w: %q in group %s", ErrNotActive, m.cfg.Name, m.g.cfg.Name)
	}
	if f := m.fault(m.g.t.fx.crashBefore, nil); f != nil {
		m.crash(f.Rule, "before commit")
		return fmt.Errorf("%w: %q crashed before its commit", ErrNotActive, m.cfg.Name)
	}
	if f := m.fault(m.g.t.fx.sessionTimeout, nil); f != nil {
		x := m.bufs()
		x.pending = x.pending[:0]
		for _, p := range m.owned {
			if off, ok := m.commitPoint(p); ok {
				x.pending = append(x.pending, Position{Partition: p, Offset: off})
			}
		}
		m.Stall(m.g.cfg.SessionTimeout + 1)
		return nil
	}
	return m.commitProgress()
}

// commitProgress commits the member's progress where it changes the
// committed offset.
func (m *Member) commitProgress() error {
	var errs []error
	for _, p := range m.owned {
		off, ok := m.commitPoint(p)
		if !ok || off == m.g.readFrom(p) {
			continue
		}
		if err := m.g.commit(m, m.gen, p, off); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// commitPoint is the offset Commit commits for partition p, and whether
// there is one.
func (m *Member) commitPoint(p int) (int64, bool) {
	gp := &m.g.parts[p]
	if gp.owner != m || gp.pos < 0 {
		return 0, false
	}
	off := m.progress(p)
	if m.cfg.Commit == CommitOffByOne {
		off--
		if off < 0 {
			return 0, false
		}
	}
	return off, true
}

// CommitRecords commits, for each partition among recs, the offset after
// the highest of its records given (the next offset to read), whatever the
// member's progress: the adapter says what it has handled. It returns the
// rejections (stale generation, partition not owned, offset out of
// range).
func (m *Member) CommitRecords(recs ...Record) error {
	if m.state != stateActive && m.state != stateStalled || !m.in {
		return fmt.Errorf("%w: %q in group %s", ErrNotActive, m.cfg.Name, m.g.cfg.Name)
	}
	var errs []error
	for i, r := range recs {
		hi, seen := r.Offset, false
		for _, x := range recs[:i] {
			seen = seen || x.Partition == r.Partition
		}
		if seen {
			continue
		}
		for _, x := range recs[i+1:] {
			if x.Partition == r.Partition && x.Offset > hi {
				hi = x.Offset
			}
		}
		if err := m.g.commit(m, m.gen, r.Partition, hi+1); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
