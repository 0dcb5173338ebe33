package sim

import (
	"slices"
	"strings"
)

// CauseCount is the number of losses with one cause.
type CauseCount struct {
	Cause Cause
	Count int
}

// Stats summarises the ledger.
type Stats struct {
	Messages         int // registered copies
	Origins          int // registered origins (lineage roots)
	Pending          int // copies still held by a broker or an outbox
	Done             int // acknowledged and deleted
	DeadLettered     int // copies parked in a dead-letter queue
	Expired          int
	Purged           int
	Redriven         int // copies a redriven event ever moved out of a dead-letter queue; it never decreases
	Phantoms         int
	Delivered        int // deliveries over all consumers
	Duplicates       int // repeated deliveries of an origin over all consumers
	Applied          int // effects applied over all consumers
	DuplicateEffects int // repeated effects of an origin over all consumers
	Absorbed         int // deliveries a handler recognised as duplicates
	Missed           int // (origin, consumer) pairs missed by design
	Lost             int // losses that stand, per (origin, consumer) and before any consumer
	LostBy           []CauseCount
	// Consumers sums the outcomes per consumer, in the ledger's consumer
	// order (Consumers), one entry for every consumer it knows.
	Consumers []ConsumerStats
}

// ConsumerStats is what one consumer's outcomes (Outcomes(name)) sum to.
type ConsumerStats struct {
	Consumer string
	Applied  int // effects applied
	Repeated int // effects applied past the first of their origin
	Worst    int // the most effects applied for one origin
	Absorbed int // deliveries the handler recognised as duplicates
	Repeats  int // deliveries past the first of their origin
}

// add counts one outcome into c.
func (c *ConsumerStats) add(o *Outcome) {
	c.Applied += o.Effects
	c.Absorbed += o.Skipped
	if o.Effects > 1 {
		c.Repeated += o.Effects - 1
	}
	c.Worst = max(c.Worst, o.Effects)
	if o.Deliveries > 1 {
		c.Repeats += o.Deliveries - 1
	}
}

// sum adds d's sums to c, times sign (1 or -1); Worst, a maximum, is
// left to the caller.
func (c *ConsumerStats) sum(d *ConsumerStats, sign int) {
	c.Applied += sign * d.Applied
	c.Repeated += sign * d.Repeated
	c.Absorbed += sign * d.Absorbed
	c.Repeats += sign * d.Repeats
}

// Stats returns the summary: the counts of the registered records, and of
// the outcomes (Outcomes("")) and the standing losses before any consumer.
//
// The first call folds every copy, O(messages x consumers). From then on
// the ledger keeps the summary up to date as it folds events: it keeps
// one partial summary per chunk of 128 IDs, notes the chunks an event
// touches (an event touches its message and its origin), and a later call
// refolds only those chunks, plus the copies that belong to a lineage (an
// origin or copies made from it), whose outcomes span chunks. A call
// therefore costs O(chunks touched since the last call x 128 x consumers +
// linked copies x consumers + causes), not a pass over every outcome; the
// partial summaries cost about 2 bytes per copy, plus 48 bytes per
// consumer per chunk for the per-consumer sums. A consumer's Worst is the
// largest of its chunks' maxima: it is taken again over every chunk
// (O(chunks)) only when a refold lowered the chunk that held it.
func (l *Ledger) Stats() Stats {
	var s Stats
	if l == nil {
		return s
	}
	x := l.statsNow()
	t := x.total
	t.lostBy = nil
	t.cons = nil
	if len(l.consumers) > 0 {
		t.cons = make([]ConsumerStats, len(l.consumers))
		copy(t.cons, x.total.cons)
	}
	by := make(map[Cause]int, len(x.totalBy))
	for c, n := range x.totalBy {
		by[c] = n
	}
	l.lineageStats(&t, by)
	s = Stats{Messages: t.messages, Origins: t.origins, Phantoms: t.phantoms,
		Pending: t.states[StatePending], Done: t.states[StateDone], DeadLettered: t.states[StateDeadLettered],
		Expired: t.states[StateExpired], Purged: t.states[StatePurged], Redriven: t.redriven,
		Delivered: t.delivered, Duplicates: t.duplicates, Applied: t.applied, DuplicateEffects: t.dupEffects,
		Absorbed: t.absorbed, Missed: t.missed, Lost: t.lost}
	for c, n := range by {
		s.LostBy = append(s.LostBy, CauseCount{c, n})
	}
	slices.SortFunc(s.LostBy, func(a, b CauseCount) int { return strings.Compare(string(a.Cause), string(b.Cause)) })
	s.Consumers = t.cons
	for i, b := range l.consumers {
		s.Consumers[i].Consumer = b.name
	}
	return s
}

