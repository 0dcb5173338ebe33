package tui

import (
	"strconv"

	"github.com/brokerlab/brokerlab/lab"
	"github.com/brokerlab/brokerlab/sim"
	"github.com/gdamore/tcell/v2"
)

// panelKind names what a panel shows.
type panelKind uint8

// The panel kinds, in focus order.
const (
	kindQueue panelKind = iota
	kindTopic
	kindLog
	kindOutbox
	kindProjection // a consumer group's projection (the lesson's subject)
	kindEffects    // effects per key of the compared consumers
	kindMetrics
	kindTrace
	kindNarration
	kindVerdict
)

// panelID identifies a panel: a kind and, for model panels, the index into
// the snapshot's slice of that kind.
type panelID struct {
	kind  panelKind
	index int
}

// isModel reports whether the panel shows a broker model, or a view of
// the lesson's subject beside the models (a projection, the effects
// table): the panels of the model row and the first tabs.
func (id panelID) isModel() bool { return id.kind <= kindEffects }

// modelPanels lists the model panels present in s, in display order, then
// the subject panels (projections, the effects table).
func modelPanels(s *lab.Snapshot) []panelID {
	var ids []panelID
	for i := range s.Queues {
		ids = append(ids, panelID{kindQueue, i})
	}
	for i := range s.Topics {
		ids = append(ids, panelID{kindTopic, i})
	}
	for i := range s.Logs {
		ids = append(ids, panelID{kindLog, i})
	}
	for i := range s.Outboxes {
		ids = append(ids, panelID{kindOutbox, i})
	}
	for i := range s.Projections {
		ids = append(ids, panelID{kindProjection, i})
	}
	if s.EffectTable != nil {
		ids = append(ids, panelID{kindEffects, 0})
	}
	return ids
}

// name returns the model's own name (queue, topic, log or outbox service),
// the title of a subject panel ("projection revenue", "effects"), "" for
// other panels.
func (id panelID) name(s *lab.Snapshot) string {
	switch id.kind {
	case kindProjection, kindEffects:
		return id.title(s)
	case kindQueue:
		return s.Queues[id.index].Name
	case kindTopic:
		return s.Topics[id.index].Name
	case kindLog:
		return s.Logs[id.index].Name
	case kindOutbox:
		return s.Outboxes[id.index].Service
	}
	return ""
}

// where returns the trace component of a model panel, e.g. "queue:orders".
func (id panelID) where(s *lab.Snapshot) string {
	switch id.kind {
	case kindQueue:
		return "queue:" + id.name(s)
	case kindTopic:
		return "topic:" + id.name(s)
	case kindLog:
		return "log:" + id.name(s)
	case kindOutbox:
		return "outbox:" + id.name(s)
	}
	return ""
}

// title returns the frame title of a panel.
func (id panelID) title(s *lab.Snapshot) string {
	switch id.kind {
	case kindQueue:
		if id.index < len(s.Queues) {
			return "queue " + s.Queues[id.index].Name
		}
	case kindTopic:
		if id.index < len(s.Topics) {
			return "topic " + s.Topics[id.index].Name
		}
	case kindLog:
		if id.index < len(s.Logs) {
			return "log " + s.Logs[id.index].Name
		}
	case kindOutbox:
		if id.index < len(s.Outboxes) {
			return "outbox " + s.Outboxes[id.index].Service
		}
	case kindProjection:
		if id.index < len(s.Projections) {
			return "projection " + s.Projections[id.index].Group
		}
	case kindEffects:
		return "effects"
	case kindMetrics:
		return "metrics"
	case kindVerdict:
		return "verdict"
	case kindTrace:
		return "trace"
	case kindNarration:
		if s.Narration.Total > 0 {
			return "narration " + strconv.Itoa(s.Narration.Index) + "/" + strconv.Itoa(s.Narration.Total)
		}
		return "narration"
	}
	return "?"
}

