// Package queue is brokerlab's SQS-like work queue for competing consumers.
//
// A Queue holds messages that consumers receive in batches. Each delivery
// carries a Receipt and the copy's receive count; a received message stays
// invisible for the visibility timeout and comes back, with its receive
// count one higher on the next receive, unless it is acked (deleted) in
// time. Nack returns a message early, optionally after a delay;
// ChangeVisibility resets the timeout of the current delivery only, counted
// from the call. A receipt issued before a redelivery is stale: Ack, Nack
// and ChangeVisibility reject it with ErrStaleReceipt and trace the
// rejection.
//
// Dead letters. With a DeadLetter queue and MaxReceiveCount (the redrive
// policy), the receive that would make a message's receive count exceed
// MaxReceiveCount moves it to the dead-letter queue instead (SQS
// semantics). Consumers also dead-letter by classification (sim.Classify):
// errors wrapping sim.ErrPermanent or sim.ErrPoison go to the dead-letter
// queue at once, transient ones are retried by a RetryPolicy (none, fixed,
// exponential with cap and seeded jitter) and dead-lettered once the
// consumer's MaxAttempts is reached. Redrive moves dead letters back to
// their source queue as new messages (new ID, Origin the dead letter,
// counts reset).
//
// FIFO queues deliver each message group (the message Key) in send order,
// with at most one message of a group in flight: an in-flight or held
// message blocks its group. An optional deduplication window drops repeated
// sends of the same deduplication ID (DedupHeader, else the message ID).
// Delays on a FIFO queue apply before a message joins its group.
//
// Ground truth. The queue and its consumers never write the ledger: they
// report what happens as trace events, and the world's ledger folds them
// (sim.Ledger.Emit). Every message a queue holds is routed to one logical
// consumer (Config.Consumer, default the queue name); every worker
// receiving from the queue is an instance of it. The events the fold
// reads:
//
//   - sent (Consumer, Origin, Type): a message entered the queue.
//   - received, redelivered (Actor the instance, Consumer): a delivery.
//   - processed, skipped: the handler's own records, through
//     sim.Delivery.Apply and Skip; failed (Consumer): a handler failure.
//   - acked (Consumer): deleted after a successful handling.
//   - dead_lettered: moved to the dead-letter queue, where it stays parked
//     (the DLQ does not trace it as sent).
//   - redriven (Msg the new message, Origin the dead letter, Consumer the
//     target's logical consumer): a dead letter back in its source queue.
//   - deduplicated (Origin the message it repeats): a send the FIFO dedup
//     window dropped.
//   - expired (Cause sim.CauseRetention), purged: deleted; the ledger
//     books every unapplied message as lost with that cause.
//   - lost (Consumer, Cause sim.CauseAckBeforeProcess): an at-most-once
//     consumer acked a message it then failed to process or crashed on.
//
// Detail texts are built only when a sink shows them
// (sim.Trace.Detailed).
//
// Components. New, NewConsumer take the world first and register what they
// make with it: a Queue runs in the broker phase, a Consumer (a pool of
// Instances competing instances name#1..n, from a Start tick, pausable
// with Pause and Resume) in the consumer phase. Producers live in package
// producer. Consumers use the one handler contract, sim.Handler, wrapped
// with the injector's Handler so the handler fault points (poison,
// permanent, transient, slow) are consulted; they consult the crash points
// consumer.crash_before_process and consumer.crash_after_effect
// themselves. Queues consult broker.unavailable, broker.duplicate,
// broker.delay and broker.reorder.
//
// Cost. Every operation is O(log n) in the resident messages (heaps with
// index fields for delayed and in-flight messages, rings for visible ones,
// receipts that address their slot directly); only Purge touches every
// message. A resident message costs about 210 bytes beyond its body, and no
// Go map order ever reaches the trace.
package queue