// statsNow returns the kept summary brought up to date: it creates the
// index on first use (folding every chunk) and refolds the chunks touched
// since the last call.
func (l *Ledger) statsNow() *statsIndex {
	x := l.stats
	if x == nil {
		x = l.newStatsIndex()
		l.stats = x
	}
	for _, c := range x.dirty {
		x.refresh(l, c)
	}
	x.dirty, x.last = x.dirty[:0], 0
	if x.worstStale {
		x.rework(len(l.consumers))
	}
	return x
}

// rework takes every consumer's Worst again as the largest of its chunks'
// maxima: O(chunks x consumers).
func (x *statsIndex) rework(consumers int) {
	x.worstStale = false
	x.total.cons = grow(x.total.cons, consumers)
	for i := range x.total.cons {
		x.total.cons[i].Worst = 0
	}
	for _, p := range x.parts {
		for i := range p.cons {
			x.total.cons[i].Worst = max(x.total.cons[i].Worst, p.cons[i].Worst)
		}
	}
}

// grow returns cs with at least n entries.
func grow(cs []ConsumerStats, n int) []ConsumerStats {
	for len(cs) < n {
		cs = append(cs, ConsumerStats{})
	}
	return cs
}

// statsPart is what one chunk of IDs contributes to Stats: its registered
// records, the outcomes of its unlinked copies (each its own origin, so
// its outcome is folded from its own record and deliveries alone), and the
// standing losses of its copies before any consumer.
type statsPart struct {
	dirty                        bool // touched since it was last folded
	messages, origins, phantoms  int
	states                       [len(stateNames)]int // registered records by state
	redriven                     int                  // registered records ever redriven (recRedriven)
	delivered, applied, absorbed int
	duplicates, dupEffects       int
	missed, lost                 int
	lostBy                       []CauseCount
	cons                         []ConsumerStats // by consumer index; Consumer unset
	// judge counts, by consumer index, how the outcome checkers judge
	// the unlinked copies' outcomes (see Tally); beforeLost counts the
	// standing losses before any consumer and unrouted the pending
	// copies no consumer is routed, as NoLoss reports them.
	judge                []judgeCount
	beforeLost, unrouted int
}

// add adds q's counts to p, times sign (1 or -1); lostBy is left to the
// caller.
func (p *statsPart) add(q *statsPart, sign int) {
	p.messages += sign * q.messages
	p.origins += sign * q.origins
	p.phantoms += sign * q.phantoms
	for i := range p.states {
		p.states[i] += sign * q.states[i]
	}
	p.redriven += sign * q.redriven
	p.delivered += sign * q.delivered
	p.applied += sign * q.applied
	p.absorbed += sign * q.absorbed
	p.duplicates += sign * q.duplicates
	p.dupEffects += sign * q.dupEffects
	p.missed += sign * q.missed
	p.lost += sign * q.lost
	if len(q.cons) > len(p.cons) {
		p.cons = grow(p.cons, len(q.cons))
	}
	for i := range q.cons {
		p.cons[i].sum(&q.cons[i], sign)
	}
	p.beforeLost += sign * q.beforeLost
	p.unrouted += sign * q.unrouted
	for len(p.judge) < len(q.judge) {
		p.judge = append(p.judge, judgeCount{})
	}
	for i := range q.judge {
		p.judge[i].add(&q.judge[i], sign)
	}
}

// outcome counts one outcome into p, its loss cause into by.
func (p *statsPart) outcome(o *Outcome, by func(Cause)) {
	p.delivered += o.Deliveries
	p.applied += o.Effects
	p.absorbed += o.Skipped
	if o.Deliveries > 1 {
		p.duplicates += o.Deliveries - 1
	}
	if o.Effects > 1 {
		p.dupEffects += o.Effects - 1
	}
	switch o.Verdict {
	case VerdictMissed:
		p.missed++
	case VerdictLost:
		p.lost++
		by(o.Cause)
	}
}

