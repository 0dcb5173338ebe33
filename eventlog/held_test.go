package eventlog_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/sim"
)

// slowHandler takes ticks per record and notes every message it handles.
type slowHandler struct {
	ticks sim.Tick
	seen  []string
	then  func() // called after the first record, if set
}

func (h *slowHandler) Handle(d *sim.Delivery) error {
	h.seen = append(h.seen, fmt.Sprintf("%s=%s@%d", d.Msg.Key, d.Msg.Body, d.Msg.Created))
	d.Apply("")
	if h.then != nil {
		h.then()
		h.then = nil
	}
	return nil
}

func (h *slowHandler) Duration(*sim.Delivery) sim.Tick { return h.ticks }

// heldRun produces 6 records with distinct keys and bodies into one
// partition at tick 0 (every other one created a tick earlier, as a relay
// sends), and a member polls them in one batch and handles them slowly.
func heldRun(t *testing.T, cfg eventlog.Config, h *slowHandler, log **eventlog.Log) []string {
	t.Helper()
	w, err := sim.New(sim.Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Name = "held"
	topic, err := eventlog.New(w, cfg)
	if err != nil {
		t.Fatal(err)
	}
	*log = topic
	var want []string
	for i := range 6 {
		m := w.Env().NewMessage(fmt.Sprintf("k%d", i), []byte(fmt.Sprintf("v%d", i)), sim.Headers{})
		if i%2 == 1 {
			m.Created--
		}
		if err := topic.Publish(m); err != nil {
			t.Fatal(err)
		}
		want = append(want, fmt.Sprintf("k%d=v%d@%d", i, i, m.Created))
	}
	g, err := eventlog.NewGroup(w, topic, eventlog.GroupConfig{Name: "g", Reset: eventlog.ResetEarliest})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eventlog.NewMember(w, g, eventlog.MemberConfig{Name: "m", Handler: h, Batch: 6}); err != nil {
		t.Fatal(err)
	}
	if err := w.Run(40); err != nil {
		t.Fatal(err)
	}
	return want
}

// A member handling a batch slowly keeps the records of it intact while
// retention deletes them from the log under it.
func TestHeldRecordsSurviveRetention(t *testing.T) {
	h := &slowHandler{ticks: 3}
	var topic *eventlog.Log
	want := heldRun(t, eventlog.Config{RetentionTicks: 2}, h, &topic)
	// Retention deletes the batch at tick 2, while the member handles k0;
	// it goes on with what it polled (k1 and k2 after the deletion), each
	// as it was produced.
	if len(h.seen) < 3 || !slices.Equal(h.seen, want[:len(h.seen)]) {
		t.Errorf("handled %v\nwant a prefix of at least 3 of %v", h.seen, want)
	}
	if m := topic.Metrics(); m.Expired != 6 {
		t.Errorf("%d records expired, want all 6 while the member held them", m.Expired)
	}
}

// A handler that compacts the topic in the middle of its batch (which
// removes two records of the batch and moves the ones after them) still
// sees every record of the batch as it was polled.
func TestHeldRecordsSurviveCompaction(t *testing.T) {
	h := &slowHandler{}
	var topic *eventlog.Log
	h.then = func() {
		// Supersede k1 and k3 so compaction removes them and moves the rest.
		for _, k := range []string{"k1", "k3"} {
			if err := topic.Publish(sim.Message{ID: 100, Key: k, Body: []byte("new")}); err != nil {
				t.Fatal(err)
			}
		}
		topic.Compact()
	}
	want := heldRun(t, eventlog.Config{Compact: true, CompactEvery: 1000}, h, &topic)
	if got := h.seen[:6]; !slices.Equal(got, want) {
		t.Errorf("handled %v\nwant     %v", got, want)
	}
	if m := topic.Metrics(); m.Compacted != 2 {
		t.Errorf("%d records compacted, want 2", m.Compacted)
	}
}
