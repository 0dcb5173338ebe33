package tui

import (
	"strconv"

	"github.com/brokerlab/brokerlab/outbox"
	"github.com/brokerlab/brokerlab/sim"
)

// The lesson's subject is folded from the trace, like every other view:
// subjectFold is a trace sink of the ScenarioDriver, next to the
// markRecorder, and is rebuilt with the run, so going back in time folds
// it again from the start.

// maxSubjectIDs is the most message IDs a subject view lists per line
// (phantoms, lost events, records applied to one key); the counts stay
// exact.
const maxSubjectIDs = 16

// idList is a capped list of message IDs with an exact count.
type idList struct {
	n   int
	ids []sim.ID // the first maxSubjectIDs
}

// add counts id and keeps it while there is room.
func (l *idList) add(id sim.ID) {
	l.n++
	if len(l.ids) < maxSubjectIDs {
		l.ids = append(l.ids, id)
	}
}

// bitset is a set of message IDs, one bit each: IDs are small and dense
// (allocated from 1 per run), so a million messages cost 125 KB.
type bitset []uint64

// has reports whether id is in the set.
func (b bitset) has(id sim.ID) bool {
	i := uint64(id) / 64
	return i < uint64(len(b)) && b[i]&(1<<(uint64(id)%64)) != 0
}

// set adds id to the set.
func (b *bitset) set(id sim.ID) {
	i := uint64(id) / 64
	for uint64(len(*b)) <= i {
		*b = append(*b, 0)
	}
	(*b)[i] |= 1 << (uint64(id) % 64)
}

// outboxFold is what the trace says about one service's two writes:
// business rows committed (written, or stored in the outbox table) and
// events published for them.
type outboxFold struct {
	name      string
	where     string // "outbox:"+name
	rows      int    // rows committed
	published int    // events published to a broker at least once
	again     int    // publishes of an event published before
	seen      bitset // the events published, by message ID
	phantoms  idList // published, never committed
	lost      idList // committed, never published
}

// projFold is the projection a consumer group builds: the records it has
// applied per key, in order, since the start or since its last seek, with
// the counts it held before that seek.
type projFold struct {
	group  string
	where  string // the log's trace component, from the group's events
	seeked bool
	seekAt sim.Tick
	keys   []*projKey // first-seen order
	byKey  map[string]*projKey
	before int // records applied before the last seek, over every key
}

// projKey is one key of a projection.
type projKey struct {
	key      string
	produced int    // records of the key appended to the group's log
	before   int    // records applied before the last seek
	applied  idList // records applied since the start or the last seek
}

// maxProjKeys is the most keys a projection keeps (a lesson's projection
// has a handful; a huge run keeps its first keys).
const maxProjKeys = 64

// subjectFold folds the trace into the subject views. Its memory is
// O(groups x maxProjKeys x maxSubjectIDs) plus one bit per message ID per
// service (which events it published); Emit is O(services + groups).
type subjectFold struct {
	outboxes []*outboxFold
	projs    []*projFold
}

// newSubjectFold returns a fold for the services and the groups named;
// logOf maps each group to its log's trace component ("log:orders").
func newSubjectFold(services, groups []string, logOf map[string]string) *subjectFold {
	f := &subjectFold{}
	for _, s := range services {
		f.outboxes = append(f.outboxes, &outboxFold{name: s, where: "outbox:" + s})
	}
	for _, g := range groups {
		f.projs = append(f.projs, &projFold{group: g, where: logOf[g], byKey: map[string]*projKey{}})
	}
	return f
}

// Emit folds one event.
func (f *subjectFold) Emit(e *sim.Event) {
	for _, o := range f.outboxes {
		o.emit(e)
	}
	for _, p := range f.projs {
		p.emit(e)
	}
}

