// Package eventlog simulates a partitioned, append-only event log in the
// style of Kafka: topics split into partitions, offsets per partition,
// consumer groups with generations and assignment strategies, committed
// offsets, replay, retention, compaction, and a history checker in the
// spirit of the Jepsen Kafka checker.
//
// # Model
//
// A Log holds N partitions. A record with a key goes to partition
// crc32.ChecksumIEEE(key) % N (PartitionFor); records without a key are
// spread round robin, which is deterministic. Each partition assigns
// offsets 0, 1, 2, ... in append order; order is guaranteed only within a
// partition. A record carries the produced message (ID, key, body, headers)
// and the tick it was appended.
//
// Retention deletes records from the head of a partition and moves its
// log start; a position below it is out of range. Compaction (Config.Compact)
// keeps the latest record of each key, removes a tombstone (a keyed record
// with a nil body) and what it deletes once the tombstone's age reaches
// Config.TombstoneRetention, and moves the log start to the first record
// that remains. As in Kafka, every offset stays a valid position: a
// position whose record compaction removed reads from the next record that
// remains, and one in a tail compaction emptied reads as the log end, so a
// group behind it has no lag and catches up at its next fetch.
//
// Every constructor is bound to a sim.World: New(w, cfg) registers the
// topic as the component "log:<name>" (sim.PhaseBroker), NewGroup(w, t,
// cfg) creates a group on it, and NewMember(w, g, cfg) registers a member
// as "member:<group>/<name>" (sim.PhaseConsumer). Nothing is built on a
// private clock or ledger, and no phase is the caller's choice.
//
// A Group reads a topic. Members join and leave, crash, or miss their
// session timeout; every change of membership is a rebalance that bumps the
// group's generation and reassigns the partitions with the group's Strategy
// (Range, RoundRobin or Sticky, Kafka's StickyAssignor: a fresh assignment
// is the round robin one), at most one member per partition. A commit
// stores the next offset to read; a commit from an older generation, for a
// partition the member does not own, of a negative offset or of one past
// the log end is rejected and traced (Kafka's coordinator would accept the
// last, see Group.Commit). Groups are independent: each has its own
// committed offsets.
//
// A member's position in a partition comes from the committed offset, and
// auto.offset.reset (GroupConfig.Reset) decides at the member's first fetch
// when there is none or it is out of range: a group with ResetLatest
// starts at the log end as it is at its first poll, not at its creation.
// Seeks (SeekOffset, SeekEarliest, SeekLatest, SeekTick) are atomic across
// partitions and accept an offset past the end, which the next fetch
// resolves by auto.offset.reset the same way.
//
// A Member takes a sim.Handler, the handler contract every model shares,
// wrapped with the topic's fault injector so the handler.* fault points
// apply. Each Step polls a batch, hands every record to the handler and
// commits according to the member's CommitMode (after processing:
// at-least-once; before processing: at-most-once; automatically every K
// ticks; or the off-by-one mistake of committing the last processed offset
// instead of the next one). A slow handler (sim.Timed) keeps the member
// busy: it stops polling until the record is done, and refuses a Poll or
// Fetch meanwhile (ErrBusy), leaving its batch alone. The same behaviour
// is available as a pull API (Poll, Delivery, MarkProcessed, MarkFailed,
// Commit, CommitRecords) for adapters that drive a member themselves; Step
// is written with those calls.
//
// # Ground truth
//
// The model writes no ledger: it reports what happens as trace events, and
// the ledger folds them. The logical consumer is the group's name (the
// Consumer of every group event; the member is the Actor). A group is
// created "subscribed" to its topic (naming its auto.offset.reset policy:
// "earliest", "latest" or "none"), so the ledger knows which records it
// expects; each "polled" is a delivery and each effect the handler records
// with Delivery.Apply an application.
// Every loss is booked where it happens, with its cause: records that
// retention or compaction deletes before a group applied them ("expired"
// with sim.CauseRetention or sim.CauseCompaction); records skipped by
// auto.offset.reset=latest (sim.CauseOffsetReset), among them what a new
// latest group missed before its first poll; records skipped by a seek
// forward (sim.CauseSeek), or by a seek past the end once the log reaches
// its offset; and records committed but never processed
// (sim.CauseCommitBeforeProcess): with CommitBefore, when the handler
// failed on them or when the member then crashed, left or lost the
// partition in a rebalance, and whenever a commit past records the group
// never handled becomes where it reads from. A loss is booked only when it
// is certain: a CommitBefore failure whose commit was lost or refused is
// booked when a later commit passes the record, and not at all when a
// rebalance hands the record to a reader again.
//
// The log consults these fault points: broker.unavailable (a produce, a
// poll or a commit fails, traced as rejected), broker.ack_lost (an offset
// commit is lost on its way: the member believes it committed, the
// committed offset does not change, so the next owner reads again from the
// older one), member.crash, member.leave, member.session_timeout,
// consumer.crash_before_commit, consumer.crash_after_effect,
// log.partitions_added and log.retention_overtake, plus the handler.*
// points through the wrapped handler.
//
// Trace events name the component "log:"+topic and carry the partition and
// offset (Event.HasPos). A Log can also record a History of sends and
// polls, which CheckHistory inspects as the Jepsen Kafka checker does for
// lost writes (an acknowledged write no consumer read below the highest
// offset read in its partition), duplicates (one value at two offsets;
// reading one offset twice is not one), skipped offsets, non-monotonic
// polls and sends, and inconsistent offsets. CheckHistoryWith with
// CheckOptions.PerGroup judges every group on its own, counting its
// redeliveries as duplicates. The history also records what compaction and
// retention removed, so reading past a removed offset is no skip, and a
// value compaction superseded is no lost write; one retention deleted
// unread is, as the ledger books it as a loss, except under PerGroup for
// offsets below a group's first read, which only count as Unseen.
//
// # Cost
//
// Partitions are slices with a moving head: appending is amortised O(1),
// retention moves the log start in O(records deleted), and a poll costs
// O(log n + batch). No operation per produce or poll scans the backlog;
// compaction costs O(records in the partition) and runs rarely. A resident
// record costs about 160 bytes beyond its key and body; a group keeps a
// delivery count only for the records it read more than once, and a mark
// for the records it applied at or past its committed offset until a
// commit passes them. Detail texts of events are formatted only when a
// sink shows them (sim.Trace.Detailed).
//
// # Differences from Kafka
//
// Where the model departs from Kafka on purpose, this is the real
// behaviour and why:
//
//   - Kafka never cleans the active segment and counts delete.retention.ms
//     from the time the cleaner first cleaned a tombstone (its delete
//     horizon); brokerlab has no segments, so Compact considers every
//     record, the newest included, and a tombstone's age counts from the
//     tick it was appended, which makes the boundary exact and independent
//     of when compaction first ran.
//   - Kafka's log start offset moves only with retention (and
//     DeleteRecords), so a compacted partition may report a log start whose
//     record is gone; Start moves to the first record that remains, since
//     both name equivalent positions and that record is the one a reader
//     gets.
//   - Kafka's KafkaConsumer.seek only moves the consumer's position and the
//     commit comes later; the Seek methods move the position and commit the
//     offset at once, as kafka-consumer-groups --reset-offsets does, so
//     that a seek is one operation on the timeline.
//   - Kafka's sticky assignor visits the members' previous assignments in
//     hash-map order when it decides which members keep more than
//     minQuota partitions; Sticky visits them in name order, so that the
//     assignment is deterministic. Rebalances follow the eager protocol:
//     the CooperativeStickyAssignor's second rebalance for revoked
//     partitions is not modelled, every rebalance reassigns at once.
//   - Kafka's commitSync reports an error when its request or response is
//     lost; broker.ack_lost models the member that believes it committed
//     (an asynchronous or automatic commit whose failure nobody checks),
//     the classic cause of records read again after a rebalance.
//   - Kafka's lag tools show a negative lag for a committed offset past the
//     log end; PartitionLag.Lag is 0 there.
//   - The Jepsen checker finds duplicates per key (partition); CheckHistory
//     also reports a value found in two partitions, since brokerlab's values
//     are message IDs unique in the run. Jepsen resets a process's expected
//     offsets when it assigns or subscribes; CheckHistory compares the reads
//     of one reading session of a group (Read.Epoch), which a rebalance, a
//     seek and an offset reset end.
//
// Everything is deterministic: no goroutines, no wall clock, no map
// iteration reaches the trace.
//
// # Names
//
// A Log is what scenario files, the trace (component "log:"+name) and the
// player call a log (Kafka calls it a topic). A Group is a consumer group,
// its Members are what a file lists under actors.members, and the logical
// consumer of their deliveries (sim.Event.Consumer) is the group's name.
// docs/glossary.md maps the words of files, trace and Go onto each other.
package eventlog