// countCause adds one loss with cause c to a chunk's few counts.
func (p *statsPart) countCause(c Cause) {
	for i := range p.lostBy {
		if p.lostBy[i].Cause == c {
			p.lostBy[i].Count++
			return
		}
	}
	p.lostBy = append(p.lostBy, CauseCount{c, 1})
}

// statsIndex keeps Stats up to date once it has been asked for: a partial
// summary per chunk of IDs, their sum, the chunks touched since, and the
// losses before any consumer by chunk (the ledger's loss list is in the
// order recorded, not by ID).
type statsIndex struct {
	parts   map[uint64]*statsPart // by chunk number
	total   statsPart             // the sum of parts; lostBy unused
	totalBy map[Cause]int         // the sum of the parts' lostBy
	dirty   []uint64              // chunks touched since the last Stats, each once
	last    uint64                // the chunk touched last, 1 + its number; 0 = none
	before  map[uint64][]loss
	// worstStale is set when a refold lowered a consumer's Worst in the
	// chunk that may have held the total's: Stats then takes it again.
	worstStale bool
	// keys, once KeyStats was asked for, keeps the per-key sums of the
	// consumers it names, refolded with the parts.
	keys *keyIndex
	// order, once Tally was asked for ordered-per-key, keeps its fold
	// per consumer index; orderLinks is len(Ledger.lineage) when the
	// folds were last held to the lineages, as a copy linked since may
	// change a root a fold judged.
	order      []*orderFold
	orderLinks int
}

// part returns chunk c's part, creating it on first use. The parts are
// kept in a map, not a table, so that a short run that asks for Stats
// once (a scenario's report) pays for the parts it has, not for a chunk
// of 128 of them.
func (x *statsIndex) part(c uint64) *statsPart {
	p := x.parts[c]
	if p == nil {
		p = &statsPart{}
		x.parts[c] = p
	}
	return p
}

// newStatsIndex returns an index with every chunk that holds a record, a
// delivery or a loss marked touched, so the first Stats folds them all.
func (l *Ledger) newStatsIndex() *statsIndex {
	x := &statsIndex{parts: map[uint64]*statsPart{}, totalBy: map[Cause]int{}}
	mark := func(c uint64) {
		if p := x.part(c); !p.dirty {
			p.dirty = true
			x.dirty = append(x.dirty, c)
		}
	}
	l.recs.chunkNumbers(mark)
	for _, b := range l.consumers {
		b.entries.chunkNumbers(mark)
	}
	for v := range l.losses.all() {
		if v.consumer == NoConsumer {
			c := uint64(v.id) / tableChunk
			if x.before == nil {
				x.before = map[uint64][]loss{}
			}
			x.before[c] = append(x.before[c], v)
			mark(c)
		}
	}
	return x
}

// touchPair notes that an event changed copy id and, when it is not 0,
// the copy origin it was made from (see touch). It stays a call of its
// own, so that Ledger.begin, which calls it only while stats are kept,
// is inlined into every fold.
func (x *statsIndex) touchPair(id, origin ID) {
	x.touch(id)
	if origin != 0 {
		x.touch(origin)
	}
}

// touch notes that an event changed copy id, so its chunk's part is
// refolded at the next Stats. It costs a comparison when the chunk is
// the one touched last.
func (x *statsIndex) touch(id ID) {
	c := uint64(id) / tableChunk
	if c+1 == x.last {
		return
	}
	x.last = c + 1
	if p := x.part(c); !p.dirty {
		p.dirty = true
		x.dirty = append(x.dirty, c)
	}
}

// lostBefore notes a loss before any consumer.
func (x *statsIndex) lostBefore(v loss) {
	c := uint64(v.id) / tableChunk
	if x.before == nil {
		x.before = map[uint64][]loss{}
	}
	x.before[c] = append(x.before[c], v)
	x.touch(v.id)
}

// refresh refolds chunk c's part and replaces it in the total.
func (x *statsIndex) refresh(l *Ledger, c uint64) {
	p := x.part(c)
	x.total.add(p, -1)
	for _, cc := range p.lostBy {
		if x.totalBy[cc.Cause] -= cc.Count; x.totalBy[cc.Cause] == 0 {
			delete(x.totalBy, cc.Cause)
		}
	}
	old := p.cons
	*p = l.foldPart(c, x.before[c], p.judge)
	x.total.add(p, 1)
	for i := range p.cons {
		x.total.cons[i].Worst = max(x.total.cons[i].Worst, p.cons[i].Worst)
	}
	for i := range old {
		if old[i].Worst == x.total.cons[i].Worst && (i >= len(p.cons) || p.cons[i].Worst < old[i].Worst) {
			x.worstStale = true
		}
	}
	for _, cc := range p.lostBy {
		x.totalBy[cc.Cause] += cc.Count
	}
	if x.keys != nil {
		x.keys.refresh(l, c)
	}
}

