// Package bench is brokerlab's benchmark suite. It lives in its own module
// so that the peers it measures against (watermill's in-memory gochannel,
// embedded NATS) never enter the library's go.mod; the Kafka peer (kfake
// with franz-go) is in the kafkapeer module beside it.
//
// Every benchmark reports process CPU time per operation (cpu-ns/op, from
// getrusage) beside wall time; the table's ratios are of CPU time:
//
//   - BenchmarkSweepQueue and BenchmarkSweepLog: one seed of a small
//     workload under probabilistic faults with checks, per operation,
//     through the Go API, simtest, the scenario runner and a hand-written
//     floor, and at GOGC=400.
//   - BenchmarkPeerSeed: the same seed's work on gochannel, NATS core and
//     NATS JetStream (memory storage), in-process and bounded.
//   - BenchmarkQueueLifecycle, BenchmarkLogProducePollCommit,
//     BenchmarkPubSubFanout16 and their baselines: one message through a
//     model and through the simplest structure doing the same work.
//   - BenchmarkPeerGoChannelPublishAck: one message through gochannel.
//   - BenchmarkScale{Queue,Log,PubSub}: cost per message with 10^3 to 10^6
//     messages resident (the backlog), which must stay flat because no
//     operation scans the backlog.
//   - BenchmarkResident{Queue,Log}: heap bytes per resident message with a
//     64-byte body, from runtime.MemStats, reported with ReportMetric.
//   - BenchmarkWholeRun1M: a generated scenario of 1,000,000 messages
//     through a queue with faults on, headless, ledger on, built directly
//     with the library (World, Producer, Consumers, a fault plan).
//
// run.sh runs everything in interleaved rounds and writes the ratios, with
// their range over the rounds, to RESULTS.md (see README.md).
package bench
