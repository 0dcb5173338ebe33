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
// subscriber that is offline misses it, by design, not as a loss. A copy
// published before the consumer phase of a tick is handled in that tick; a
// copy a handler publishes is handled in the next one, so a cascade
// advances one generation per tick.
//
// Broker.Publish uses the message's Headers.Type as the subject;
// Broker.PublishTo names the subject explicitly. The trace's Where for a
// publish and for every copy of it is "topic:" followed by the subject.
//
// # Events and the ledger
//
// The package never writes the ledger; the world's ledger folds the trace
// events it emits, and so does a ledger folded from a recorded JSON Lines
// trace. Each subscriber is a logical consumer (SubscriberConfig.Consumer,
// by default its name); events name it as Consumer and the subscriber as
// Actor. The events the fold reads:
//
//   - published (Msg, Key, Type, Origin): the broker accepted a publish; it
//     is handed to subscribers and kept nowhere.
//   - delivered (Msg, Consumer, Attempt): a copy entered the subscriber's
//     buffer.
//   - processed / skipped (Msg, Consumer): the handler applied an effect
//     (sim.Delivery.Apply) or recognised a duplicate (sim.Delivery.Skip);
//     a muted subscriber and a SourceCheck subscriber receiving its own
//     change skip too.
//   - failed, then lost with sim.CauseHandlerFailed (Msg, Consumer): the
//     handler failed; ephemeral delivery has no retry.
//   - missed (Msg, Consumer): the subscriber was offline.
//   - dropped (Msg, Consumer): an overflow policy dropped the copy.
//   - lost with sim.CauseDisconnect (Msg, Consumer): a disconnect threw the
//     copy out of the buffer, out of a working handler, or out of the
//     broker's hold (a copy held back by broker.delay or broker.reorder,
//     or waiting for room in a full Block buffer).
//   - lost with sim.CauseForwardFailed (Msg: the fan-out copy, Origin: the
//     publish, Consumer: the target's logical consumer when the target
//     names one, as a queue does): a durable fan-out target refused its
//     copy on every attempt the fan-out's retry policy allows.
//   - lost with sim.CauseBrokerUnavailable or sim.CauseOverflow (no
//     Consumer): a subscriber's Emit was refused and given up.
//
// Copies the supervisor switch suppresses are not routed to the
// subscriber at all ("suppressed", which the ledger ignores, as it ignores
// "delayed", "connected", "disconnected", "forwarded", "cascade_limited"
// and "rejected": a refused publish, connect or forward attempt). Detail
// text is built only when a sink that shows it is attached.
//
// # Handlers and behaviour
//
// A subscriber's handler is a sim.Handler, the contract every model
// shares: it records effects through the delivery and returns an error
// whose class does not matter here (nothing is retried). The broker wraps
// it with its fault injector (faults.Injector.Handler), so the handler
// fault points apply to subscribers as to every other consumer, and asks
// sim.DurationOf before each copy: a slow handler keeps its subscriber
// from reading its buffer, which may then overflow. A subscriber's
// behaviour beyond its handler is configuration (SubscriberConfig): Emits
// that publish children for every handled copy, SourceCheck, Supervisor,
// a start tick, and Mute and Connect/Disconnect at run time, so a scenario
// file and a Go test get the same subscriber.
//
// # Cascades
//
// A handler publishes through its delivery's Context (ContextOf, or a
// HandlerFunc). Each child gets a new ID from Env.NewMessage, its parent's
// ID as CausationID, the root's correlation ID (the root's own
// CorrelationID, or the root's ID when it has none) and, by default, the
// parent's Source header. The broker counts every cascade per root event
// (messages per depth, copies, suppressions) and refuses a child deeper
// than Config.MaxDepth, or than an Emit's CascadeLimit, with a
// "cascade_limited" trace event. While the supervisor switch is on
// (Broker.Mute, Context.Muted, SubscriberConfig.Supervisor), publishes
// reach no ephemeral subscriber: each skipped copy is a "suppressed" event,
// which is how a worker saves without starting a new storm.
//
// # Durable fan-out
//
// Broker.FanOut (and FanOutWith, with a FanOutConfig) subscribes any
// sim.Publisher, typically a queue.Queue, to a pattern in SNS-to-SQS
// style: every matching publish makes a new copy (new ID, same key, body
// and headers, Origin = the publish) for the target, whether or not an
// ephemeral subscriber is online. Each target's copy has a state of its
// own, so one queue's consumer acking its copy says nothing about another
// queue's copy, and the ledger judges both as part of the publish's
// lineage. A forward the target refuses is retried by the fan-out's
// ForwardRetry (DefaultForwardRetry unless configured): a few retries at
// once, then a doubling backoff, and only when every attempt was refused
// is the copy lost with sim.CauseForwardFailed. Every attempt is traced as
// "rejected" with its number; retries are deterministic.
//
// # Fault points and outages
//
// broker.duplicate, broker.delay, broker.reorder, subscriber.offline and
// subscriber.slow act on the copies for one subscriber; broker.duplicate
// is decided once per copy, when the copy is first offered, and a copy the
// broker holds (delayed, reordered, or waiting for room in a full Block
// buffer) carries that decision and is never rolled again, so a fault
// fires once per delivery. broker.unavailable refuses publishes
// (ErrUnavailable, which wraps sim.ErrUnavailable) and subscribers'
// connects; a subscriber whose connect was refused tries again every tick
// by itself, and misses what is published until it is connected. A
// disconnect throws away every copy routed to the subscriber and not yet
// handled, including those the broker holds for it. Fault points of a
// fan-out's target (for a queue: its own broker.unavailable,
// broker.duplicate and broker.ack_lost) apply inside the target.
//
// # Differences from NATS and SNS
//
// Core NATS has no acknowledgements (a message goes to whoever is
// subscribed at that moment, and the server stores nothing), so
// broker.ack_lost does not apply to pub/sub and is never consulted here.
// SNS retries a delivery to an SQS endpoint 100,015 times over 23 days
// with jitter, and moves it to a subscription's dead-letter queue when one
// is attached; a fan-out here makes DefaultForwardRetry's nine attempts
// over 23 ticks without jitter and has no dead-letter queue, so that a
// simulated run drains soon, replays identically from its seed, and shows
// the loss the policy leaves. A NATS client buffers publishes
// while it reconnects (nats.go's ReconnectBufSize, 8 MiB by default) and
// flushes them once reconnected; here a publish during an outage fails at
// once with ErrUnavailable, so that what becomes of it is the publisher's
// visible decision (retry, or give up and book the loss) rather than a
// buffer the simulation would have to size. A NATS client waits between
// reconnect attempts (2 seconds by default in nats.go) and gives up after
// 60 attempts per server; a subscriber here tries again every tick and
// never gives up by itself, because a tick is the model's smallest wait
// and Disconnect is how a scenario makes it stop.
//
// # Determinism and cost
//
// Everything runs on the caller's goroutine, driven by the broker's step
// (sim.PhaseBroker) and its subscribers' step (sim.PhaseConsumer), both
// registered with the World by New. A publish costs O(matching
// subscribers) once the subject's route is cached (the route cache is
// rebuilt after a subscription change and costs O(subscriptions) per new
// subject), plus one trace event per copy, built only when a sink listens
// (otherwise only numbered). The broker resolves its fault points once;
// while no point a copy consults at publish time is armed, a copy costs a
// slot written into a ring and no fault context. Buffers are rings of
// pointers to one shared envelope per publish, doubling as copies arrive
// up to their capacity, so a resident message costs about 220 bytes plus
// 24 bytes per subscriber holding a copy, beyond its body; settled
// envelopes are reused, so a steady publish rate does not allocate.
package pubsub