// emit folds e into the service's counts. A publish of the service's event
// is the broker's own entry event with the service as the sender (the
// writer and the relays send as the service) and no origin (a fan-out copy
// is not a publish).
func (o *outboxFold) emit(e *sim.Event) {
	switch e.Kind {
	case outbox.KindWritten, sim.KindStored:
		if e.Where == o.where && e.Actor == o.name {
			o.rows++
		}
	case sim.KindSent, sim.KindPublished, sim.KindProduced:
		if e.Actor == o.name && e.Origin == 0 {
			if o.seen.has(e.Msg) {
				o.again++
			} else {
				o.seen.set(e.Msg)
				o.published++
			}
		}
	case sim.KindPhantom:
		if e.Where == o.where {
			o.phantoms.add(e.Msg)
		}
	case sim.KindLost:
		if e.Where == o.where && e.Consumer == "" {
			o.lost.add(e.Msg)
		}
	}
}

// key returns the projection's entry for k, nil when the projection is
// full.
func (p *projFold) key(k string) *projKey {
	pk := p.byKey[k]
	if pk == nil && len(p.keys) < maxProjKeys {
		pk = &projKey{key: k}
		p.byKey[k] = pk
		p.keys = append(p.keys, pk)
	}
	return pk
}

// emit folds e into the projection.
func (p *projFold) emit(e *sim.Event) {
	switch e.Kind {
	case sim.KindProduced:
		if e.Where == p.where && p.where != "" {
			if pk := p.key(e.Key); pk != nil {
				pk.produced++
			}
		}
	case sim.KindProcessed:
		if e.Consumer == p.group && e.HasPos {
			if pk := p.key(e.Key); pk != nil {
				pk.applied.add(e.Msg)
			}
		}
	case sim.KindSeeked:
		// A group-level seek (a replay) is done by the group itself; a
		// member's reset after a failure names the member.
		if e.Consumer == p.group && e.Actor == p.group && !(p.seeked && p.seekAt == e.Tick) {
			p.seeked, p.seekAt, p.before = true, e.Tick, 0
			for _, pk := range p.keys {
				pk.before = pk.applied.n
				p.before += pk.before
				pk.applied = idList{}
			}
		}
	}
}

// view returns the service's outbox counts for the snapshot.
func (o *outboxFold) view(v *OutboxView) {
	v.Rows, v.Published, v.Republished = o.rows, o.published, o.again
	v.Phantoms, v.Lost = o.phantoms.n, o.lost.n
	v.PhantomIDs = append([]sim.ID(nil), o.phantoms.ids...)
	v.LostIDs = append([]sim.ID(nil), o.lost.ids...)
}

// view returns the projection for the snapshot.
func (p *projFold) view() ProjectionView {
	v := ProjectionView{Group: p.group, Seeked: p.seeked, SeekAt: p.seekAt, Before: p.before}
	for _, pk := range p.keys {
		v.Keys = append(v.Keys, ProjectionKey{Key: pk.key, Records: pk.produced, Before: pk.before,
			Applied: pk.applied.n, IDs: append([]sim.ID(nil), pk.applied.ids...)})
	}
	return v
}

// effectKeysOf folds the ledger's outcomes into per-key effect counts of
// the logical consumers named by refs (the ledger's names: a queue
// consumer is its queue), shown as names, in first-seen key order, at most
// maxProjKeys keys. O(origins x consumers).
func effectKeysOf(l *sim.Ledger, refs, names []string) EffectsView {
	v := EffectsView{Consumers: names}
	col := map[string]int{}
	for i, c := range refs {
		col[c] = i
	}
	at := map[string]int{}
	for _, o := range l.Outcomes("") {
		c, ok := col[o.Consumer]
		if !ok {
			continue
		}
		i, ok := at[o.Key]
		if !ok {
			if len(v.Keys) == maxProjKeys {
				v.MoreKeys++
				at[o.Key] = -1
				continue
			}
			i = len(v.Keys)
			at[o.Key] = i
			v.Keys = append(v.Keys, EffectKey{Key: o.Key, Cells: make([]EffectCell, len(names))})
		}
		if i < 0 {
			continue
		}
		cell := &v.Keys[i].Cells[c]
		cell.Effects += o.Effects
		cell.Origins++
		cell.Absorbed += o.Skipped
		if o.Effects > 1 {
			cell.Repeated += o.Effects - 1
		}
	}
	return v
}

