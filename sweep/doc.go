// Package sweep runs a deterministic check over many seeds and shrinks a
// failing seed's fault schedule: the one seed loop and the one shrinker
// behind brokerlab explore, simtest's Sweep, the exercise grader and the
// Watermill harness.
//
// Run spreads a space of seeds (a range, or shard K of N of one) over
// Jobs workers. Every worker builds its own probe, so workers share no
// state but a few atomic counters; the report is sorted by seed and does
// not depend on how the seeds were scheduled. With StopAtFirst the sweep
// stops at the first failure, and the lowest failing seed is still the
// same on every run: no seed above a known failure starts, and every seed
// below it runs to the end. A report gives the wall time and the
// process's CPU time, so that a caller can print seeds per CPU-second
// beside seeds per wall-clock second (a busy machine shares its cores,
// and only the CPU figure stays put).
//
// Shrink takes a function that reruns the failing seed, replaying a fault
// schedule exactly, and reduces the decisions that fired to a 1-minimal
// schedule with faults.Minimize: removing any single decision of it makes
// the failure go away. The caller names the failure: the function says
// whether a run still fails its one target (an expectation, a checker, a
// property), whatever else the run fails too. It rechecks the result with one more replay and
// counts the runs it spent.
//
// The package is a driver: Run uses goroutines and the wall clock. What a
// probe computes must depend on its seed alone.
package sweep
