package sim

import (
	"bufio"
	"io"
	"strconv"
	"strings"
)

// WriteMermaid writes events as a Mermaid sequenceDiagram, for handouts.
// Components and actors become participants in order of first appearance.
// Sends, publishes, acks and commits are arrows from the actor to the
// component; receives, deliveries and polls are arrows back; misses and
// drops are crossed arrows; everything else is a note over the component.
// At most max events are drawn (0 means all); a final note says how many
// were left out. The output never depends on map iteration order.
func WriteMermaid(w io.Writer, events []Event, max int) error {
	bw := bufio.NewWriter(w)
	ids := map[string]string{}
	var order []string
	id := func(name string) string {
		if v, ok := ids[name]; ok {
			return v
		}
		v := "p" + strconv.Itoa(len(order)+1)
		ids[name] = v
		order = append(order, name)
		return v
	}
	shown := events
	if max > 0 && len(shown) > max {
		shown = shown[:max]
	}
	var body strings.Builder
	for i := range shown {
		e := &shown[i]
		where := e.Where
		if where == "" {
			where = "world"
		}
		wid := id(where)
		text := mermaidText(e)
		arrow, from, to := "", "", ""
		if e.Actor != "" {
			aid := id(e.Actor)
			switch e.Kind {
			case KindSent, KindPublished, KindProduced, KindRelayed:
				arrow, from, to = "->>", aid, wid
			case KindAcked, KindNacked, KindCommitted, KindVisibility, KindSeeked:
				arrow, from, to = "-->>", aid, wid
			case KindReceived, KindDelivered, KindPolled, KindRedelivered:
				arrow, from, to = "->>", wid, aid
			case KindMissed, KindDropped:
				arrow, from, to = "--x", wid, aid
			}
		}
		if arrow != "" {
			body.WriteString("    " + from + arrow + to + ": " + text + "\n")
		} else {
			body.WriteString("    Note over " + wid + ": " + text + "\n")
		}
	}
	if len(shown) < len(events) {
		body.WriteString("    Note over " + id("world") + ": " + strconv.Itoa(len(events)-len(shown)) + " more events not shown\n")
	}
	bw.WriteString("sequenceDiagram\n")
	for _, name := range order {
		bw.WriteString("    participant " + ids[name] + " as " + mermaidEscape(strings.ReplaceAll(name, ":", "/")) + "\n")
	}
	bw.WriteString(body.String())
	return bw.Flush()
}

func mermaidText(e *Event) string {
	b := []byte("t" + strconv.FormatInt(int64(e.Tick), 10) + " " + string(e.Kind))
	if e.Msg != 0 {
		b = append(b, ' ')
		b = e.Msg.AppendTo(b)
	}
	if e.Key != "" {
		b = append(b, " key "+e.Key...)
	}
	if e.Attempt > 1 {
		b = append(b, " try "+strconv.Itoa(e.Attempt)...)
	}
	if e.HasPos {
		b = append(b, " p"+strconv.Itoa(e.Partition)+" off "+strconv.FormatInt(e.Offset, 10)...)
	}
	if e.Rule != "" {
		b = append(b, " rule "+e.Rule...)
	}
	if e.Detail != "" {
		b = append(b, " - "+e.Detail...)
	}
	return mermaidEscape(string(b))
}

// mermaidEscape removes what would end or break a Mermaid statement. A
// "#" is written as Mermaid's entity code "#35;", which the diagram shows
// as "#" again ("charger#1" stays "charger#1"); the replacer makes one pass,
// so the entity's own ";" is not replaced.
func mermaidEscape(s string) string {
	r := strings.NewReplacer(";", ",", "#", "#35;", "\n", " ", "\r", " ", "\t", " ", "%%", "%", ":", " ")
	return r.Replace(s)
}