// idsText lists ids ("m4 m10"), with "+N" for those counted but not kept,
// cut to w columns.
func idsText(ids []sim.ID, total, w int) string {
	b := make([]byte, 0, 64)
	for i, id := range ids {
		if i > 0 {
			b = append(b, ' ')
		}
		b = id.AppendTo(b)
	}
	if more := total - len(ids); more > 0 {
		b = append(b, " +"...)
		b = append(b, n(more)...)
	}
	return truncate(string(b), w)
}

// writerWords says how a service writes, for its outbox panel.
func writerWords(writer string) string {
	switch writer {
	case "commit_then_publish":
		return "commits the row, then publishes: no outbox table"
	case "publish_then_commit":
		return "publishes, then commits the row: no outbox table"
	}
	return ""
}

// outboxLines shows a service's two writes, business rows against
// published events, with the phantom events (published, no row) and the
// lost ones (row, no event) by ID; then the outbox table's row counts and
// its relays' claims when the service writes through an outbox.
func outboxLines(o *OutboxView, th *Theme, w int) []line {
	pst := th.Normal
	if o.Published != o.Rows {
		pst = th.Duplicate
	}
	items := []line{{{"rows ", th.Dim}, {n(o.Rows), th.Normal}}, {{"events published ", th.Dim}, {n(o.Published), pst}}}
	if o.Republished > 0 {
		items = append(items, line{{SymDuplicate + " " + n(o.Republished) + " re-published", th.Duplicate}})
	}
	out := flow(items, w, th)
	if o.Lost > 0 {
		head := SymLoss + " lost " + n(o.Lost) + " (row, no event): "
		out = append(out, line{{head, th.Loss}, {idsText(o.LostIDs, o.Lost, w-width(head)), th.Loss}})
	}
	if o.Phantoms > 0 {
		head := SymFault + " phantom " + n(o.Phantoms) + " (event, no row): "
		out = append(out, line{{head, th.Loss}, {idsText(o.PhantomIDs, o.Phantoms, w-width(head)), th.Loss}})
	}
	if words := writerWords(o.Writer); words != "" {
		for _, l := range wrap(words, w) {
			out = append(out, line{{l, th.Dim}})
		}
		return out
	}
	dst := th.Normal
	dead := n(o.Dead)
	if o.Dead > 0 {
		dst = th.DLQ
		dead = SymDLQ + " " + dead
	}
	out = append(out, flow([]line{{{"outbox: pending ", th.Dim}, {n(o.Pending), th.Normal}},
		{{"sent ", th.Dim}, {n(o.Sent), th.Good}}, {{"dead ", th.Dim}, {dead, dst}}}, w, th)...)
	for _, r := range o.Relays {
		if r.Crashed {
			out = append(out, line{{SymFault + " " + r.Name, th.Fault}, {" crashed", th.Fault}})
			continue
		}
		ln := line{{"▸ " + r.Name, th.Normal}, {" claims " + n(len(r.Claims)), th.Dim}}
		var b []byte
		for i, c := range r.Claims {
			if i > 0 || len(b) > 0 {
				b = append(b, ' ')
			}
			if i == 0 {
				b = append(b, ": "...)
			}
			b = append(b, '#')
			b = strconv.AppendInt(b, c, 10)
			if len(b) > w {
				break
			}
		}
		ln = append(ln, seg{string(b), th.Normal})
		out = append(out, ln)
	}
	return out
}

