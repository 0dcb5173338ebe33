// Package bench is brokerlab's benchmark suite. It lives in its own module
// so that the peer it measures against (watermill's in-memory gochannel
// pub/sub) never enters the library's go.mod.
//
// The benchmarks here complement the per-package ones (queue, eventlog,
// pubsub, outbox), which compare each model with its baseline in the same
// run:
//
//   - BenchmarkQueueLifecycle and BenchmarkPeerGoChannelPublishAck: one
//     message's send, receive and ack through a brokerlab queue and through
//     gochannel, in the same process.
//   - BenchmarkScale{Queue,Log,PubSub}: cost per message with 10^3 to 10^6
//     messages resident (the backlog), which must stay flat because no
//     operation scans the backlog.
//   - BenchmarkResident{Queue,Log}: heap bytes per resident message with a
//     64-byte body, from runtime.MemStats, reported with ReportMetric.
//   - BenchmarkWholeRun1M: a generated scenario of 1,000,000 messages
//     through a queue with faults on, headless, ledger on, built directly
//     with the library (World, Producer, Consumers, a fault plan).
//
// run.sh runs everything, interleaved, and writes the ratios to RESULTS.md
// (see README.md).
package bench