// foldPart folds chunk c: its registered records, the outcomes of its
// unlinked copies for every consumer, and before, its losses before any
// consumer.
// The judge counts of the part it replaces are reused.
func (l *Ledger) foldPart(c uint64, before []loss, judge []judgeCount) statsPart {
	var p statsPart
	p.judge = judge[:0]
	if rs := l.recs.chunk(c); rs != nil {
		for k := range rs {
			r := &rs[k]
			id := ID(c*tableChunk + uint64(k))
			if id == 0 || r.flags&recRegistered == 0 {
				continue
			}
			p.messages++
			if r.flags&recLinked == 0 || l.originOf(id) == 0 {
				p.origins++
			}
			if int(r.State) < len(p.states) {
				p.states[r.State]++
			}
			if r.flags&recPhantom != 0 {
				p.phantoms++
			}
			if r.flags&recRedriven != 0 {
				p.redriven++
			}
			if r.State == StatePending && !l.routed(id) {
				p.unrouted++
			}
		}
	}
	for i, b := range l.consumers {
		es := b.entries.chunk(c)
		if es == nil {
			continue
		}
		p.cons = grow(p.cons, i+1)
		for len(p.judge) <= i {
			p.judge = append(p.judge, judgeCount{})
		}
		for k := range es {
			e := &es[k]
			id := ID(c*tableChunk + uint64(k))
			if id == 0 || e.bits&delExpected == 0 || l.linked(id) {
				continue
			}
			d := l.exportDelivery(id, b.ref, e)
			a := agg{o: Outcome{Origin: id, Consumer: b.name}}
			a.add(l, id, &d)
			o := a.finish()
			p.outcome(&o, p.countCause)
			p.cons[i].add(&o)
			p.judge[i].count(l, &o)
		}
	}
	for _, v := range before {
		if r, ok := l.recs.get(uint64(v.id)); ok && r.State == StateLost {
			p.lost++
			p.beforeLost++
			cause := Cause("")
			if v.cause != 0 {
				cause = l.causes[v.cause-1]
			}
			p.countCause(cause)
		}
	}
	return p
}

// lineageStats adds to t and by the outcomes of the linked copies, folded
// by origin for every consumer as eachBookOutcome folds them: O(linked
// copies x consumers).
func (l *Ledger) lineageStats(t *statsPart, by map[Cause]int) {
	if len(l.lineage) == 0 {
		return
	}
	count := func(c Cause) { by[c]++ }
	t.cons = grow(t.cons, len(l.consumers))
	for i, b := range l.consumers {
		aggs, roots := l.lineages(b)
		for _, root := range roots {
			o := aggs[root].finish()
			t.outcome(&o, count)
			t.cons[i].add(&o)
		}
	}
}

// linkedIDs returns the copies that belong to a lineage, in ID order,
// sorting them first when some were linked out of order.
func (l *Ledger) linkedIDs() []ID {
	if l.unsorted {
		slices.Sort(l.lineage)
		l.unsorted = false
	}
	return l.lineage
}

// KeyCell is what one consumer's outcomes of one key sum to.
type KeyCell struct {
	Origins  int // outcomes: origins of the key routed to the consumer
	Effects  int // effects applied
	Repeated int // effects applied past the first of their origin
	Absorbed int // deliveries the handler recognised as duplicates
}

// count adds an outcome with effects applied and skipped deliveries
// absorbed, times sign (1 or -1 for an outcome, or to add or remove a
// sum of outcomes when origins is their number).
func (c *KeyCell) count(origins, effects, repeated, absorbed, sign int) {
	c.Origins += sign * origins
	c.Effects += sign * effects
	c.Repeated += sign * repeated
	c.Absorbed += sign * absorbed
}

// KeyEffects is one key's row of KeyStats: one cell per consumer asked
// for, in the order asked.
type KeyEffects struct {
	Key   string
	Cells []KeyCell
}

