// Package pubsub models ephemeral publish/subscribe: subjects with
// wildcards, subscribers that connect and disconnect, bounded per-subscriber
// buffers with an overflow policy, handlers that publish further events
// (cascades and event storms), bidirectional sync loops, and fan-out into
// durable queues.
//
// # Subjects
//
// A subject is a list of tokens separated by '.', e.g. "orders.eu.created".
// Tokens are non-empty and contain no spaces or control characters. A
// subscription pattern may use two wildcards, each as a whole token: "*"
// matches exactly one token ("orders.*" matches "orders.created" but not
// "orders.eu.created") and ">", allowed only as the last token, matches one
// or more tokens ("orders.>" matches both, but not "orders" itself).
//
// # Delivery
//
// A publish is copied into the buffer of every subscriber whose pattern
// matches and that is connected at that tick, and stored nowhere else. A
// subscriber that is offline misses it; the ledger records the copy as
// missed, by design, not as a loss. Each subscriber is a logical consumer in
// the ledger: a copy placed in its buffer is Expect+Delivered, a handled copy
// is Applied, a missed copy is Expect+Missed, and a copy an overflow policy
// drops is Lost with cause sim.CauseOverflow. A copy published before the
// consumer phase of a tick is handled in that tick; a copy a handler
// publishes is handled in the next one, so a cascade advances one
// generation per tick.
//
// Broker.Publish uses the message's Headers.Type as the subject;
// Broker.PublishTo names the subject explicitly. The trace's Where for a
// publish and for every copy of it is "topic:" followed by the subject.
//
// # Cascades
//
// A handler publishes through its Context. Each child gets a new ID from
// env.NewMessage, its parent's ID as CausationID, the root's correlation ID
// (the root's own CorrelationID, or the root's ID when it has none) and, by
// default, the parent's Source header. The broker counts every cascade per
// root event (messages per depth, copies, suppressions) and refuses a child
// deeper than Config.MaxDepth with a "cascade_limited" trace event. While
// the supervisor switch is on (Broker.Mute, Context.Muted), publishes reach
// no ephemeral subscriber: each skipped copy is a "suppressed" event, which
// is how a worker saves without starting a new storm.
//
// # Durable fan-out
//
// Broker.FanOut subscribes any sim.Publisher, typically a queue.Queue, to a
// pattern in SNS-to-SQS style: every matching publish is forwarded with its
// ID and headers, whether or not an ephemeral subscriber is online, so the
// same publish can be missed by an offline ephemeral subscriber and kept by
// the queue for its consumer to get after reconnecting.
//
// # Determinism and cost
//
// Everything runs on the caller's goroutine, driven by Broker.Step
// (sim.PhaseBroker) and Subscriber.Step (sim.PhaseConsumer); Broker.Attach
// registers both with a World. A publish costs O(matching subscribers) once
// the subject's route is cached (the route cache is rebuilt after a
// subscription change and costs O(subscriptions) per new subject). Buffers
// are fixed-size rings of pointers to one shared envelope per publish, so a
// resident message costs about 220 bytes plus 16 bytes per subscriber
// holding a copy, beyond its body; settled envelopes are reused, so a
// steady publish rate does not allocate.
package pubsub
