// Package lab runs brokerlab scenario files: it turns a loaded
// *scenario.Scenario (package scenario is the file format and nothing
// else) into a running simulation, acts on it, judges it and reports.
//
// What it owns:
//
//   - Building and running. New builds a Run: a sim.World made by mapping
//     the file onto the models' configurations, with no actor logic of its
//     own. It makes one queue.Queue per queue (dead-letter queues first),
//     one pubsub.Broker whose subjects are the topics (with their
//     subscribers, emits, source checks, supervisors and durable fan-outs),
//     one eventlog.Log per log with its groups, one outbox.Service with
//     its Writer per service, and the actors as model components: a
//     producer.Producer per producer (an outbox.Commander for one that
//     sends commands to a service), a queue.Consumer pool per queue
//     consumer, an eventlog.Member per group member, an outbox.Relay or
//     outbox.CDCRelay per relay. A handler is a sim.Script (wrapped by
//     sim.Idempotent for idempotency message_id or business_key) unless
//     Options.Handlers binds a Go handler to its name, and every model
//     consults the one faults.Injector built from the file's fault plan.
//     Run.Step runs one tick, Run.Finish runs to the end and evaluates the
//     expectations (each traced as a "checked" event) into a Report;
//     Execute does both.
//   - Acting. Run.Do carries out one scenario.Action with the models' own
//     operations (Pause and Resume, Leave and Rejoin, Connect and
//     Disconnect, Mute, Crash, Kill and Resume, Script.Fix, seeks,
//     redrives, purges). The timeline gives it the file's actions at their
//     ticks; a player gives it the actions a user asks for by hand, built
//     by SeekEarliest, Redrive, Crash and BrokerDown. There is no other way
//     to act on a run.
//   - Judging. Run.Verdict gives each expectation's standing at the
//     current tick; MetricFold folds the component metrics from the trace;
//     Rederive judges a recorded trace again without running anything.
//   - Sweeping. Probe runs one seed and names its Failure, Shrink
//     minimises a failing seed's fault schedule and MinFile writes and
//     checks the reproducer; Seeds and SweepReport describe a (sharded)
//     sweep.
//
// Invariants. A run is deterministic: the same scenario, seed, handlers
// and actions give a byte-identical trace, whatever GOMAXPROCS is; no map
// order, wall clock or goroutine reaches it, and a Run is driven from one
// goroutine. What happened is recorded once, as events of the trace; the
// metric fold, the ledger and the verdict are folds over them. Narration
// steps are traced as "narration" events at "lesson" at their tick ("2/5
// text"). Nothing a file says makes a run panic: actions that fail at run
// time are reported as *scenario.Errors positioned at the action (Run.Err),
// and a run that exceeds its budget on derived work (see sim.Budget and
// the caps in package scenario) stops with a runtime error naming the cap
// and the likely cause.
//
// Cost. Building a run is linear in the file. A tick costs what the
// models do in it plus O(events) for the folds; memory is the models'
// state, the ledger and the sinks the caller attaches, all bounded by the
// run's budget.
//
// Names. Run is one run of a scenario; the file's own "run:" section is
// scenario.Length (the field Scenario.Run). New builds a Run and Execute
// runs one to the end; a sweep runs many (Probe per seed). An action is a
// scenario.Action whether it comes from the timeline or from a hand.
//
// The session layer sits on the runner: a Session (Open, OpenFile,
// OpenLesson with SessionOptions) owns one Run for a player, keeps the log
// of hand actions so that going back and forward in time replays them,
// says when the user branches off, and describes every tick as an
// immutable Snapshot; a Pair plays two sessions in lockstep and a Playback
// plays a Recording back. Package tui renders them.
package lab
