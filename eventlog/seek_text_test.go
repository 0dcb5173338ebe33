package eventlog_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/sim"
)

// TestSeekToText checks the one spelling of SeekTo: String, MarshalText
// and UnmarshalText agree, and unknown values are errors wrapping
// ErrInvalidConfig.
func TestSeekToText(t *testing.T) {
	for to, w := range map[eventlog.SeekTo]string{eventlog.SeekToEarliest: "earliest", eventlog.SeekToLatest: "latest",
		eventlog.SeekToOffset: "offset", eventlog.SeekToTick: "tick"} {
		var got eventlog.SeekTo
		b, err := to.MarshalText()
		if to.String() != w || string(b) != w || err != nil || got.UnmarshalText([]byte(w)) != nil || got != to {
			t.Errorf("seek target %d: String %q, MarshalText %q %v, UnmarshalText %d; want %q", to, to.String(), b, err, got, w)
		}
	}
	var to eventlog.SeekTo
	_, err := eventlog.SeekTo(9).MarshalText()
	for _, err := range []error{to.UnmarshalText([]byte("Latest")), err} {
		if !errors.Is(err, eventlog.ErrInvalidConfig) {
			t.Errorf("got %v, want ErrInvalidConfig", err)
		}
	}
}

// TestSeekDispatches runs TestSeekTargets' steps through Seek: each target
// moves the group as its own method does, and an unknown one changes
// nothing.
func TestSeekDispatches(t *testing.T) {
	r := newRig(t, 1, eventlog.Config{Partitions: 2})
	g := r.group(eventlog.GroupConfig{Name: "g"})
	for tick := sim.Tick(0); tick < 5; tick++ {
		r.env.Clock.Set(tick * 10)
		_, _ = r.topic.ProduceTo(0, r.env.NewMessage("", nil, sim.Headers{}))
		_, _ = r.topic.ProduceTo(1, r.env.NewMessage("", nil, sim.Headers{}))
	}
	committed := func() string {
		var s []string
		for p := 0; p < 2; p++ {
			c, _ := g.Committed(p)
			s = append(s, strconv.FormatInt(c, 10))
		}
		return strings.Join(s, ",")
	}
	steps := []struct {
		p    int
		to   eventlog.SeekTo
		off  int64
		at   sim.Tick
		want string
	}{
		{eventlog.AllPartitions, eventlog.SeekToLatest, 0, 0, "5,5"},
		{1, eventlog.SeekToOffset, 2, 99, "5,2"},
		{eventlog.AllPartitions, eventlog.SeekToTick, 4, 25, "3,3"},
		{0, eventlog.SeekToEarliest, 4, 25, "0,3"},
	}
	for i, s := range steps {
		if err := g.Seek(s.p, s.to, s.off, s.at); err != nil {
			t.Fatal(err)
		}
		if got := committed(); got != s.want {
			t.Errorf("step %d (%v): committed %s, want %s", i, s.to, got, s.want)
		}
	}
	if err := g.Seek(0, 9, 0, 0); !errors.Is(err, eventlog.ErrInvalidConfig) || committed() != "0,3" {
		t.Errorf("unknown target: %v, committed %s", err, committed())
	}
}
