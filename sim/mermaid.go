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
		switch {
		case arrow != "":
			body.WriteString("    " + from + arrow + to + ": " + text + "\n")
		case e.Actor != "" && e.Actor != where:
			// What an actor did at a component (processed, failed,
			// crashed) is a note over both.
			body.WriteString("    Note over " + wid + "," + id(e.Actor) + ": " + text + "\n")
		default:
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

// mermaidEscaper writes each character that would end or break a Mermaid
// statement, or that Mermaid would read as markup, as Mermaid's entity
// code, which the diagram shows as the character again: "#" as "#35;",
// ";" as "#59;", ":" as "#58;", "<", ">" and "&" as "#60;", "#62;" and
// "#38;" (so "<b>" is shown, not rendered), "%" as "#37;" (Mermaid reads
// "%%" anywhere as the start of a comment). A line break or tab is a
// space. The replacer makes one pass, so an entity's own "#" and ";" are
// not replaced again.
var mermaidEscaper = strings.NewReplacer("#", "#35;", ";", "#59;", ":", "#58;", "<", "#60;", ">", "#62;", "&", "#38;",
	"%", "#37;", "\n", " ", "\r", " ", "\t", " ")

// mermaidEscape returns s as Mermaid text that shows s (see
// mermaidEscaper).
func mermaidEscape(s string) string { return mermaidEscaper.Replace(s) }