// projectionLines shows what a group's projection holds per key: records
// applied of those in the log, the IDs in the order applied and, after a
// seek, what it held before. A key whose every record was applied again
// since the seek is marked rebuilt (✓).
func projectionLines(p *ProjectionView, th *Theme, w int) []line {
	var out []line
	applied, records := 0, 0
	for _, k := range p.Keys {
		applied += k.Applied
		records += k.Records
	}
	var head string
	st := th.Dim
	switch {
	case !p.Seeked:
		head = p.Group + " holds, per key, the records applied (of those in the log):"
	case applied >= records:
		head = SymCheck + " rebuilt since the seek at t=" + n(int(p.SeekAt)) + ": " + n(applied) + " of " + n(records) + " records applied again (before the seek: " + n(p.Before) + ")"
		st = th.Good
	default:
		head = "rebuilding since the seek at t=" + n(int(p.SeekAt)) + ": " + n(applied) + " of " + n(records) + " records applied again (before the seek: " + n(p.Before) + ")"
		st = th.Info
	}
	for _, l := range wrap(head, w) {
		out = append(out, line{{l, st}})
	}
	if len(p.Keys) == 0 {
		return append(out, line{{"(nothing applied yet)", th.Dim}})
	}
	keyW := 3
	for _, k := range p.Keys {
		if kw := width(k.Key); kw > keyW {
			keyW = kw
		}
	}
	if keyW > w/3 {
		keyW = w / 3
	}
	cntW := 0
	for _, k := range p.Keys {
		if cw := len(n(k.Applied)) + 1 + len(n(k.Records)); cw > cntW {
			cntW = cw
		}
	}
	for _, k := range p.Keys {
		sym, sst := " ", th.Normal
		switch {
		case k.Applied >= k.Records && k.Records > 0:
			sym, sst = SymCheck, th.Good
		case k.Applied < k.Records:
			sst = th.Duplicate
		}
		ln := line{{padRight(k.Key, keyW) + " ", th.Title}, {sym, sst}, {padLeft(n(k.Applied)+"/"+n(k.Records), cntW), sst}}
		rest := w - keyW - 2 - cntW
		tail := ""
		if p.Seeked {
			tail = "  before " + n(k.Before)
		}
		room := rest - 1 - width(tail)
		switch {
		case room > 2 && k.Applied > 0:
			ln = append(ln, seg{" " + padRight(idsText(k.IDs, k.Applied, room), room), th.Normal})
		case room > 2 && k.Records > 0:
			ln = append(ln, seg{" " + padRight(n(k.Records-k.Applied)+" not applied yet", room), th.Duplicate})
		case tail != "":
			ln = append(ln, seg{spaces(rest - width(tail)), th.Normal})
		}
		if tail != "" {
			ln = append(ln, seg{tail, th.Dim})
		}
		out = append(out, ln)
	}
	return out
}

// cellText is one effects-table cell: the effects, "↻2" when some message
// was applied more than once, "+1 skip" for absorbed duplicates.
func cellText(c EffectCell) (string, bool) {
	s := n(c.Effects)
	dup := c.Repeated > 0
	if dup {
		s = SymDuplicate + s
	}
	if c.Absorbed > 0 {
		s += " +" + n(c.Absorbed) + "skip"
	}
	return s, dup
}