// KeyStats sums the outcomes (Outcomes("")) of the consumers named per
// key: the keys in the order the outcomes first name them (by consumer in
// the ledger's order, then by origin), the first limit of them with their
// cells, and how many keys there are past those. A consumer the ledger
// does not know has empty cells.
//
// The first call, and a call naming other consumers than the last,
// folds every copy of those consumers, O(their copies). From then on the
// ledger keeps the sums up to date as Stats does: per chunk of 128 IDs,
// the chunk's sums by key of the unlinked copies' outcomes, refolded when
// an event touched the chunk, plus the copies that belong to a lineage,
// folded again at each call. A call therefore costs O(chunks touched since
// the last call x 128 x consumers named + linked copies x consumers named
// + keys x log keys) and allocates O(keys); the kept sums cost 48 bytes
// per distinct key of a chunk and a consumer named, and the keys are held
// once each.
func (l *Ledger) KeyStats(consumers []string, limit int) (rows []KeyEffects, more int) {
	if l == nil || limit < 0 {
		return nil, 0
	}
	x := l.statsNow()
	if x.keys == nil || !slices.Equal(x.keys.names, consumers) {
		x.keys = newKeyIndex(consumers)
		chunks := map[uint64]bool{}
		var order []uint64
		for _, name := range consumers {
			if ref := l.lookup(name); ref != NoConsumer {
				l.consumers[ref].entries.chunkNumbers(func(c uint64) {
					if !chunks[c] {
						chunks[c] = true
						order = append(order, c)
					}
				})
			}
		}
		for _, c := range order {
			x.keys.refresh(l, c)
		}
	}
	return x.keys.rows(l, limit)
}

// keyIndex keeps the per-key sums of KeyStats for the consumers it names
// (the columns): per chunk, the sums by key and column of the chunk's
// unlinked copies' outcomes, and their totals. Keys are interned, so a
// chunk's sums hold no pointer.
type keyIndex struct {
	names  []string
	ids    map[string]uint32 // key -> index into keys
	keys   []string
	parts  map[uint64][]keyCount // by chunk number
	totals []keyTotal            // by key x len(names) + column
	// stale is set when a refold removed the smallest origin of a key and
	// column: rows then takes every total's first origin again.
	stale bool
	buf   []keyCount // the chunk being folded
	slot  []int32    // by key: 1 + its index in buf for the column being folded
	gen   uint32     // refolds so far
	seen  []uint32   // by total: the refold that set its first origin
}

// keyCount is what one chunk's unlinked copies of one key sum to for one
// column.
type keyCount struct {
	cell  KeyCell
	first ID // the smallest origin
	key   uint32
	col   uint32
}

// keyTotal is what every chunk's counts of one key and column sum to.
type keyTotal struct {
	cell  KeyCell
	first ID    // the smallest origin of the counts
	parts int32 // chunks with a count
}

// newKeyIndex returns an empty index of the consumers named.
func newKeyIndex(names []string) *keyIndex {
	return &keyIndex{names: slices.Clone(names), ids: map[string]uint32{}, parts: map[uint64][]keyCount{}}
}

// intern returns the index of key k, adding it when new.
func (k *keyIndex) intern(key string) uint32 {
	if i, ok := k.ids[key]; ok {
		return i
	}
	i := uint32(len(k.keys))
	k.ids[key] = i
	k.keys = append(k.keys, key)
	k.slot = append(k.slot, 0)
	for range k.names {
		k.totals = append(k.totals, keyTotal{})
		k.seen = append(k.seen, 0)
	}
	return i
}

