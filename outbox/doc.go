// Package outbox simulates the transactional outbox pattern and idempotent
// consumers on top of an in-memory go-memdb database.
//
// Every constructor takes the sim.World first and uses its environment
// (clock, trace, ledger, seed); components add themselves to the world in
// the phase their type fixes. A Service owns one memdb database with a
// business table (orders), the outbox table and a dedup table; it is
// passive. A Writer places orders into it in one of three modes, so the
// dual-write problem and its fix can be compared on the same workload:
//
//   - CommitThenPublish commits the order, then publishes the event; a crash
//     in between loses the event ("lost", cause sim.CauseDualWrite).
//   - PublishThenCommit publishes first, then commits; a crash before the
//     commit leaves a phantom event for an order that does not exist
//     ("phantom").
//   - Outbox writes the order and its outbox row in one memdb transaction
//     ("stored"); nothing is lost and nothing is invented.
//
// A Commander (producer phase) places a workload of commands with a
// writer: Count orders at a Rate from a Start tick, retrying or dropping
// the ones the broker refused.
//
// A polling Relay (relay phase) publishes unsent outbox rows in id order (or
// per aggregate) to any sim.Publisher (a queue, a pub/sub topic or a log
// topic, keyed by aggregate id). It marks a row sent only after its publish
// succeeded, backs off and counts attempts on failure, turns rows past the
// maximum number of attempts into dead letters ("dead_lettered" at the
// outbox: parked) that can be retried by hand, removes old processed rows,
// and claims rows with leases so several relays never claim the same row
// at once (the FOR UPDATE SKIP LOCKED idea). A lease does not fence a
// publish already under way: when a publish takes longer than the lease,
// another relay claims the row meanwhile and publishes it too, so the row
// goes out twice (TestSlowPublishPastTheLeaseIsPublishedTwice); set Lease
// above the slowest publish, and keep consumers idempotent. A row that backs off holds
// back the rows behind it, every later row in InOrder mode and the later
// rows of its aggregate in PerAggregate mode, so a retry never lets a
// later row overtake an earlier one (only a dead letter leaves the order
// stream). A relay whose lease ran out (its publish took longer than the
// lease) does not write its failure or release over a row another relay
// has claimed meanwhile ("lease_lost"), as a Kafka group member whose
// partitions were reassigned can no longer commit for them. A relay that
// crashes after a publish and before the mark publishes that row again:
// the message keeps its sim.ID, so the ledger counts one more delivery of
// the same copy, a duplicate of its origin. A CDCRelay follows memdb
// change tracking instead of polling; it stops at a failed publish and
// retries it first, so it keeps commit order. Both can start late and be
// killed and resumed.
//
// Row ids (and order ids) come from a sequence: they increase in write
// order, and a transaction that aborts does not give its ids back, so
// they have gaps, as a PostgreSQL sequence's do. Nothing here assumes the
// next row id is the last one plus one.
//
// A Consumer is the idempotent consumer, a sim.Handler usable by every
// model: it applies an effect in a memdb database and, unless naive,
// records the processed event ID (or a business key with a time bucket) in
// the same transaction as the effect, so the effect is applied exactly once
// under duplicate delivery; it reports the effect with Delivery.Apply and
// an absorbed duplicate with Delivery.Skip. The naive mode applies a
// duplicate again. With a TTL a dedup entry lives TTL ticks, like an SQS
// FIFO deduplication interval: it absorbs duplicates while its age is
// below TTL and is forgotten once its age reaches TTL.
//
// The ledger learns everything from the trace: the models here never write
// it. Invariants: outbox rows and orders are never mutated after insert
// (every change inserts a modified copy); every logical step (place an
// order, claim a batch, mark a batch, apply one message) is one memdb write
// transaction; nothing reads the wall clock, starts goroutines or lets map
// order reach output. Every state change is a trace event whose Where is
// "outbox:"+service name; Detail text is built only when a sink shows it.
//
// # Names
//
// Scenario files call a Service and its Writer together a service
// (topology.services, publish_to, a fault's match.where "service:NAME");
// the trace names it "outbox:"+Name, as recorded traces already do, and
// the scenario runner maps a file's "service:NAME" onto it. A Relay or
// CDCRelay is a file's relay. docs/glossary.md maps the words of files,
// trace and Go onto each other.
package outbox
