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
// A Group reads a topic. Members join and leave, crash, or miss their
// session timeout; every change of membership is a rebalance that bumps the
// group's generation and reassigns the partitions with the group's Strategy
// (Range, RoundRobin or Sticky), at most one member per partition. A commit
// stores the next offset to read; a commit from an older generation, or for
// a partition the member does not own, is rejected and traced. Groups are
// independent: each has its own committed offsets.
//
// Members are sim.Actors (sim.PhaseConsumer): each Step polls a batch,
// runs the handler on every record and commits according to the member's
// CommitMode (after processing: at-least-once; before processing:
// at-most-once; automatically every K ticks; or the off-by-one mistake of
// committing the last processed offset instead of the next one).
//
// # Ground truth
//
// The logical consumer in the ledger is the group's name. A group expects
// every record at or after the position it started from; each poll is a
// ledger delivery and each successful handler call a ledger application.
// Records that retention deletes before the group applied them are ledger
// losses with sim.CauseRetention; records skipped by auto.offset.reset=latest
// are losses with sim.CauseOffsetReset; records committed but never
// processed because the member crashed are losses with
// sim.CauseCommitBeforeProcess. Compaction drops superseded values by
// design: an unread superseded value is recorded as missed, not lost.
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
// compaction, a group's creation and auto.offset.reset=latest cost
// O(records in the partition) and run rarely. A resident record costs
// about 160 bytes beyond its key and body.
//
// Everything is deterministic: no goroutines, no wall clock, no map
// iteration reaches the trace.
package eventlog
