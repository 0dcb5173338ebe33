// Package watermill puts brokerlab's simulated brokers behind Watermill's
// message.Publisher and message.Subscriber, so a service that uses
// Watermill can swap them in for its tests and get what the in-memory
// GoChannel lacks: visibility timeouts, consumer groups, dead-letter
// queues, and seeded fault injection (duplicate deliveries, delays, an
// unavailable broker), with brokerlab's ledger and checkers judging the
// handlers.
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
// subjects or log topics of that model, created on first use:
//
//   - KindQueue (package queue): competing consumers, Nack = redelivery,
//     visibility timeout while a message is unacked, optional dead-letter
//     queue per topic (topic + DeadLetterSuffix) after MaxReceiveCount
//     deliveries.
//   - KindPubSub (package pubsub): ephemeral fan-out; a Subscriber gets the
//     publishes made while its connection to the topic is open.
//   - KindLog (package eventlog): consumer groups by name with committed
//     offsets; a new group reads from the start.
//
// Faults are faults.Rules consulted by the models at their fault points; a
// rule's Match.Where names a topic as "queue:t", "topic:t" or "log:t".
//
// Identity. A Watermill message's UUID maps to one sim.ID on its first
// publish, kept in a map on the owner goroutine, so a re-published or
// duplicated message is the same message in the ledger. Metadata travel as
// extra headers (sorted by name); Config.KeyMetadata names the entry that
// becomes the message key.
//
// Ground truth. The models book sends, deliveries and acks in the world's
// ledger. A handler reports that it applied a message's effect with
// Broker.Applied (or through an idempotent consumer run inside Broker.Do);
// Broker.Check then runs checkers such as sim.ExactlyOnce on the logical
// consumer that Subscriber.Consumer names.
//
// Cost. Every call is one round trip to the owner goroutine plus the
// model's own cost (O(log n) per queue operation). A subscription is one
// goroutine that holds at most one unacked message. The UUID map keeps
// about 100 bytes per distinct message for the broker's lifetime.
package watermill
