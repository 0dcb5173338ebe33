// Package watermillsim puts brokerlab's simulated brokers behind Watermill's
// message.Publisher and message.Subscriber, so a service that uses
// Watermill can swap them in for its tests and get what the in-memory
// GoChannel lacks: visibility timeouts, consumer groups, dead-letter
// queues, and seeded fault injection (duplicate deliveries, delays, an
// unavailable broker, failing handlers), with brokerlab's ledger and
// checkers judging the handlers.
//
// A Broker owns one sim.World through a live.Driver: the world ticks every
// Config.TickEvery of wall-clock time on a single owner goroutine, and every
// publish, receive, ack and nack the Watermill side makes runs there too,
// between two ticks. The models therefore stay single-threaded state
// machines; with the same seed and the same order of calls they make the
// same decisions (which message a fault duplicates, when a delay ends).
// Wall-clock time and goroutines exist only in this package and in live.
//
// Config.Kind picks the model; Watermill topics become queues, pub/sub
// subjects or log topics of that model, built on the world on first use.
// The adapter drives the models through their own client APIs and keeps
// no delivery state of its own (no offsets, no leases, no receipts beyond
// the message in hand):
//
//   - KindQueue (package queue): every subscription is a competing
//     consumer calling queue.Queue.Receive, Ack and Nack; Nack means
//     redelivery, the visibility timeout runs while a message is unacked,
//     and with MaxReceiveCount each topic has a dead-letter queue (topic +
//     DeadLetterSuffix).
//   - KindPubSub (package pubsub): ephemeral fan-out; a Subscriber's
//     connection to a topic is a pubsub.Subscriber of the model, which
//     hands each copy over to the connection, and a Subscribe drains it.
//   - KindLog (package eventlog): consumer groups by name; every
//     subscription is a pull member of its group (eventlog.Member with
//     MemberConfig.Pull), driven with Poll, Delivery, MarkProcessed,
//     MarkFailed and Commit. A new group reads from the start; a join or a
//     leave rebalances it (sticky assignment); the committed offsets are
//     the group's.
//
// Faults are faults.Rules consulted at the models' fault points; a rule's
// Match.Where names a topic as "queue:t", "topic:t" or "log:t". The
// handler points (handler.transient, handler.permanent, handler.poison,
// handler.slow) apply to every kind, the same way a model applies them to
// a handler of its own: a firing fails the delivery before it reaches the
// Watermill handler (the queue nacks it, or dead-letters a permanent or
// poison failure when the topic has a dead-letter queue; the log's member
// marks it failed; ephemeral pub/sub loses the copy), and handler.slow
// holds the hand-over back.
//
// Identity. A Watermill message's UUID maps to one sim.ID on its first
// publish, kept in a map on the owner goroutine, so a re-published or
// duplicated message is the same message in the ledger. Metadata travel as
// extra headers (sorted by name); Config.KeyMetadata names the entry that
// becomes the message key.
//
// Ground truth. The ledger is a fold over the world's trace: the models
// trace sends, deliveries, acks, commits and losses, and the adapter
// records the handler's effects on each delivery's sim.Delivery, which
// traces them. The contract is:
//
//   - An Ack records one applied effect of the message (sim.Delivery.Apply)
//     for the logical consumer Subscriber.Consumer names, unless the
//     handler recorded something on the delivery before acking: Broker.Skip
//     (it recognised a duplicate and applied nothing), Broker.Applied (its
//     own effects), or whatever a brokerlab handler run with Broker.Handle
//     (outbox.Consumer, sim.Idempotent) recorded. A non-idempotent handler
//     that acks a duplicate has therefore applied it twice, and
//     sim.ExactlyOnce says so; an idempotent one that calls Skip (or runs
//     through Handle) passes.
//   - A Nack records a failure without an effect. A message a
//     subscription held when it stopped records nothing and goes back to
//     the broker.
//
// Broker.Check then runs checkers such as sim.ExactlyOnce on the logical
// consumer; the checkers count a message still unacked as pending, so
// settle the subscriptions (close the Subscriber) before checking.
// Config.Trace receives every event, in the JSON Lines form too
// (sim.NewJSONWriter), from which sim.ReadJSONL folds the same ledger.
//
// Exact replay. In real time a run depends on goroutine scheduling and on
// the wall clock. Test (or NewHarness inside a testing/synctest bubble)
// gives a Harness whose broker runs in lockstep on the bubble's fake
// clock: before every step the driver waits until every other goroutine
// of the bubble is durably blocked, then runs a tick due at that instant
// or serves the waiting call with the smallest stable key (a
// subscription's worker, a Router handler's name), so a real
// message.Router with its goroutines and middleware makes the same trace
// for the same seed on every run, at any GOMAXPROCS and under the race
// detector. Topics are declared up front, message UUIDs come from the
// seed (Harness.NewUUID), RunUntil runs to a condition under a tick cap,
// and Harness.Middleware reports middleware that draws from math/rand.
//
// Cost. Every call is one round trip to the owner goroutine plus the
// model's own cost (O(log n) per queue operation, O(1) per log poll and
// commit). A subscription is one goroutine that holds at most one unacked
// message. The UUID map keeps about 100 bytes per distinct message for the
// broker's lifetime; a log subscription leaves one member in the world
// after it ends (a few hundred bytes).
package watermillsim