// contentLines returns the content of a non-trace panel for an inner area
// of w x h cells. The result is bounded by the snapshot caps.
func contentLines(s *lab.Snapshot, th *Theme, id panelID, w, h int) []line {
	switch id.kind {
	case kindQueue:
		if id.index < len(s.Queues) {
			return queueLines(&s.Queues[id.index], th, w, h)
		}
	case kindTopic:
		if id.index < len(s.Topics) {
			return topicLines(&s.Topics[id.index], th, w)
		}
	case kindLog:
		if id.index < len(s.Logs) {
			return logLines(&s.Logs[id.index], th, w)
		}
	case kindOutbox:
		if id.index < len(s.Outboxes) {
			return outboxLines(&s.Outboxes[id.index], th, w)
		}
	case kindProjection:
		if id.index < len(s.Projections) {
			return projectionLines(&s.Projections[id.index], th, w)
		}
	case kindEffects:
		if s.EffectTable != nil {
			return effectTableLines(s.EffectTable, th, w)
		}
	case kindMetrics:
		return metricsLines(s, th, w, h)
	case kindNarration:
		return narrationLines(s, th, w)
	case kindVerdict:
		return verdictLines(s, th, w)
	}
	return nil
}

// standingLook returns the symbol and style of an expectation's standing.
func standingLook(st lab.Standing, th *Theme) (string, tcell.Style) {
	switch st {
	case lab.Holds:
		return SymCheck, th.Good
	case lab.Broken:
		return SymLoss, th.Loss
	}
	return "…", th.Dim
}

// verdictStyle returns the style of the verdict line.
func verdictStyle(v *lab.Verdict, th *Theme) tcell.Style {
	switch {
	case v.Count(lab.Broken) > 0 || v.Final && !v.Pass():
		return th.Loss
	case v.Final || v.Pass():
		return th.Good
	}
	return th.Normal
}

// verdictLines shows the verdict line, then one line per expectation:
// its standing, the expectation and what was measured, wrapped.
func verdictLines(s *lab.Snapshot, th *Theme, w int) []line {
	v := &s.Verdict
	var out []line
	for _, l := range wrap(v.Line(), w) {
		out = append(out, line{{l, verdictStyle(v, th).Bold(true)}})
	}
	for _, j := range v.Judgments {
		sym, st := standingLook(j.Standing, th)
		text := j.Text + " " + j.Standing.String()
		if j.Measured != "" {
			text += " (" + j.Measured + ")"
		}
		for i, l := range wrap(text, w-2) {
			if i == 0 {
				out = append(out, line{{sym + " ", st}, {l, th.Normal}})
			} else {
				out = append(out, line{{"  " + l, th.Dim}})
			}
		}
	}
	return out
}

// verdictStrip is the verdict in one row: a symbol per expectation, then
// the verdict line.
func verdictStrip(s *lab.Snapshot, th *Theme, w int) line {
	v := &s.Verdict
	l := line{{"verdict ", th.Dim}}
	for _, j := range v.Judgments {
		sym, st := standingLook(j.Standing, th)
		l = append(l, seg{sym, st})
	}
	full := append(l, seg{" " + v.Line(), verdictStyle(v, th)})
	if lineWidth(full) <= w || len(v.Judgments) == 0 {
		return full
	}
	// Narrower: the symbols and a short verdict, then the not-yet count
	// left to the symbols, then the short verdict alone, so the numbers
	// are never cut.
	st := verdictStyle(v, th)
	syms := l[1:]
	for _, c := range []line{
		append(append(line(nil), syms...), seg{" " + shortVerdict(v, true), st}),
		append(append(line(nil), syms...), seg{" " + shortVerdict(v, false), st}),
		{{shortVerdict(v, true), st}},
	} {
		if lineWidth(c) <= w {
			return c
		}
	}
	return line{{shortVerdict(v, false), st}}
}

// shortVerdict is the verdict in about 25 columns, for a narrow strip:
// "PASS 6/6", "FAIL 4/6, 2 broken", "4/7 hold, 3 not yet" ("4/7 hold"
// without notYet).
func shortVerdict(v *lab.Verdict, notYet bool) string {
	total, holds := len(v.Judgments), v.Count(lab.Holds)
	t := n(holds) + "/" + n(total)
	switch {
	case v.Final && v.Pass():
		return "PASS " + t
	case v.Final:
		t = "FAIL " + t
	default:
		t += " hold"
		if k := v.Count(lab.NotYet); k > 0 && notYet {
			t += ", " + n(k) + " not yet"
		}
	}
	if k := v.Count(lab.Broken); k > 0 {
		t += ", " + n(k) + " broken"
	}
	if v.Errors > 0 {
		t += ", " + n(v.Errors) + " errors"
	}
	return t
}

