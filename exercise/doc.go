// Package exercise turns brokerlab's lessons into exercises a student
// solves in Go (or, for the architecture choice, in a scenario file) and
// grades the solution under faults.
//
// An Exercise is a small deterministic world built from the models (a
// work queue, a go-memdb database, a fault injector on a sim.World) that
// calls the student's functions at fixed points and judges what they did
// against a list of properties, each stated in plain words. Grade runs
// one solution over many seeds (DefaultSeeds), counts per property the
// seeds that broke it, and shrinks the lowest failing seed to a minimal
// fault schedule with faults.Minimize (recording the run's fault
// decisions and replaying subsets of them, as lab.Shrink and
// simtest's Sweep do). The shrunk run is told as a short story of ticks
// and can be replayed in the player (Play), with the student's code
// bound, because every run is a pure function of its seed and schedule.
//
// Start writes the workspace a student owns: the file with the functions
// to write, a README, a generated main.go and test that call Main and
// Test, and a go.mod that builds against the clone it was started from.
// The model solutions and typical wrong solutions live in this package's
// tests, never in a workspace.
//
// Nothing here reads the wall clock, starts goroutines or draws from a
// global random source, except Play, which hands a recorded run to the
// player's own goroutine.
package exercise