// effectTableLines shows the compared consumers side by side: one line per
// consumer with its effects and the keys it applied more than once (a
// customer charged twice) or whose duplicates it absorbed, then the
// effects per key, keys flowing in as many columns as fit, those with
// duplicates first.
func effectTableLines(t *EffectsView, th *Theme, w int) []line {
	var out []line
	nameW := 0
	for _, c := range t.Consumers {
		if cw := width(c); cw > nameW {
			nameW = cw
		}
	}
	for ci, c := range t.Consumers {
		eff, keys, rep, abs := 0, 0, 0, 0
		var dupKeys []string
		for _, k := range t.Keys {
			cell := k.Cells[ci]
			if cell.Effects > 0 {
				keys++
			}
			eff += cell.Effects
			rep += cell.Repeated
			abs += cell.Absorbed
			if cell.Repeated > 0 {
				dupKeys = append(dupKeys, k.Key)
			}
		}
		ln := line{{padRight(c, nameW) + " ", th.Title}, {n(eff) + " effects for " + n(keys) + " keys", th.Normal}}
		var tail seg
		switch {
		case rep > 0:
			tail = seg{"  " + SymDuplicate + " " + n(rep) + " repeated:", th.Duplicate}
		case abs > 0:
			tail = seg{"  " + SymCheck + " once each, " + n(abs) + " duplicates skipped", th.Good}
			if lineWidth(ln)+width(tail.text) > w {
				tail.text = "  " + SymCheck + " once each, " + n(abs) + " skipped"
			}
		case eff > 0:
			tail = seg{"  " + SymCheck + " once each", th.Good}
		}
		// The tail goes on a line of its own, indented, when the panel is
		// too narrow for both.
		room := w - lineWidth(ln)
		if width(tail.text) > room && tail.text != "" {
			out = append(out, ln)
			ln, room = line{{spaces(nameW - 1), th.Normal}}, w-nameW+1
		}
		if rep > 0 {
			for i, k := range dupKeys {
				more := ""
				if i < len(dupKeys)-1 {
					more = " +" + n(len(dupKeys)-i-1)
				}
				if width(tail.text)+1+width(k)+width(more) > room {
					tail.text += " +" + n(len(dupKeys)-i)
					break
				}
				tail.text += " " + k
			}
		}
		if tail.text != "" {
			ln = append(ln, tail)
		}
		out = append(out, ln)
	}
	if len(t.Keys) == 0 {
		return out
	}
	// One cell per key: "order-1 ↻2 1", consumers in header order; the
	// keys with duplicates first, so they are in view on a small screen.
	keys := make([]EffectKey, 0, len(t.Keys))
	for pass := 0; pass < 2; pass++ {
		for _, k := range t.Keys {
			if hasDuplicates(k) == (pass == 0) {
				keys = append(keys, k)
			}
		}
	}
	keyW := 0
	colW := make([]int, len(t.Consumers))
	for i, c := range t.Consumers {
		colW[i] = width(c)
	}
	for _, k := range keys {
		if kw := width(k.Key); kw > keyW {
			keyW = kw
		}
		for i, c := range k.Cells {
			s, _ := cellText(c)
			if cw := width(s); cw > colW[i] {
				colW[i] = cw
			}
		}
	}
	cellW := keyW
	for _, cw := range colW {
		cellW += 1 + cw
	}
	cols := (w + 3) / (cellW + 3)
	if cols < 1 {
		cols = 1
	}
	head := line{}
	for c := 0; c < cols && c < len(keys); c++ {
		if c > 0 {
			head = append(head, seg{" │ ", th.Dim})
		}
		h := padRight("key", keyW)
		for i, name := range t.Consumers {
			h += " " + padLeft(name, colW[i])
		}
		head = append(head, seg{h, th.Dim})
	}
	out = append(out, head)
	for r := 0; r*cols < len(keys); r++ {
		ln := line{}
		for c := 0; c < cols; c++ {
			i := r*cols + c
			if i >= len(keys) {
				break
			}
			k := keys[i]
			if c > 0 {
				ln = append(ln, seg{" │ ", th.Dim})
			}
			ln = append(ln, seg{padRight(k.Key, keyW), th.Normal})
			for j, cell := range k.Cells {
				s, dup := cellText(cell)
				st := th.Normal
				switch {
				case cell.Origins == 0:
					s, st = "-", th.Dim
				case dup:
					st = th.Duplicate
				case cell.Absorbed > 0:
					st = th.Good
				}
				ln = append(ln, seg{" " + padLeft(s, colW[j]), st})
			}
		}
		out = append(out, ln)
	}
	if t.MoreKeys > 0 {
		out = append(out, line{{"+" + n(t.MoreKeys) + " more keys", th.Dim}})
	}
	return out
}

// hasDuplicates reports whether some consumer got a duplicate of one of
// k's messages, applied or absorbed.
func hasDuplicates(k EffectKey) bool {
	for _, c := range k.Cells {
		if c.Repeated > 0 || c.Absorbed > 0 {
			return true
		}
	}
	return false
}
