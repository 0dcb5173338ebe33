// Package sim is the deterministic core of brokerlab: the logical clock,
// per-component random streams, the message model, the world that runs actors
// tick by tick, the trace, the ledger and the delivery checkers.
//
// Invariants every package built on sim keeps:
//
//   - Time is a tick counter (Tick). Nothing reads the wall clock.
//   - Randomness comes only from a Stream derived from (seed, component name),
//     so adding a component never changes the draws of another one.
//   - No goroutines, and no Go map iteration whose order could reach output.
//   - Effects come back as data: every state change is a trace Event, and the
//     Ledger keeps the ground truth about every message.
//
// Given the same seed and the same sequence of calls, a run produces a
// byte-identical trace on any machine and with any GOMAXPROCS.
package sim
