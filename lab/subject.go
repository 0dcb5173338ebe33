package lab

import (
	"github.com/brokerlab/brokerlab/outbox"
	"github.com/brokerlab/brokerlab/sim"
)

// The lesson's subject is folded from the trace, like every other view:
// subjectFold is a trace sink of the Session, next to the
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

// outboxSubject is what the trace says about one service's two writes:
// business rows committed (written, or stored in the outbox table) and
// events published for them.
type outboxSubject struct {
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
	outboxes []*outboxSubject
	projs    []*projFold
}

// newSubjectFold returns a fold for the services and the groups named;
// logOf maps each group to its log's trace component ("log:orders").
func newSubjectFold(services, groups []string, logOf map[string]string) *subjectFold {
	f := &subjectFold{}
	for _, s := range services {
		f.outboxes = append(f.outboxes, &outboxSubject{name: s, where: "outbox:" + s})
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
func (o *outboxSubject) emit(e *sim.Event) {
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
func (o *outboxSubject) view(v *OutboxView) {
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
