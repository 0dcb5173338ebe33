package exercise

import (
	"fmt"
	"sort"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/lab"
	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
)

// Architecture is the solution of exercise 3: a scenario file whose
// topology and actors carry the events of the producer "app" to the
// three teams shipping, billing and analytics.
type Architecture struct {
	// File is the scenario file, relative to the working directory.
	File string
}

// Exercise returns "architecture".
func (Architecture) Exercise() string { return "architecture" }

// archTeams are the names the grader binds, in report order.
var archTeams = []string{"shipping", "billing", "analytics"}

// archFaults is the grader's fault plan, which replaces the file's own:
// a subscriber offline now and then, a group member or a worker crashing.
var archFaults = []scenario.Fault{
	{Rule: faults.Rule{Name: "team-offline", Point: faults.SubscriberOffline, Probability: 0.25}},
	{Rule: faults.Rule{Name: "member-crash", Point: faults.MemberCrash, Probability: 0.03}},
	{Rule: faults.Rule{Name: "worker-crash", Point: faults.ConsumerCrashBeforeProcess, Probability: 0.03}},
}

// loadArchitecture loads and checks the student's file: it must load,
// keep the producer app with its workload, and bind every team.
func loadArchitecture(path string) (*scenario.Scenario, error) {
	// LoadFile reads only a regular file, capped, and never blocks on a
	// FIFO or reads a device without end.
	s, err := scenario.LoadFile(path)
	if err != nil {
		return nil, err
	}
	var app *scenario.Producer
	for i := range s.Actors.Producers {
		if s.Actors.Producers[i].Name == "app" {
			app = &s.Actors.Producers[i]
		}
	}
	switch {
	case app == nil || len(s.Actors.Producers) != 1:
		return nil, fmt.Errorf("%s: keep the one producer \"app\" of the template: the grader sends its workload through it", path)
	case app.Count < 12 || app.KeyCount < 4:
		return nil, fmt.Errorf("%s:%d:%d: producer app sends %d events over %d orders; the workload is at least 12 events over 4 orders", path, app.Pos.Line, app.Pos.Col, app.Count, app.KeyCount)
	}
	have := map[string]string{}
	for _, b := range lab.Bindables(s) {
		have[b.Name] = b.Kind
	}
	var missing []string
	for _, t := range archTeams {
		if have[t] == "" {
			missing = append(missing, t)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%s: no consumer, group member or subscriber named %v: each team reads under its own name (shipping, billing, analytics)", path, missing)
	}
	s.Faults = append([]scenario.Fault(nil), archFaults...)
	s.Timeline = nil
	return s, nil
}

// archTeam is what one team handled.
type archTeam struct {
	got  map[string]bool // event IDs handled
	last map[string]int  // per key, the production index of the last new event
}

func runArchitecture(r *Run, sol Solution) {
	s, err := loadArchitecture(sol.(Architecture).File)
	if err != nil {
		panic(err) // Check loaded it before any run
	}
	run := func(replay *faults.Schedule, sinks ...sim.Sink) (map[string]*archTeam, []string, map[string]int, map[string]string, faults.Schedule, error) {
		teams := map[string]*archTeam{}
		hs := map[string]sim.Handler{}
		var events []string
		index := map[string]int{}
		keyOf := map[string]string{}
		for _, name := range archTeams {
			t := &archTeam{got: map[string]bool{}, last: map[string]int{}}
			teams[name] = t
			name := name
			hs[name] = sim.HandlerFunc(func(d *sim.Delivery) error {
				id := sim.ByMessageID(d)
				if t.got[id] {
					d.Skip("seen")
					return nil
				}
				t.got[id] = true
				if i, ok := index[id]; ok {
					if k := d.Msg.Key; i < t.last[k] {
						r.fail("order", "%s handled %s of %s after a later event of that order: per order, events must be handled in the order they happened", name, id, k)
					} else {
						t.last[k] = i
					}
				}
				d.Apply(name)
				return nil
			})
		}
		origin := sim.SinkFunc(func(e *sim.Event) {
			switch e.Kind {
			case sim.KindSent, sim.KindProduced, sim.KindPublished:
			default:
				return
			}
			if e.Origin != 0 || e.Msg == 0 {
				return
			}
			id := e.Msg.String()
			if _, ok := index[id]; !ok {
				index[id] = len(events)
				keyOf[id] = e.Key
				events = append(events, id)
			}
		})
		seed := r.seed
		sr, err := lab.New(s, lab.Options{Seed: &seed, Handlers: hs, Record: true, Replay: replay, Sinks: append([]sim.Sink{origin}, sinks...)})
		if err != nil {
			return nil, nil, nil, nil, faults.Schedule{}, err
		}
		if r.clock == nil {
			r.clock = sr.Now
		}
		sr.Finish()
		return teams, events, index, keyOf, sr.Faults().Fired(), sr.Err()
	}
	var sinks []sim.Sink
	if r.keep {
		sinks = append(sinks, sim.SinkFunc(func(e *sim.Event) { r.trace = append(r.trace, *e) }))
	}
	teams, events, _, keyOf, fired, err := run(r.replay, sinks...)
	r.fired = &fired
	if err != nil {
		r.fail("runs", "the scenario failed to run: %v", err)
		return
	}
	r.judged("runs")
	r.judged("order")
	r.judged("every-team")
	r.judged("offline")
	r.judged("replay")
	missed := func(teams map[string]*archTeam) (string, string) {
		for _, name := range archTeams {
			for _, id := range events {
				if !teams[name].got[id] {
					return name, id
				}
			}
		}
		return "", ""
	}
	if team, id := missed(teams); team != "" {
		// The same seed with no fault at all tells a design that cannot
		// give every team every event from one that loses events while a
		// team is away.
		calm, _, _, _, _, err := run(&faults.Schedule{})
		if cteam, cid := missed(calm); err == nil && cteam != "" {
			r.fail("every-team", "%s never got event %s (%s), even with no fault at all: each team needs every event", cteam, cid, keyOf[cid])
		} else {
			r.fail("offline", "%s missed event %s (%s) while it was away (offline or restarting): a team that is away for a while must get the events later", team, id, keyOf[id])
		}
	}
	// Replay: analytics must read a log through a consumer group of its
	// own, which can seek back over retained records.
	var group string
	for _, m := range s.Actors.Members {
		if m.Name == "analytics" {
			group = m.Group
		}
	}
	if group == "" {
		r.fail("replay", "analytics does not read a log as a consumer-group member: a queue deletes what was acked and pub/sub keeps nothing, so there is nothing to read again")
		return
	}
	users := map[string][]string{}
	for _, m := range s.Actors.Members {
		users[m.Group] = append(users[m.Group], m.Name)
	}
	if others := users[group]; len(others) > 1 {
		sort.Strings(others)
		r.fail("replay", "analytics shares group %s with %v: a seek to replay would move the others too; give analytics a group of its own", group, others)
	}
}

func init() {
	register(&Exercise{
		Number: 3, Name: "architecture", Title: "Queue, pub/sub or event log?",
		Concept: "choosing a topology from requirements: who gets each event, in which order, and whether it can be read again",
		Lesson:  "architecture-choice",
		Ticks:   200,
		Props: []Property{
			{"every-team", "every team gets every event"},
			{"order", "per order, each team handles events in the order they happened"},
			{"offline", "a team that is away for a while misses nothing"},
			{"replay", "analytics can read the past events again"},
			{"runs", "the scenario runs"},
		},
		File: "architecture.yaml",
		Bind: `exercise.Architecture{File: "architecture.yaml"}`,
		Stub: archStub,
		Task: archTask,
		Hints: []string{
			"Go through the requirements one at a time and ask of each design: what happens to a message after it is read, and who gets it?",
			"Where is the order of events fixed in each design, and what does the key of a message have to do with it?",
			"Which of the designs still has the events after every team has read them?",
		},
		run: runArchitecture,
		check: func(sol Solution) error {
			a := sol.(Architecture)
			if a.File == "" {
				return fmt.Errorf("no scenario file")
			}
			_, err := loadArchitecture(a.File)
			return err
		},
	})
}

const archStub = `# yaml-language-server: $schema={{schema}}
# Exercise 3: queue, pub/sub or event log?
#
# Each order produces the events placed, paid and maybe cancelled. The
# requirements:
#   1. shipping, billing and analytics are separate teams; each needs
#      every event;
#   2. per order, events are handled in the order they happened;
#   3. analytics must be able to read the past events again;
#   4. a team may be away for a while (offline, restarting) without
#      missing events.
#
# Choose the topology and the actors below so that the producer "app"
# (keep it and its workload) reaches the three teams, each reading under
# its own name: a queue consumer, a consumer-group member or a pub/sub
# subscriber called shipping, billing and analytics. The grader binds its
# own handlers to those names and uses its own fault plan, so a faults:
# section here is replaced. The file format: brokerlab schema, or
# docs/scenario-format.md in the clone.
#
# As written, it is design A of the lesson: one shared work queue.
version: 1
title: My architecture
run: {ticks: 80}
topology:
  queues:
    - name: orders
actors:
  producers:
    - {name: app, to: {queue: orders}, count: 12, rate: 2, keys: "order-%d", key_count: 4, type: order.event}
  consumers:
    - {name: shipping, queue: orders}
    - {name: billing, queue: orders}
    - {name: analytics, queue: orders}
`

const archTask = `Edit **architecture.yaml**, a scenario file: choose the topology and the
actors that carry the order events of the producer app to the three teams
shipping, billing and analytics, so that

1. every team gets every event;
2. per order, each team handles the events in the order they happened;
3. analytics can read the past events again (a new dashboard);
4. a team that is away for a while (offline, restarting) misses nothing.

The grader binds its own handlers to shipping, billing and analytics and
runs your file over many seeds under its own faults: subscribers going
offline, group members and workers crashing. The file as given is the
shared work queue; write down, in a comment, why your design meets each
requirement.`
