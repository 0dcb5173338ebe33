package sim

import (
	"bytes"
	"testing"
)

// TestTextWriterMatchesAppendText checks that the writer's caches never
// change a line: every line equals AppendText of the same event, across
// repeated and changing ticks, message IDs, keys and actors, plain and
// quoted.
func TestTextWriterMatchesAppendText(t *testing.T) {
	keys := []string{"", "k", "kunde 1", "k", "a=b", "kunde-1", `"q"`, "kunde-1", "ü"}
	actors := []string{"", "w", "worker 2", "w", "worker-1"}
	var events []Event
	for i := 0; i < 400; i++ {
		e := Event{
			Tick:    Tick(i/7 - 3),
			Kind:    []Kind{KindSent, KindReceived, KindAcked, KindProduced}[i%4],
			Where:   []string{"queue:orders", "", "log:x"}[i%3],
			Msg:     ID(i / 3 % 5 * 1234567),
			Key:     keys[i%len(keys)],
			Actor:   actors[i%len(actors)],
			Attempt: []int{0, 1, 9, 10, -2, 123}[i%6],
		}
		if i%11 == 0 {
			e.HasPos, e.Partition, e.Offset = true, i%4, int64(i)
		}
		if i%13 == 0 {
			e.Corr, e.Rule, e.Detail = "c 1", "r", "a \"detail\""
		}
		events = append(events, e)
	}
	var got, want bytes.Buffer
	tw := NewTextWriter(&got)
	for i := range events {
		e := events[i]
		tw.Emit(&e)
		want.Write(AppendText(nil, &events[i]))
		want.WriteByte('\n')
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Fatalf("text writer differs from AppendText:\n got: %s\nwant: %s", got.String(), want.String())
	}
}
