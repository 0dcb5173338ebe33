package tui

import (
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/lab"
)

// TestLoopCoalescesQueuedCommands holds the loop's first post, as a busy UI
// goroutine would, while more commands queue up: once the post returns, the
// loop applies all of them and posts one snapshot, not one per command.
func TestLoopCoalescesQueuedCommands(t *testing.T) {
	d := newFakeDriver(1)
	entered := make(chan struct{}) // the loop is in post
	posts := make(chan lab.Snapshot)
	post := func(s lab.Snapshot) { entered <- struct{}{}; posts <- s }
	l := StartLoop(NewController(d), post, (&fakeTicker{}).start)
	defer l.Stop()
	recv := func() lab.Snapshot {
		t.Helper()
		select {
		case <-entered:
		case <-time.After(5 * time.Second):
			t.Fatal("no post")
		}
		return <-posts
	}

	if err := l.Send(Command{Kind: CmdStep}); err != nil {
		t.Fatal(err)
	}
	<-entered
	// The loop now waits in post with tick 1; nobody takes it yet.
	for i := 0; i < 10; i++ {
		if err := l.Send(Command{Kind: CmdStep}); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Send(Command{Kind: CmdFaster}); err != nil {
		t.Fatal(err)
	}
	if s := <-posts; s.Header.Tick != 1 {
		t.Fatalf("first post at tick %d, want 1", s.Header.Tick)
	}
	s := recv()
	if s.Header.Tick != 11 || s.Header.Speed != Speeds[defaultSpeed+1] {
		t.Fatalf("second post: tick %d speed %v, want every queued command applied (tick 11, speed %v)",
			s.Header.Tick, s.Header.Speed, Speeds[defaultSpeed+1])
	}
	select {
	case <-entered:
		t.Fatalf("a third post (tick %d): the queued commands were posted one by one", (<-posts).Header.Tick)
	case <-time.After(50 * time.Millisecond):
	}
	if d.steps != 11 {
		t.Fatalf("driver stepped %d times, want 11", d.steps)
	}
}
