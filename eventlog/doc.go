// Package eventlog simulates a partitioned, append-only event log in the
// style of Kafka: topics split into partitions, offsets per partition,
// consumer groups with generations and assignment strategies, committed
// offsets, replay, retention, compaction, and a history checker in the
// spirit of the Jepsen Kafka checker.
//
// # Model
//
// A Topic holds N partitions. A record with a key goes to partition
// crc32.ChecksumIEEE(key) % N (PartitionFor); records without a key are
// spread round robin, which is deterministic. Each partition assigns
// offsets 0, 1, 2, ... in append order; order is guaranteed only within a
// partition. A record carries the produced message (ID, key, body, headers)
// and the tick it was appended.
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
// (Range, RoundRobin or Sticky), at most one member per partition. A commit
// stores the next offset to read; a commit from an older generation, or for
// a partition the member does not own, is rejected and traced. Groups are
// independent: each has its own committed offsets.
//
// A Member takes a sim.Handler, the handler contract every model shares,
// wrapped with the topic's fault injector so the handler.* fault points
// apply. Each Step polls a batch, hands every record to the handler and
// commits according to the member's CommitMode (after processing:
// at-least-once; before processing: at-most-once; automatically every K
// ticks; or the off-by-one mistake of committing the last processed offset
// instead of the next one). A slow handler (sim.Timed) keeps the member
// busy: it stops polling until the record is done. The same behaviour is
// available as a pull API (Poll, Delivery, MarkProcessed, MarkFailed,
// Commit, CommitRecords) for adapters that drive a member themselves; Step
// is written with those calls.
//
// # Ground truth
//
// The model writes no ledger: it reports what happens as trace events, and
// the ledger folds them. The logical consumer is the group's name (the
// Consumer of every group event; the member is the Actor). A group is
// created "subscribed" to its topic ("earliest" or "latest"), so the
// ledger knows which records it expects; each "polled" is a delivery and
// each effect the handler records with Delivery.Apply an application.
// Every loss is booked where it happens, with its cause: records that
// retention or compaction deletes before a group applied them ("expired"
// with sim.CauseRetention or sim.CauseCompaction); records skipped by
// auto.offset.reset=latest (sim.CauseOffsetReset) or by a seek forward
// (sim.CauseSeek); and records committed but never processed with
// CommitBefore, when the handler failed on them or when the member then
// crashed, left or lost the partition in a rebalance
// (sim.CauseCommitBeforeProcess).
//
// Trace events name the component "log:"+topic and carry the partition and
// offset (Event.HasPos). A Topic can also record a History of sends and
// polls, which CheckHistory inspects for lost writes, duplicates, skipped
// offsets, non-monotonic polls and sends, and inconsistent offsets.
//
// # Cost
//
// Partitions are slices with a moving head: appending is amortised O(1),
// retention moves the log start in O(records deleted), and a poll costs
// O(log n + batch). No operation per produce or poll scans the backlog;
// compaction costs O(records in the partition) and runs rarely. A resident
// record costs about 160 bytes beyond its key and body; a group keeps a
// delivery count only for the records it read more than once. Detail
// texts of events are formatted only when a sink shows them
// (sim.Trace.Detailed).
//
// Everything is deterministic: no goroutines, no wall clock, no map
// iteration reaches the trace.
package eventlog
