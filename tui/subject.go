package tui

import (
	"strconv"

	"github.com/brokerlab/brokerlab/lab"
	"github.com/brokerlab/brokerlab/sim"
)

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
func outboxLines(o *lab.OutboxView, th *Theme, w int) []line {
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
func projectionLines(p *lab.ProjectionView, th *Theme, w int) []line {
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
func cellText(c lab.EffectCell) (string, bool) {
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
func effectTableLines(t *lab.EffectsView, th *Theme, w int) []line {
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
	keys := make([]lab.EffectKey, 0, len(t.Keys))
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
func hasDuplicates(k lab.EffectKey) bool {
	for _, c := range k.Cells {
		if c.Repeated > 0 || c.Absorbed > 0 {
			return true
		}
	}
	return false
}