// effectsLines shows the per-consumer effect counts: "billing 20 effects,
// 3 repeated (worst 2×)", "safe 20 effects, 3 absorbed".
func effectsLines(s *lab.Snapshot, th *Theme, w int) []line {
	var items []line
	for _, e := range s.Effects {
		if e.Applied == 0 && e.Absorbed == 0 && e.Repeats == 0 {
			continue
		}
		l := line{{e.Consumer + " ", th.Title}, {plural(e.Applied, "effect"), th.Normal}}
		if e.Repeated > 0 {
			l = append(l, seg{" " + SymDuplicate + " " + n(e.Repeated) + " repeated, worst " + n(e.Worst) + "×", th.Duplicate})
		}
		if e.Absorbed > 0 {
			l = append(l, seg{" " + SymDuplicate + " " + n(e.Absorbed) + " absorbed", th.Good})
		}
		items = append(items, l)
	}
	return flow(items, w, th)
}

// n formats an int.
func n(v int) string { return strconv.Itoa(v) }

// plural returns "1 effect", "2 effects": v and the noun, with an "s"
// unless v is 1.
func plural(v int, noun string) string {
	if v == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(v) + " " + noun + "s"
}

// queueLines lays out a queue: counts, then one block of chips per area.
// Chips flow over the rows the area gets; what does not fit is "+N".
func queueLines(q *lab.QueueView, th *Theme, w, h int) []line {
	items := []line{
		{{"visible ", th.Dim}, {n(q.Visible), th.Normal}},
		{{"in flight ", th.Dim}, {n(q.InFlight), th.Normal}},
		{{"delayed ", th.Dim}, {n(q.Delayed), th.Normal}},
		{{"oldest ", th.Dim}, {strconv.FormatInt(int64(q.OldestAge), 10) + "t", th.Normal}},
	}
	if q.Redeliveries > 0 {
		items = append(items, line{{SymDuplicate + " redelivered " + n(q.Redeliveries), th.Duplicate}})
	}
	if q.DLQName != "" {
		st := th.Normal
		if q.DLQDepth > 0 {
			st = th.DLQ
		}
		items = append(items, line{{SymDLQ + " " + q.DLQName + " " + n(q.DLQDepth), st}})
	}
	out := flow(items, w, th)
	areas := []lab.Where{lab.WhereVisible, lab.WhereInFlight, lab.WhereDelayed}
	if q.DLQName != "" {
		areas = append(areas, lab.WhereDLQ)
	}
	// Group chips by area, keeping snapshot order.
	var byArea [4][]lab.Chip
	for _, c := range q.Chips {
		if int(c.Where) < len(byArea) && len(byArea[c.Where]) < lab.MaxChips {
			byArea[c.Where] = append(byArea[c.Where], c)
		}
	}
	const labelW = 10
	cw := w - labelW
	if cw < 8 {
		cw = 8
	}
	// Rows each area needs to show all its chips, then a fair share of h.
	need := make([]int, len(areas))
	for i, a := range areas {
		need[i] = chipRows(byArea[a], cw)
	}
	rows := make([]int, len(areas))
	avail := h - len(out)
	for i := range rows {
		rows[i] = 1
		avail--
	}
	for more := true; more && avail > 0; {
		more = false
		for i := range rows {
			if avail > 0 && rows[i] < need[i] {
				rows[i]++
				avail--
				more = true
			}
		}
	}
	for i, a := range areas {
		label, st := a.String(), th.Dim
		if a == lab.WhereDLQ {
			label, st = SymDLQ+" DLQ", th.DLQ
		}
		out = append(out, chipBlock(byArea[a], q.Count(a), label, st, labelW, cw, rows[i], th)...)
	}
	return out
}

