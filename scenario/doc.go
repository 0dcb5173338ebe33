// Package scenario loads brokerlab scenario files: YAML documents that
// describe a topology (queues, topics, logs, groups, services with an
// outbox), actors (producers, consumers, group members, relays), a fault
// plan, a timeline of actions at ticks, narration steps and expectations
// over the ledger and metrics. The format is documented field by field in
// docs/scenario-format.md.
//
// Loading is strict. Load walks the YAML syntax tree itself (with
// github.com/goccy/go-yaml's parser) so that every problem, syntactic or
// semantic, is reported at its position as "file:line:col: message",
// naming what is allowed: unknown fields, wrong types, references to
// things that are not defined, impossible values and sizes over the caps
// (MaxTicks, MaxMessages, MaxPartitions, ...). All problems are reported
// together in one *Errors, sorted by position, which wraps ErrInvalid.
// Load never panics and never allocates in proportion to a value written
// in the file (a run of 10^12 ticks is refused, not attempted); its cost is
// linear in the file size, which is capped at MaxFileSize.
//
// A loaded Scenario is plain data: one Go type per YAML mapping, with
// defaults filled in and, through the embedded Node, the position of every
// mapping and of every field that was written, so a runner can report its
// own problems at the right place. FaultPlan converts the fault rules to a
// faults.Plan and Checker maps check expectations to the sim checkers.
//
// This package is the file format only: it loads, decodes and validates
// files, holds the field table that generates the loader, the reference
// docs and the JSON Schema, names the built-in lessons and writes minimal
// reproducer files (MinFile). Running a loaded scenario is package lab's
// business; lab imports scenario, never the reverse.
package scenario
