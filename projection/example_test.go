package projection_test

import (
	"fmt"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/projection"
	"github.com/brokerlab/brokerlab/sim"
)

// A read right after a write sees the old value on the projection until
// its member has polled the record; the source has it at once.
func Example() {
	w, _ := sim.New(sim.Config{Seed: 1})
	env := w.Env()
	log, _ := eventlog.New(w, eventlog.Config{Name: "addresses", Partitions: 1})
	g, _ := eventlog.NewGroup(w, log, eventlog.GroupConfig{Name: "view"})
	view, _ := projection.New(w, projection.Config{Name: "view", Versioning: projection.VersionOffset,
		Source: projection.LogSource(log)})
	_, _ = eventlog.NewMember(w, g, eventlog.MemberConfig{Name: "v1", Handler: view})

	_, _ = log.Produce(env.NewMessage("kunde-A", []byte("Berlin"), sim.Headers{}))
	_ = w.Run(2)
	_, _ = log.Produce(env.NewMessage("kunde-A", []byte("Hamburg"), sim.Headers{}))
	row, stale := view.Read("app", "kunde-A")
	fmt.Println("projection:", row.Body, "stale:", stale)
	fmt.Println("source:", view.ReadSource("app", "kunde-A"))
	_ = w.Run(2)
	row, stale = view.Read("app", "kunde-A")
	fmt.Println("projection:", row.Body, "stale:", stale)
	fmt.Printf("%+v\n", view.Metrics())
	// Output:
	// projection: Berlin stale: true
	// source: m2
	// projection: Hamburg stale: false
	// {Rows:1 Reads:3 StaleReads:1}
}
