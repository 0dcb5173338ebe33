// Package sim is the deterministic core of brokerlab: the logical clock,
// per-component random streams, the message model, the world that runs actors
// tick by tick, the trace, the ledger folded from it, the delivery checkers,
// the one handler contract every model uses, and the budget on derived work.
//
// Invariants every package built on sim keeps:
//
//   - Time is a tick counter (Tick). Nothing reads the wall clock.
//   - Randomness comes only from a Stream derived from (seed, component name),
//     so adding a component never changes the draws of another one.
//   - No goroutines, and no Go map iteration whose order could reach output.
//   - One source of truth: what happened is recorded once, as trace Events.
//     The Ledger is a fold over them (Ledger.Emit is its only input), so the
//     same fold over a recorded JSON Lines trace (ReadJSONL) gives the same
//     ledger and every verdict can be audited from the trace alone. The
//     JSON trace is tamper-evident: its events are numbered without gaps,
//     each line carries a running hash of the lines so far, and a closing
//     record counts them, so a trace that was edited or cut is refused
//     with the line it went wrong on instead of being judged.
//   - Lineage: a redriven message, a fan-out copy and a deduplicated send are
//     new copies whose Origin names the copy they came from; the checkers
//     judge per origin and logical consumer (Ledger.Outcomes).
//   - Effects are observed: handlers record them through Delivery.Apply and
//     absorbed duplicates through Delivery.Skip; deliveries never stand in
//     for effects.
//   - Models are bound to a World: their constructors take it and register
//     themselves in the phase their type fixes, so every model of a run
//     shares one clock, one trace and one ledger.
//
// Given the same seed and the same sequence of calls, a run produces a
// byte-identical trace on any machine and with any GOMAXPROCS.
package sim