// flow packs items into lines of at most w columns, two spaces apart. An
// item wider than w gets a line of its own and is clipped when drawn.
func flow(items []line, w int, th *Theme) []line {
	var out []line
	var cur line
	x := 0
	for _, it := range items {
		iw := lineWidth(it)
		if x > 0 && x+2+iw > w {
			out = append(out, cur)
			cur, x = nil, 0
		}
		if x > 0 {
			cur = append(cur, seg{"  ", th.Normal})
			x += 2
		}
		cur = append(cur, it...)
		x += iw
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// chipText returns the text of a chip: the ID, the receive count after "×"
// once received, and a ↻ in front of a redelivery.
func chipText(c lab.Chip) string {
	b := make([]byte, 0, 16)
	if c.ReceiveCount > 1 || c.Seen {
		b = append(b, SymDuplicate...)
	}
	b = c.ID.AppendTo(b)
	if c.ReceiveCount > 0 {
		b = append(b, "×"...)
		b = strconv.AppendInt(b, int64(c.ReceiveCount), 10)
	}
	return string(b)
}

// chipRows returns the rows needed to show every chip in width w.
func chipRows(chips []lab.Chip, w int) int {
	rows, x := 1, 0
	for _, c := range chips {
		cw := width(chipText(c))
		if x > 0 && x+1+cw > w {
			rows++
			x = 0
		}
		if x > 0 {
			x++
		}
		x += cw
	}
	return rows
}

// chipBlock lays out one area in at most rows rows. total is the exact
// number of messages in the area; the rest is shown as "+N".
func chipBlock(chips []lab.Chip, total int, label string, lst tcell.Style, labelW, w, rows int, th *Theme) []line {
	head := truncate(label, labelW-1)
	pad := labelW - width(head)
	out := []line{{{head, lst}, {spaces(pad), th.Normal}}}
	row, x := 0, 0
	for i, c := range chips {
		text := chipText(c)
		cw := width(text)
		rest := total - i
		reserve := 0
		if row == rows-1 && rest > 1 {
			reserve = 1 + width("+"+n(rest-1))
		}
		if x > 0 && x+1+cw+reserve > w {
			if row == rows-1 {
				out[row] = append(out[row], seg{" +" + n(rest), th.Dim})
				return out
			}
			row++
			x = 0
			out = append(out, line{{spaces(labelW), th.Normal}})
		}
		if x > 0 {
			out[row] = append(out[row], seg{" ", th.Normal})
			x++
		}
		st := th.Normal
		switch {
		case c.Where == lab.WhereDLQ:
			st = th.DLQ
		case c.ReceiveCount > 1 || c.Seen:
			st = th.Duplicate
		case c.Where == lab.WhereInFlight:
			st = th.Info
		}
		out[row] = append(out[row], seg{text, st})
		x += cw
	}
	if more := total - len(chips); more > 0 {
		out[row] = append(out[row], seg{" +" + n(more), th.Dim})
	}
	return out
}

// spaces returns k spaces.
func spaces(k int) string {
	const s = "                                                                                "
	if k <= 0 {
		return ""
	}
	if k <= len(s) {
		return s[:k]
	}
	b := make([]byte, k)
	for i := range b {
		b[i] = ' '
	}
	return string(b)
}

// padRight pads s with spaces to w columns, truncating when longer.
func padRight(s string, w int) string {
	s = truncate(s, w)
	return s + spaces(w-width(s))
}

// padLeft right-aligns s in w columns.
func padLeft(s string, w int) string {
	return spaces(w-width(s)) + s
}

// topicLines shows a topic's subscribers as a table whose columns fit
// their contents; narrow panels get short state words.
func topicLines(t *lab.TopicView, th *Theme, w int) []line {
	out := flow([]line{{{"published ", th.Dim}, {n(t.Published), th.Normal}},
		{{"subscribers ", th.Dim}, {n(len(t.Subscribers)), th.Normal}}}, w, th)
	heads := []string{"buf", "deliv", "miss", "drop"}
	colW := make([]int, len(heads))
	nameW := 4
	for i, hd := range heads {
		colW[i] = len(hd)
	}
	for _, s := range t.Subscribers {
		if k := width(s.Name); k > nameW {
			nameW = k
		}
		for i, v := range []int{s.Buffered, s.Delivered, s.Missed, s.Dropped + 1} {
			if k := len(n(v)); k > colW[i] {
				colW[i] = k
			}
		}
	}
	on, off, stateW := "online", "offline", 7
	fixed := 2 + 1 + stateW
	for _, c := range colW {
		fixed += 1 + c
	}
	if fixed+nameW > w {
		on, off, stateW = "on", "off", 3
		fixed -= 4
	}
	if nameW > w-fixed {
		nameW = w - fixed
	}
	if nameW < 4 {
		nameW = 4
	}
	stateHead := "state"
	if stateW < len(stateHead) {
		stateHead = ""
	}
	hd := "  " + padRight("name", nameW) + " " + padRight(stateHead, stateW)
	for i, h := range heads {
		hd += " " + padLeft(h, colW[i])
	}
	out = append(out, line{{hd, th.Dim}})
	for _, s := range t.Subscribers {
		sym, state, st := "●", on, th.Good
		if !s.Online {
			sym, state, st = SymMissed, off, th.Missed
		}
		l := line{{sym + " ", st}, {padRight(s.Name, nameW) + " ", th.Normal}, {padRight(state, stateW), st},
			{" " + padLeft(n(s.Buffered), colW[0]), th.Normal}, {" " + padLeft(n(s.Delivered), colW[1]), th.Normal}}
		mst := th.Normal
		if s.Missed > 0 {
			mst = th.Missed
		}
		l = append(l, seg{" " + padLeft(n(s.Missed), colW[2]), mst})
		if s.Dropped > 0 {
			l = append(l, seg{" " + padLeft(SymLoss+n(s.Dropped), colW[3]), th.Loss})
		} else {
			l = append(l, seg{" " + padLeft("0", colW[3]), th.Normal})
		}
		out = append(out, l)
	}
	return out
}

// groupLetter returns the cursor letter of group i.
func groupLetter(i int) byte {
	if i < 26 {
		return byte('A' + i)
	}
	return '*'
}

// logLines draws each partition as a row of offsets with one cursor per
// group at its committed offset, then a legend line per group. Offsets are
// scaled to the bar width, so the cost is the bar width, not the log size.
func logLines(l *lab.LogView, th *Theme, w int) []line {
	var hi int64 = 1
	rangeW := 0
	for _, p := range l.Partitions {
		if p.End > hi {
			hi = p.End
		}
		if k := len(strconv.FormatInt(p.Start, 10)) + 2 + len(strconv.FormatInt(p.End, 10)); k > rangeW {
			rangeW = k
		}
	}
	labelW := 2 + len(n(len(l.Partitions)))
	bw := w - labelW - 1 - rangeW - 1
	if bw < 4 {
		bw = 4
	}
	cells := int64(bw - 1) // the last cell holds a cursor at the end offset
	oneToOne := hi <= cells
	col := func(o int64) int {
		if o < 0 {
			o = 0
		}
		if o > hi {
			o = hi
		}
		if oneToOne {
			return int(o)
		}
		return int(o * cells / hi)
	}
	var out []line
	bar := make([]byte, 0, bw*3)
	for pi, p := range l.Partitions {
		cs, ce := col(p.Start), col(p.End)
		if p.End > p.Start && ce == cs {
			ce = cs + 1
		}
		bar = bar[:0]
		marks := make([]byte, bw)
		for gi, g := range l.Groups {
			if pi < len(g.Committed) {
				c := col(g.Committed[pi])
				if c < bw {
					if marks[c] != 0 {
						marks[c] = '*'
					} else {
						marks[c] = groupLetter(gi)
					}
				}
			}
		}
		ln := line{{padRight("p"+n(p.Index), labelW), th.Dim}}
		run, runSt := bar, th.Normal
		flush := func() {
			if len(run) > 0 {
				ln = append(ln, seg{string(run), runSt})
				run = run[:0]
			}
		}
		for c := 0; c < bw; c++ {
			if marks[c] != 0 {
				flush()
				ln = append(ln, seg{string(marks[c]), th.Cursor})
				continue
			}
			var r string
			var st tcell.Style
			switch {
			case c < cs:
				r, st = "·", th.Dim
			case c < ce && oneToOne:
				r, st = "■", th.Normal
			case c < ce:
				r, st = "━", th.Normal
			default:
				r, st = " ", th.Normal
			}
			if st != runSt {
				flush()
				runSt = st
			}
			run = append(run, r...)
		}
		flush()
		ln = append(ln, seg{" " + strconv.FormatInt(p.Start, 10) + ".." + strconv.FormatInt(p.End, 10), th.Dim})
		out = append(out, ln)
	}
	for gi, g := range l.Groups {
		lag := g.TotalLag()
		lst := th.Normal
		if lag > 0 {
			lst = th.Duplicate
		}
		at := make([]byte, 0, 32)
		for i, c := range g.Committed {
			if i > 0 {
				at = append(at, ',')
			}
			at = strconv.AppendInt(at, c, 10)
		}
		items := []line{
			{{string(groupLetter(gi)), th.Cursor}, {" " + g.Name, th.Title}},
			{{"gen ", th.Dim}, {n(g.Generation), th.Normal}},
			{{"lag ", th.Dim}, {strconv.FormatInt(lag, 10), lst}},
			{{"at ", th.Dim}, {string(at), th.Normal}},
		}
		if len(g.Members) > 0 {
			m := ""
			for i, x := range g.Members {
				if i > 0 {
					m += ","
				}
				m += x
			}
			items = append(items, line{{"[" + m + "]", th.Dim}})
		}
		for i, l := range flow(items, w-2, th) {
			if i > 0 {
				l = append(line{{"  ", th.Normal}}, l...)
			}
			out = append(out, l)
		}
	}
	return out
}

// sparkRunes are the eight levels of a sparkline.
var sparkRunes = []rune("▁▂▃▄▅▆▇█")

// sparkline renders the newest w values of vs scaled to their maximum.
// Zero values are blank; any positive value shows at least the lowest bar.
func sparkline(vs []float64, w int) string {
	if w <= 0 {
		return ""
	}
	if len(vs) > w {
		vs = vs[len(vs)-w:]
	}
	max := 0.0
	for _, v := range vs {
		if v > max {
			max = v
		}
	}
	b := make([]rune, 0, w)
	for i := len(vs); i < w; i++ {
		b = append(b, ' ')
	}
	for _, v := range vs {
		if v <= 0 || max <= 0 {
			b = append(b, ' ')
			continue
		}
		lvl := int(v / max * 8)
		if lvl >= 8 {
			lvl = 7
		}
		b = append(b, sparkRunes[lvl])
	}
	return string(b)
}

// seriesLook returns the symbol and style of a series.
func seriesLook(s *lab.Series, th *Theme) (string, tcell.Style) {
	switch s.Kind {
	case lab.SeriesDLQDepth:
		return SymDLQ, th.DLQ
	case lab.SeriesDuplicates:
		return SymDuplicate, th.Duplicate
	case lab.SeriesLost:
		return SymLoss, th.Loss
	case lab.SeriesLag:
		return "≡", th.Info
	}
	return "↑", th.Good
}

// ledgerLine summarises the ledger with symbols. Its DLQ count is the
// copies in a DLQ now; after a redrive the copies redriven follow it, as
// lab.DLQWords words them, so an emptied DLQ does not read as if nothing
// was ever dead-lettered.
func ledgerLine(l *lab.LedgerSummary, th *Theme) line {
	pick := func(v int, st tcell.Style) tcell.Style {
		if v > 0 {
			return st
		}
		return th.Normal
	}
	out := line{
		{SymLoss + " lost " + n(l.Lost), pick(l.Lost, th.Loss)},
		{"  " + SymDuplicate + " dup " + n(l.Duplicates), pick(l.Duplicates, th.Duplicate)},
		{"  " + SymDLQ + " dlq " + n(l.DeadLettered), pick(l.DeadLettered, th.DLQ)},
	}
	if l.Redriven > 0 {
		out = append(out, seg{"  " + SymRedrive + " redriven " + n(l.Redriven), th.DLQ})
	}
	return append(out,
		seg{"  " + SymMissed + " missed " + n(l.Missed), pick(l.Missed, th.Missed)},
		seg{"  msgs " + n(l.Messages), th.Dim})
}

// dlqSymbols says what lab.DLQWords says, in the symbols of the narrow
// trace title: the copies in a DLQ now and, after a redrive, the copies
// redriven, "☠0 ⤴4". The DLQ count alone would read 0 after a redrive,
// beside totals, as if nothing was ever dead-lettered.
func dlqSymbols(l *lab.LedgerSummary) string {
	s := SymDLQ + n(l.DeadLettered)
	if l.Redriven > 0 {
		s += " " + SymRedrive + n(l.Redriven)
	}
	return s
}

// formatValue prints a metric value compactly.
func formatValue(v float64) string {
	if v == float64(int64(v)) {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// metricsLines shows the ledger summary and one sparkline per series; when
// the series do not fit in h rows and w is wide, they go in two columns.
func metricsLines(s *lab.Snapshot, th *Theme, w, h int) []line {
	out := []line{ledgerLine(&s.Ledger, th)}
	out = append(out, effectsLines(s, th, w)...)
	cols := 1
	if len(s.Series) > h-1 && w >= 80 {
		cols = 2
	}
	colW := w / cols
	var cells []line
	for i := range s.Series {
		sr := &s.Series[i]
		sym, st := seriesLook(sr, th)
		const labelW, valW = 15, 7
		sw := colW - labelW - valW - 1
		if sw < 1 {
			sw = 1
		}
		cells = append(cells, line{
			{sym + " ", st}, {padRight(sr.Name(), labelW-2), th.Dim},
			{sparkline(sr.Values, sw), st}, {padLeft(formatValue(sr.Last()), valW), th.Normal}, {" ", th.Normal},
		})
	}
	if cols == 1 {
		return append(out, cells...)
	}
	half := (len(cells) + 1) / 2
	for i := 0; i < half; i++ {
		l := append(line{}, cells[i]...)
		if i+half < len(cells) {
			l = append(l, cells[i+half]...)
		}
		out = append(out, l)
	}
	return out
}

// narrationLines wraps the narration text.
func narrationLines(s *lab.Snapshot, th *Theme, w int) []line {
	text := s.Narration.Text
	if text == "" {
		return []line{{{"(no narration)", th.Dim}}}
	}
	var out []line
	for _, l := range wrap(text, w) {
		out = append(out, line{{l, th.Normal}})
	}
	return out
}

// matchEvent reports whether e matches the trace filter f: the message ID
// exactly ("m12" or "12"), or a key, correlation ID or component (Where,
// "queue:orders") containing f.
func matchEvent(e *sim.Event, f string, id sim.ID) bool {
	if f == "" {
		return true
	}
	if id != 0 && e.Msg == id {
		return true
	}
	return contains(e.Key, f) || contains(e.Corr, f) || contains(e.Where, f)
}

// contains reports whether sub is within s.
func contains(s, sub string) bool {
	if len(sub) > len(s) {
		return false
	}
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// appendTraceText appends the trace line of e with its mark, the important
// part first: tick, kind, message and mark, then who (actor or consumer),
// where, the key and the rest of the event's text form.
func appendTraceText(b []byte, e *sim.Event, m lab.Mark) []byte {
	b = append(b, "t="...)
	b = strconv.AppendInt(b, int64(e.Tick), 10)
	b = append(b, ' ')
	b = append(b, e.Kind...)
	if e.Kind == sim.KindNarration {
		// The narration panel shows the text; the trace says which step.
		b = append(b, ' ')
		d := e.Detail
		if i := indexByte(d, ' '); i > 0 {
			d = d[:i]
		}
		return append(b, d...)
	}
	if e.Msg != 0 {
		b = append(b, ' ')
		b = e.Msg.AppendTo(b)
	}
	if t := m.Text(); t != "" {
		b = append(b, " ("...)
		b = append(b, t...)
		b = append(b, ')')
	}
	switch {
	case e.Actor != "":
		b = append(b, " by "...)
		b = append(b, e.Actor...)
	case e.Consumer != "":
		b = append(b, " for "...)
		b = append(b, e.Consumer...)
	}
	if e.Where != "" {
		b = append(b, ' ')
		b = append(b, e.Where...)
	}
	if e.Key != "" {
		b = append(b, " key="...)
		b = append(b, e.Key...)
	}
	if e.Corr != "" {
		b = append(b, " corr="...)
		b = append(b, e.Corr...)
	}
	if e.Attempt > 0 {
		b = append(b, " try="...)
		b = strconv.AppendInt(b, int64(e.Attempt), 10)
	}
	if e.Origin != 0 {
		b = append(b, " from="...)
		b = e.Origin.AppendTo(b)
	}
	if e.HasPos {
		b = append(b, " p="...)
		b = strconv.AppendInt(b, int64(e.Partition), 10)
		b = append(b, " off="...)
		b = strconv.AppendInt(b, e.Offset, 10)
	}
	if e.Cause != "" {
		b = append(b, " cause="...)
		b = append(b, e.Cause...)
	}
	if e.Rule != "" {
		b = append(b, " rule="...)
		b = append(b, e.Rule...)
	}
	if e.Detail != "" {
		b = append(b, ' ')
		b = strconv.AppendQuote(b, e.Detail)
	}
	return b
}

// indexByte returns the index of the first c in s, or -1.
func indexByte(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}

// speedText formats a speed in ticks per second.
func speedText(v float64) string {
	if v <= 0 {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', -1, 64) + " t/s"
}
