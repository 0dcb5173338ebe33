// Package outbox simulates the transactional outbox pattern and idempotent
// consumers on top of an in-memory go-memdb database.
//
// A Service owns one memdb database with a business table (orders) and the
// outbox table. Writers place orders in one of three modes so the dual-write
// problem and its fix can be compared on the same workload:
//
//   - CommitThenPublish commits the order, then publishes the event; a crash
//     in between loses the event (ledger cause sim.CauseDualWrite).
//   - PublishThenCommit publishes first, then commits; a crash before the
//     commit leaves a phantom event for an order that does not exist
//     (Ledger.MarkPhantom).
//   - Outbox writes the order and its outbox row in one memdb transaction;
//     nothing is lost and nothing is invented.
//
// A polling Relay publishes unsent outbox rows in id order (or per aggregate)
// to any sim.Publisher (a queue, a pub/sub topic or a log topic, keyed by
// aggregate id). It marks a row sent only after its publish succeeded, backs
// off and counts attempts on failure, turns rows past the maximum number of
// attempts into dead letters that can be retried by hand, removes old
// processed rows, and claims rows with leases so several relays never publish
// the same row at once (the FOR UPDATE SKIP LOCKED idea). A relay that
// crashes after a publish and before the mark publishes that row again: the
// message keeps its sim.ID, so the ledger counts the duplicate. A CDCRelay
// follows memdb change tracking instead of polling.
//
// A Consumer applies an effect in its own memdb database and, when
// idempotent, records the processed event ID (or a business key with a time
// bucket) in the same transaction as the effect, so the effect is applied
// exactly once under duplicate delivery; the naive mode applies it again.
//
// Invariants: outbox rows and orders are never mutated after insert (every
// change inserts a modified copy); every logical step (place an order, claim
// a batch, mark a batch, apply one message) is one memdb write transaction;
// nothing reads the wall clock, starts goroutines or lets map order reach
// output. Every state change is a trace event whose Where is
// "outbox:"+service name.
package outbox
