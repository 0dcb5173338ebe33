// Package lab runs brokerlab scenario files. New builds a sim.World from a loaded scenario by
// mapping the file onto the models' configurations; the runner keeps no
// actor logic of its own. It makes one queue.Queue per queue (dead-letter
// queues first), one pubsub.Broker whose subjects are the topics (with
// their subscribers, emits, source checks, supervisors and durable
// fan-outs, one per topic and queue), one eventlog.Topic per log with its
// groups, one outbox.Service with its Writer per service, and the actors
// as model components: a producer.Producer per producer (an
// outbox.Commander for one that sends commands to a service), a
// queue.Consumer pool per queue consumer, an eventlog.Member per group
// member, an outbox.Relay or outbox.CDCRelay per relay. A handler is a
// sim.Script (wrapped by sim.Idempotent for idempotency message_id or
// business_key), and every model consults the one faults.Injector built
// from FaultPlan. Every constructor registers its component with the World
// itself. Timeline actions call the models' own operations (Pause and
// Resume, Leave and Rejoin, Connect and Disconnect, Mute, Crash, Kill and
// Resume, Script.Fix, seeks, redrives, purges) on the World's timeline;
// until: drained asks the models whether they are done, idle, caught up
// or empty. Narration steps are traced as
// "narration" events at "lesson" at their tick ("2/5 text"). Run.Step runs
// one tick, Run.Finish runs to the end and evaluates the expectations (each
// traced as a "checked" event) into a Report, whose WriteText is the human
// report. Expectations compare metrics of the components, of one ledger
// consumer (consumer.NAME.FIELD) or of the whole ledger, losses by cause
// included (ledger.lost_retention), or run a checker, which may be
// expected to find violations (violated: true). Execute does
// both. Actions that fail at run time are reported as *Errors positioned at
// the action, never as panics. A run is deterministic: the same scenario and
// seed give a byte-identical trace; no map order reaches it.
package lab
