// Package queue is brokerlab's SQS-like work queue for competing consumers.
//
// A Queue holds messages that consumers receive in batches. Each delivery
// carries a Receipt and the copy's receive count; a received message stays
// invisible for the visibility timeout (the queue's, or the receive's own:
// ReceiveOptions.VisibilityTimeout) and comes back, with its receive count
// one higher on the next receive, unless it is acked (deleted) in time.
// Nack returns a message early, optionally after a delay; ChangeVisibility
// resets the timeout of the current delivery only, counted from the call.
// A receipt issued before a redelivery is stale: Ack, Nack and
// ChangeVisibility reject it with ErrStaleReceipt and trace the rejection.
//
// Sends and receives. Config.Delay is the queue-level delay (SQS DelaySeconds); on a
// standard queue a positive per-message delay replaces it. Config.MaxInFlight
// caps the messages in flight: a receive at the cap is refused and traced
// (ErrOverLimit for a short poll on a standard queue, nothing returned
// otherwise). Config.Strict applies SQS's API limits (at most
// MaxStrictBatch messages per receive, the StrictInFlightLimit cap); the
// default is permissive. Consumers long-poll (ConsumerConfig.WaitTime, or
// the queue's ReceiveWaitTime): a receive call stays open until a message
// is visible or its wait is over, one attempt per tick, so it is answered
// the tick a message becomes visible and makes few empty receives.
//
// Lost and refused acks. While the broker is unavailable (broker.unavailable)
// sends, receives, acks, nacks, visibility changes and dead-letter moves
// fail with ErrUnavailable, each traced as rejected naming the call; the
// message stays where it was, so an unacked one comes back after its
// visibility timeout. broker.ack_lost loses a valid ack on its way: Ack
// reports success, the fault is traced, the message stays in flight and is
// delivered again: the classic cause of a redelivery, which even acking
// before processing does not prevent.
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
// counts reset). A dead-letter queue has its source's type (standard or
// FIFO). A standard dead letter keeps its enqueue time, so the DLQ's
// retention counts from the first send (its age, OldestAge, from the
// move); a FIFO dead letter is enqueued anew.
//
// FIFO queues deliver each message group (the message Key) in send order.
// A message joins its group when it is sent, so a delay (the queue's, or
// broker.delay) holds back the messages behind it instead of letting them
// overtake it. A receive takes, from each group, the run of visible
// messages at its head, in order, as many as the receive asks for; while
// any message of a group is in flight or held (nacked with a delay), no
// receive takes from the group. A FIFO queue refuses a per-message delay.
// An optional deduplication window drops a send whose deduplication ID
// (DedupHeader, else the body's SHA-256 with ContentBasedDedup, else the
// message ID) was accepted fewer than DedupWindow ticks before, and
// suppresses broker.duplicate copies likewise; an ID is remembered while
// its age is below the window and forgotten from the tick its age equals
// it. A consumer processes a FIFO batch one message after the other and,
// when one fails, hands the rest of its group back unprocessed.
//
// Ground truth. The queue and its consumers never write the ledger: they
// report what happens as trace events, and the world's ledger folds them
// (sim.Ledger.Emit). When the ledger is the trace's only listener (a
// headless run, a sweep), the queue books its sent, received, redelivered
// and acked events, and the handlers their processed ones, through the
// trace's typed entry points (sim.Trace.BookSent, BookDelivery, BookAcked,
// BookEffect) instead of building them: each numbers, folds and charges
// the budget exactly as emitting the event would. Every message a queue
// holds is routed to one logical consumer (Config.Consumer, default the
// queue name); every worker receiving from the queue is an instance of
// it. The events the fold reads:
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
//     window dropped; without Origin, a broker duplicate it suppressed.
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
// themselves. Queues consult broker.unavailable, broker.ack_lost,
// broker.duplicate, broker.delay and broker.reorder.
//
// Deliberate differences from Amazon SQS. Each is kept for a reason:
//
//   - SQS short polling samples a weighted random subset of its servers and
//     may return fewer messages than are visible, or none; here every
//     receive sees every visible message, so runs stay reproducible and
//     small queues never return false empty responses.
//   - SQS refuses a FIFO send without a MessageGroupId, and one with neither
//     a MessageDeduplicationId nor content-based deduplication; here the
//     message key is the group (the empty key is a group like any other)
//     and the message ID stands in for a missing deduplication ID, so plain
//     producers need no extra headers.
//   - SQS FIFO queues always deduplicate over a fixed 5-minute interval;
//     here DedupWindow is set in ticks and 0 switches deduplication off, to
//     show what it prevents.
//   - On a standard queue SQS lets a message's DelaySeconds of 0 override
//     the queue's delay, and a ReceiveMessage VisibilityTimeout of 0 make
//     the messages visible again at once; here 0 is the zero value and
//     means the queue's setting (ChangeVisibility(r, 0) makes a message
//     visible at once).
//   - SQS caps in-flight messages at about 120,000 per queue and receives at
//     10 messages; here in-flight messages are capped only by
//     Config.MaxInFlight or Config.Strict, and receives only by
//     Config.Strict, so models can batch freely.
//   - Durations are ticks, not seconds, so SQS's bounds on them (delays of
//     at most 15 minutes, waits of at most 20 seconds, visibility timeouts
//     of at most 12 hours) are not enforced, Strict included; MaxDuration
//     bounds them all.
//   - A broker.duplicate copy is never duplicated again (SQS's extra
//     copies are occasional, not copies of copies), so a rule that fires
//     on every delivery doubles the work once instead of without end.
//   - A broker.duplicate copy of a FIFO message is made at most once, on
//     its first receive, and joins the back of its group: SQS FIFO makes
//     no duplicates of its own, so a copy past the dedup window stands for
//     a sender's late retry, which happens once per send.
//
// Cost. Every operation is O(log n) in the resident messages (heaps with
// index fields for delayed and in-flight messages, rings for visible ones,
// receipts that address their slot directly, a heap of standard dead
// letters for retention); a FIFO receive also reads the refs of the groups
// it takes from, and only Purge touches every message. Content-based
// deduplication hashes each body once per send. A resident message costs
// about 81 bytes beyond its body and the ledger's share (a 64-byte entry
// and its tag, which rides in the entry chunk's size class, its refs in
// the rings: a standard queue's backlog that was never received is in its
// ring of every copy alone, its delivery order holds a run that counts
// it), and no Go map order ever reaches the trace.
//
// # Names
//
// "Consumer" means two things here. A Consumer is a pool of competing
// instances reading one queue (a file's actors.consumers entry; its
// instances are the trace's actors). The logical consumer
// (Config.Consumer, the queue's name by default) is whose deliveries the
// ledger judges: every instance of every Consumer of a queue delivers to
// it, which is why all of them compete for one stream of messages. A
// fault's match.consumer matches instances, and an expectation's consumer
// means the logical consumer. docs/glossary.md maps the words of files,
// trace and Go onto each other.
package queue