// refresh refolds chunk c and replaces its counts in the totals:
// O(128 x columns).
func (k *keyIndex) refresh(l *Ledger, c uint64) {
	buf := k.buf[:0]
	for col, name := range k.names {
		ref := l.lookup(name)
		if ref == NoConsumer {
			continue
		}
		es := l.consumers[ref].entries.chunk(c)
		if es == nil {
			continue
		}
		start := len(buf)
		for j := range es {
			e := &es[j]
			id := ID(c*tableChunk + uint64(j))
			if id == 0 || e.bits&delExpected == 0 || l.linked(id) {
				continue
			}
			d := l.exportDelivery(id, ref, e)
			key := k.intern(l.keyOf(id))
			if k.slot[key] == 0 {
				buf = append(buf, keyCount{first: id, key: key, col: uint32(col)})
				k.slot[key] = int32(len(buf))
			}
			n := &buf[k.slot[key]-1]
			n.cell.count(1, int(d.Applied), int(max(d.Applied, 1)-1), int(d.Skipped), 1)
		}
		for _, n := range buf[start:] {
			k.slot[n.key] = 0
		}
	}
	k.buf = buf
	k.gen++
	old := k.parts[c]
	cols := uint32(len(k.names))
	for _, n := range buf {
		t := &k.totals[n.key*cols+n.col]
		if t.parts == 0 || n.first <= t.first {
			t.first = n.first
			k.seen[n.key*cols+n.col] = k.gen
		}
		t.parts++
		t.cell.count(n.cell.Origins, n.cell.Effects, n.cell.Repeated, n.cell.Absorbed, 1)
	}
	for _, n := range old {
		i := n.key*cols + n.col
		t := &k.totals[i]
		t.parts--
		t.cell.count(n.cell.Origins, n.cell.Effects, n.cell.Repeated, n.cell.Absorbed, -1)
		if t.parts > 0 && n.first == t.first && k.seen[i] != k.gen {
			// The old count held the smallest origin and the new one
			// does not.
			k.stale = true
		}
	}
	switch {
	case len(buf) == 0:
		delete(k.parts, c)
	case cap(old) >= len(buf):
		k.parts[c] = append(old[:0], buf...)
	default:
		k.parts[c] = slices.Clone(buf)
	}
}

// rework takes every total's smallest origin again from the chunks'
// counts: O(counts).
func (k *keyIndex) rework() {
	k.stale = false
	cols := uint32(len(k.names))
	for i := range k.totals {
		k.totals[i].first = ^ID(0)
	}
	for _, p := range k.parts {
		for _, n := range p {
			t := &k.totals[n.key*cols+n.col]
			t.first = min(t.first, n.first)
		}
	}
}

// keyRow is a row of KeyStats being assembled, ranked by where the
// outcomes first name its key.
type keyRow struct {
	key   uint32
	ref   ConsumerRef // the first consumer, in the ledger's order, with an outcome of the key
	first ID          // that consumer's smallest origin of the key
	cells []KeyCell
}

// before reports whether r's key comes before s's in the outcomes.
func (r *keyRow) before(s *keyRow) bool {
	return r.ref < s.ref || r.ref == s.ref && r.first < s.first
}

// rows assembles KeyStats from the totals and the linked copies' outcomes.
func (k *keyIndex) rows(l *Ledger, limit int) ([]KeyEffects, int) {
	if k.stale {
		k.rework()
	}
	cols := len(k.names)
	refs := make([]ConsumerRef, cols)
	for col, name := range k.names {
		refs[col] = NoConsumer
		if ref := l.lookup(name); ref != NoConsumer {
			refs[col] = ref
		}
	}
	var rows []keyRow
	at := map[uint32]int{} // key -> index into rows
	row := func(key uint32, col int, first ID) *keyRow {
		i, ok := at[key]
		if !ok {
			i = len(rows)
			at[key] = i
			rows = append(rows, keyRow{key: key, ref: refs[col], first: first, cells: make([]KeyCell, cols)})
		}
		r := &rows[i]
		if c := (keyRow{ref: refs[col], first: first}); c.before(r) {
			r.ref, r.first = c.ref, c.first
		}
		return r
	}
	for key := range k.keys {
		for col := range cols {
			t := &k.totals[key*cols+col]
			if t.parts == 0 {
				continue
			}
			r := row(uint32(key), col, t.first)
			r.cells[col].count(t.cell.Origins, t.cell.Effects, t.cell.Repeated, t.cell.Absorbed, 1)
		}
	}
	if len(l.lineage) > 0 {
		for col, ref := range refs {
			if ref == NoConsumer {
				continue
			}
			aggs, roots := l.lineages(l.consumers[ref])
			for _, root := range roots {
				o := aggs[root].finish()
				r := row(k.intern(l.lineageKey(&o)), col, root)
				r.cells[col].count(1, o.Effects, max(o.Effects, 1)-1, o.Skipped, 1)
			}
		}
	}
	slices.SortFunc(rows, func(a, b keyRow) int {
		switch {
		case a.before(&b):
			return -1
		case b.before(&a):
			return 1
		}
		return 0
	})
	n := min(len(rows), limit)
	out := make([]KeyEffects, n)
	for i := range out {
		out[i] = KeyEffects{Key: k.keys[rows[i].key], Cells: rows[i].cells}
	}
	return out, len(rows) - n
}
