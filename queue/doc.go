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
// semantics). Consumers also dead-letter by classification: errors wrapping
// ErrPermanent or ErrPoison go to the dead-letter queue at once, transient
// ones are retried by a RetryPolicy (none, fixed, exponential with cap and
// seeded jitter) and dead-lettered once the consumer's MaxAttempts is
// reached. Redrive moves dead letters back to their source queue as new
// messages (new ID, counts reset); the ledger links each to its original.
//
// FIFO queues deliver each message group (the message Key) in send order,
// with at most one message of a group in flight: an in-flight or held
// message blocks its group. An optional deduplication window drops repeated
// sends of the same deduplication ID (DedupHeader, else the message ID).
// Delays on a FIFO queue apply before a message joins its group.
//
// Ground truth. The queue books every step in the Env's ledger under its
// logical consumer (Config.Consumer, default the queue name): Expect and
// Sent on send, Delivered on receive, Acked and state done on ack,
// dead-lettered on a move to the DLQ, expired on retention and purged on
// purge (with a loss, sim.CauseRetention or sim.CausePurge, when the effect
// was never applied). Consumers record Applied when their effect takes
// hold; an at-most-once consumer that acked a message it then failed to
// process records a loss with sim.CauseAckBeforeProcess.
//
// Actors. Queue.Step (broker phase), Consumer (consumer phase) and Producer
// (producer phase) are sim.Actors. Consumers consult the fault points
// consumer.crash_before_process, consumer.crash_after_effect and the
// handler points; queues consult broker.unavailable, broker.duplicate,
// broker.delay and broker.reorder.
//
// Cost. Every operation is O(log n) in the resident messages (heaps with
// index fields for delayed and in-flight messages, rings for visible ones,
// receipts that address their slot directly); only Purge touches every
// message. A resident message costs about 210 bytes beyond its body, and no
// Go map order ever reaches the trace.
package queue
