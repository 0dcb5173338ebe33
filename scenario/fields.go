package scenario

import (
	"encoding"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/outbox"
	"github.com/brokerlab/brokerlab/producer"
	"github.com/brokerlab/brokerlab/projection"
	"github.com/brokerlab/brokerlab/pubsub"
	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/saga"
	"github.com/brokerlab/brokerlab/sim"
)

// kind is the type of a field's value as a file writes it.
type kind int

// The kinds of fields. The loader decodes each kind the same way
// wherever it occurs; the documentation and the JSON Schema describe it
// the same way too.
const (
	kName    kind = iota // a name (see checkName)
	kLine                // a one-line string of at most maxLine bytes
	kText                // free text of at most maxText bytes; may span lines
	kTicks               // whole ticks within min..max
	kInt                 // a whole number within min..max, into an int
	kInt64               // a whole number within min..max, into an int64
	kSeed                // a whole number from 0 to 2^64-1
	kNumber              // a finite number within lo..hi
	kBool                // true or false
	kEnum                // one of the words of enum
	kObject              // a mapping described by of
	kList                // a list of mappings described by of
	kNames               // a list of names
	kKeys                // a key pattern, or a list of one-line strings
	kTarget              // a mapping with exactly one of the fields of of, each a name
	kPattern             // a one-line path.Match pattern
	kMetric              // a metric name (see parseMetric)
	kPoint               // a fault point name (see faults.Points)
	kSet                 // a mapping of dotted paths to any values
)

// field describes one key of a mapping in a scenario file: the single
// source from which the loader decodes and checks the value, and from
// which docs/scenario-format.md and scenario.schema.json are generated.
type field struct {
	name string // the YAML key
	kind kind
	// label names the value in error messages; "" means name.
	label string
	// min and max bound kTicks, kInt and kInt64; note says why, in errors.
	min, max int64
	note     string
	// lo and hi bound kNumber.
	lo, hi float64
	// enum lists the words of kEnum, in documentation order; values
	// documents some of them.
	enum   []string
	values map[string]string
	// or is a word allowed instead of the kind ("short", "none").
	or string
	// def is the value when the field is not written (nil: the zero
	// value, or one computed by the object's check, which defDoc names).
	def    any
	defDoc string
	// required fields must be written.
	required bool
	// empty, when set, is the error for an empty string.
	empty string
	// doc is the field's meaning, one line, for the documentation.
	doc string
	// of describes the mapping of kObject, kList and kTarget.
	of *object
	// maxItems caps kList, kNames and kKeys lists.
	maxItems int
	// gofield is the field of the Go struct the value goes to; "" for
	// fields only a hook decodes.
	gofield string
	// inline documents of's fields as rows of this table (name.sub).
	inline bool

	index  []int                                     // of gofield in the struct, set by init
	decode func(d *dec, v ast.Node, s reflect.Value) // a hook for what no kind expresses, set by init
}

// object describes a mapping of a scenario file.
type object struct {
	// what names the mapping in errors ("queue", "the scenario"); needs
	// names it in "needs the field" errors ("" means what).
	what, needs string
	// title and anchor place it in the documentation.
	title, anchor string
	fields        []field
	// check runs after the fields were decoded and the required ones
	// found: what one field alone cannot say. Set by init.
	check func(d *dec, p any)
}

// words returns the text of each value as the model type spells it
// (encoding.TextMarshaler): the one spelling of an enum, in files, in
// errors and in the model's String. It panics on a value the type does
// not name, a mistake in this file.
func words[T encoding.TextMarshaler](vs ...T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		b, err := v.MarshalText()
		if err != nil {
			panic(err)
		}
		out[i] = string(b)
	}
	return out
}

// maxRetentionBytes caps a log's retention.bytes: 1 GiB of keys and bodies
// per partition is far beyond what a scenario's messages can fill.
const maxRetentionBytes = 1 << 30

// Ranges of the integer fields.
var (
	tickRange     = bounds{0, MaxTicks, "ticks are capped at 1000000"}
	durationRange = bounds{1, MaxTicks, "ticks are capped at 1000000"}
	runRange      = bounds{1, MaxTicks, "ticks are capped at 1000000"}
	countRange    = bounds{1, MaxMessages, "messages are capped at 500000"}
	rateRange     = bounds{1, MaxRate, "per tick"}
	partRange     = bounds{1, MaxPartitions, "partitions are capped at 1024"}
	batchRange    = bounds{1, MaxBatch, ""}
)

// The constructors of the common fields, to keep the table short.

func fTicks(name string, b bounds, gofield, doc string) field {
	return field{name: name, kind: kTicks, min: b.min, max: b.max, note: b.note, gofield: gofield, doc: doc}
}

func fInt(name string, b bounds, gofield, doc string) field {
	return field{name: name, kind: kInt, min: b.min, max: b.max, note: b.note, gofield: gofield, doc: doc}
}

func fBool(name, gofield, doc string) field {
	return field{name: name, kind: kBool, gofield: gofield, doc: doc}
}

func fName(name, label, gofield string, required bool, doc string) field {
	return field{name: name, kind: kName, label: label, gofield: gofield, required: required, doc: doc}
}

func fEnum(name, label, gofield string, def string, values []string, doc string) field {
	return field{name: name, kind: kEnum, label: label, gofield: gofield, def: def, enum: values, doc: doc}
}

func fWith(f field, set func(*field)) field { set(&f); return f }

func withDef(f field, v any) field { f.def = v; return f }

func fList(name string, of *object, max int, gofield, doc string) field {
	return field{name: name, kind: kList, of: of, maxItems: max, gofield: gofield, doc: doc}
}

// The strict queue's caps as the docs write them, from the model's
// constants.
var (
	strictBatch  = strconv.Itoa(queue.MaxStrictBatch)
	strictFlight = thousands(queue.StrictInFlightLimit)
)

var idempotencyWords = words(sim.NotIdempotent, sim.KeyByMessageID, sim.KeyByBusinessKey)

var (
	runObj = &object{what: "run", title: "run", anchor: "run", fields: []field{
		fWith(fTicks("ticks", runRange, "Ticks", "run exactly this many ticks"), func(f *field) { f.defDoc = "—" }),
		fWith(fEnum("until", "", "Until", "", []string{UntilDrained}, "stop when the system is drained (below)"), func(f *field) { f.defDoc = "—" }),
		fWith(fTicks("max_ticks", runRange, "MaxTicks", "only with `until`; the run stops there even when not drained"), func(f *field) { f.defDoc = "10,000" }),
	}}

	deadLetterObj = &object{what: "dead_letter", fields: []field{
		fName("queue", "dead_letter queue", "Queue", true, "another queue; no queue may dead-letter to itself or in a cycle"),
		withDef(fInt("max_receive_count", bounds{1, MaxReceiveCount, ""}, "MaxReceiveCount", "a message moves to the DLQ when its receive count would exceed it"), 3),
	}}

	queueObj = &object{what: "queue", title: "queue", anchor: "queue", fields: []field{
		fName("name", "queue name", "Name", true, ""),
		withDef(fTicks("visibility_timeout", durationRange, "VisibilityTimeout", "how long a received message stays invisible"), queue.DefaultVisibilityTimeout),
		fTicks("retention", tickRange, "Retention", "messages older than this are deleted; 0 keeps them"),
		{name: "dead_letter", kind: kObject, of: deadLetterObj, gofield: "DeadLetter", inline: true, defDoc: "none", doc: "the redrive policy"},
		fBool("fifo", "FIFO", "message groups by key, and deduplication; a FIFO queue refuses per-message delays, so `delay` is its only delay"),
		fTicks("dedup_window", tickRange, "DedupWindow", "only with `fifo: true`; a send whose deduplication ID was accepted fewer than this many ticks before is dropped (traced `deduplicated`), and `broker.duplicate` copies inside the window are suppressed"),
		fBool("content_based_dedup", "ContentBasedDedup", "the SHA-256 of the body is the deduplication ID (SQS ContentBasedDeduplication); only with `fifo: true` and a `dedup_window` above 0"),
		fTicks("delay", tickRange, "Delay", "queue-level delivery delay (SQS DelaySeconds): a sent message becomes visible this many ticks after its send; 0 is none"),
		fTicks("receive_wait_time", tickRange, "ReceiveWaitTime", "long polling (SQS ReceiveMessageWaitTimeSeconds): a receive of a consumer whose `wait_time` is 0 stays open up to this many ticks until a message is visible; 0 is short polling"),
		fInt("max_in_flight", bounds{0, MaxMessages, "0 means no cap"}, "MaxInFlight", "on a `strict` queue at most "+strictFlight+"; messages received and neither deleted nor visible again; a receive at the cap is refused and traced `rejected`; 0 is no cap ("+strictFlight+" on a `strict` queue)"),
		fBool("strict", "Strict", "SQS's API limits: a consumer's `batch` is at most "+strictBatch+", and the in-flight cap is "+strictFlight+" unless `max_in_flight` sets a lower one. The default is permissive: any batch, no in-flight cap"),
	}}

	fanOutRetryObj = &object{what: "fan_out_retry", title: "fan_out_retry", fields: []field{
		fInt("immediate", bounds{0, MaxRetries, ""}, "Immediate", "retries at once, in the tick of the refusal"),
		fInt("backoff", bounds{0, MaxRetries, ""}, "Backoff", "retries after a wait"),
		withDef(fTicks("delay", durationRange, "Delay", "the wait before the first backoff retry; only with `backoff` above 0"), sim.Tick(1)),
		fWith(fTicks("max_delay", durationRange, "MaxDelay", "caps the doubling wait; not below `delay`; only with `backoff` above 0"), func(f *field) { f.defDoc = "no cap" }),
	}}

	emitObj = &object{what: "emit", fields: []field{
		fName("topic", "emit topic", "Topic", true, "the topic the message is published to"),
		withDef(fInt("count", bounds{1, MaxEmits, ""}, "Count", "messages per message handled"), 1),
		{name: "type", kind: kLine, gofield: "Type", defDoc: "the incoming type", doc: "message type header"},
	}}

	subscriberObj = &object{what: "subscriber", title: "subscriber", anchor: "topic", fields: []field{
		fName("name", "subscriber name", "Name", true, "unique over all topics"),
		withDef(fInt("buffer", bounds{1, MaxBuffer, ""}, "Buffer", "messages the subscriber's buffer holds"), pubsub.DefaultBuffer),
		{name: "overflow", kind: kEnum, gofield: "Overflow", def: pubsub.DropNewest, enum: words(pubsub.DropNewest, pubsub.DropOldest, pubsub.Block),
			values: map[string]string{"block": "blocks the publisher"}, doc: "what a full buffer does with one more message"},
		fBool("offline", "Offline", "starts disconnected (`connect` brings it online)"),
		{name: "emits", kind: kList, of: emitObj, maxItems: MaxEntities, gofield: "Emits", inline: true, doc: "messages published for every message handled"},
		fBool("source_check", "SourceCheck", "ignore messages whose source header is this subscriber (breaks sync loops)"),
		fBool("supervisor", "Supervisor", "publish the emits with the supervisor switch on: they are published (and counted in `topic.NAME.published`), durable `fan_out_to_queues` get them, but no ephemeral subscriber of any topic does (each skipped copy is traced `suppressed`); needs `emits`"),
	}}

	topicObj = &object{what: "topic", title: "topic", anchor: "topic", fields: []field{
		fName("name", "topic name", "Name", true, ""),
		fList("subscribers", subscriberObj, MaxActors, "Subscribers", ""),
		{name: "fan_out_to_queues", kind: kNames, label: "fan-out queue", maxItems: MaxEntities, doc: "durable queues that get a copy of every publish (each at most once)"},
		fInt("cascade_limit", bounds{0, MaxCascade, ""}, "CascadeLimit", "how deep events caused by events may go; 0 is no limit"),
		{name: "fan_out_retry", kind: kObject, of: fanOutRetryObj, or: "none", defDoc: "the default policy (below)", doc: "how a forward a fan-out queue refused (e.g. `broker.unavailable` at `queue:NAME`) is retried; only with `fan_out_to_queues`"},
	}}

	retentionObj = &object{what: "retention", fields: []field{
		fWith(fTicks("ticks", durationRange, "Ticks", "records older than this are deleted"), func(f *field) { f.defDoc = "no limit" }),
		fWith(fInt("records", bounds{1, MaxMessages, ""}, "Records", "records kept per partition"), func(f *field) { f.defDoc = "no limit" }),
		{name: "bytes", kind: kInt64, min: 1, max: maxRetentionBytes, note: "bytes are capped at 1073741824", gofield: "Bytes", defDoc: "no limit",
			doc: "key and body bytes kept per partition; the newest record stays, however large"},
	}}

	logObj = &object{what: "log", title: "log", anchor: "log", fields: []field{
		fName("name", "log name", "Name", true, ""),
		withDef(fInt("partitions", partRange, "Partitions", ""), 1),
		{name: "retention", kind: kObject, of: retentionObj, gofield: "Retention", inline: true, defDoc: "none (keep all)", doc: "at least one of `ticks`, `records`, `bytes`"},
		fBool("compaction", "Compaction", "keep only the latest record per key; tombstones delete"),
	}}

	groupObj = &object{what: "group", title: "group", anchor: "group", fields: []field{
		fName("name", "group name", "Name", true, ""),
		fName("log", "group log", "Log", true, "the log the group reads"),
		{name: "assignment", kind: kEnum, gofield: "Assignment", def: eventlog.Range, enum: words(eventlog.Range, eventlog.RoundRobin, eventlog.Sticky), doc: "how partitions are assigned to members"},
		{name: "auto_offset_reset", kind: kEnum, gofield: "AutoOffsetReset", def: eventlog.ResetEarliest, enum: words(eventlog.ResetEarliest, eventlog.ResetLatest, eventlog.ResetNone), doc: "used when the position fell below the log start"},
		withDef(fTicks("session_timeout", durationRange, "SessionTimeout", ""), eventlog.DefaultSessionTimeout),
		withDef(fTicks("auto_commit_interval", durationRange, "AutoCommitInterval", "for members with `commit: auto`"), eventlog.DefaultAutoCommitEvery),
		fBool("idempotency_per_member", "IdempotencyPerMember", "each idempotent member keeps a dedup table of its own, in memory; by default the group's members share one (per `idempotency` key), as a service keeps it in its database, so a member that takes a partition over skips what another applied"),
		fBool("projection", "Projection", "the members feed a projection: a read model of one row per key that `read` actions read"),
		{name: "versioning", kind: kEnum, gofield: "Versioning", def: projection.VersionOffset, enum: words(projection.VersionOffset, projection.VersionClock, projection.VersionNone),
			values: map[string]string{"offset": "a row keeps the offset of its record and ignores older ones; offsets of different partitions do not compare, so a key's latest write at a lower offset of a partition added since is lost (`lost_offset_order`)", "clock": "last write wins by the writer's clock (`clock_skew`)", "none": "every record overwrites, replayed ones too"},
			doc:    "with `projection`: how rows are versioned"},
	}}

	serviceTargetObj = &object{what: "target", fields: []field{
		fName(TargetQueue, "", "", false, ""), fName(TargetTopic, "", "", false, ""), fName(TargetLog, "", "", false, ""),
	}}
	producerTargetObj = &object{what: "target", fields: []field{
		fName(TargetQueue, "", "", false, ""), fName(TargetTopic, "", "", false, ""), fName(TargetLog, "", "", false, ""), fName(TargetService, "", "", false, ""),
	}}

	serviceObj = &object{what: "service", title: "service", anchor: "service", fields: []field{
		fName("name", "service name", "Name", true, ""),
		{name: "writer", kind: kEnum, gofield: "Writer", def: outbox.Outbox, enum: words(outbox.Outbox, outbox.CommitThenPublish, outbox.PublishThenCommit),
			values: map[string]string{
				outbox.Outbox.String():            "business and outbox row in one transaction; relays publish",
				outbox.CommitThenPublish.String(): "a crash in between loses the event",
				outbox.PublishThenCommit.String(): "a failed commit leaves a phantom event",
			}, doc: "how the service writes its row and its event"},
		{name: "publish_to", kind: kTarget, of: serviceTargetObj, required: true, doc: "where its events go"},
		withDef(fInt("max_attempts", bounds{1, MaxAttempts, ""}, "MaxAttempts", "relay attempts before a row becomes a dead letter"), outbox.DefaultMaxAttempts),
		fTicks("cleanup", tickRange, "Cleanup", "processed outbox rows are deleted after this; 0 keeps them"),
	}}

	topologyObj = &object{what: "topology", title: "topology", anchor: "topology", fields: []field{
		fList("queues", queueObj, MaxEntities, "Queues", ""),
		fList("topics", topicObj, MaxEntities, "Topics", ""),
		fList("logs", logObj, MaxEntities, "Logs", ""),
		fList("groups", groupObj, MaxEntities, "Groups", ""),
		fList("services", serviceObj, MaxEntities, "Services", ""),
	}}

	producerObj = &object{what: "producer", title: "producer", anchor: "producer", fields: []field{
		fName("name", "producer name", "Name", true, ""),
		{name: "to", kind: kTarget, of: producerTargetObj, required: true, doc: "where its messages go"},
		fWith(fInt("count", countRange, "Count", "messages (the sum over all producers is capped too)"), func(f *field) { f.required = true }),
		withDef(fInt("rate", rateRange, "Rate", "messages per tick"), 1),
		fTicks("start", tickRange, "Start", "first tick that produces"),
		{name: "keys", kind: kKeys, maxItems: MaxKeyList, defDoc: "no keys", doc: "a pattern such as `\"kunde-%d\"` (`%d` becomes 1..`key_count`; no other `%`), a fixed key (`\"kunde-A\"`), or a list (`[kunde-A, kunde-B]`)"},
		fWith(fInt("key_count", bounds{1, MaxKeys, ""}, "KeyCount", "only with a pattern; more than 1 needs `%d`"), func(f *field) { f.defDoc = "1" }),
		{name: "key_order", kind: kEnum, gofield: "KeyOrder", def: producer.RoundRobin, enum: words(producer.RoundRobin, producer.Random),
			values: map[string]string{string(producer.RoundRobin): "message i gets key i mod n", string(producer.Random): "from the producer's seeded stream"},
			doc:    "which key each message gets"},
		{name: "type", kind: kLine, gofield: "Type", doc: "message type header, e.g. `order.placed`"},
		{name: "source", kind: kLine, gofield: "Source", defDoc: "the producer's name", doc: "source header"},
		fWith(fInt("clock_skew", bounds{-MaxTicks, MaxTicks, "ticks are capped at 1000000"}, "ClockSkew", "how far its clock is off, in ticks (negative: behind); not 0 puts its clock reading in every message, the version of `versioning: clock`"), func(f *field) { f.defDoc = "0" }),
		fWith(fInt("schema_version", bounds{0, MaxSchemaVersion, "0 is unversioned, read as 1"}, "SchemaVersion", "the schema version header of its messages"), func(f *field) { f.defDoc = "0" }),
		{name: "on_refused", kind: kEnum, gofield: "OnRefused", def: producer.OnRefusedRetry, enum: words(producer.OnRefusedRetry, producer.OnRefusedDrop),
			values: map[string]string{
				string(producer.OnRefusedRetry): "sends it again first on the next tick: nothing is lost, later messages wait",
				string(producer.OnRefusedDrop):  "gives it up: a loss with cause \"broker unavailable\"",
			}, doc: "what happens to a message the broker refuses (`broker.unavailable`, a full `block` subscriber)"},
	}}

	handlerObj = &object{what: "handler", title: "handler", anchor: "handler", fields: []field{
		{name: "kind", kind: kEnum, label: "handler kind", gofield: "Kind", def: sim.Succeed,
			enum: words(sim.Succeed, sim.Transient, sim.Permanent, sim.Poison, sim.Slow),
			values: map[string]string{
				sim.Transient.String(): "fails `failures` times, then succeeds",
				sim.Permanent.String(): "fails; retrying cannot help",
				sim.Poison.String():    "fails on every attempt",
				sim.Slow.String():      "takes `ticks`",
			}, doc: "how the handler treats a matching message"},
		{name: "keys", kind: kPattern, label: "keys", gofield: "Keys", defDoc: "every message", doc: "the behaviour applies to matching keys; other messages succeed"},
		fWith(fInt("failures", bounds{1, MaxFailures, ""}, "Failures", "only for `transient`"), func(f *field) { f.defDoc = "1" }),
		fTicks("ticks", tickRange, "Ticks", "processing time of a matching message, for every kind; `slow` needs at least 1 (a group member stops polling meanwhile)"),
		{name: "error", kind: kLine, gofield: "Error", doc: "error text of failures"},
		fWith(fInt("min_version", bounds{0, MaxSchemaVersion, "0 means no lower bound"}, "MinVersion", "the oldest schema version (`schema_version` of the producer) the handler can parse; a message of an older version fails permanently, whatever its key, until `fix_handler`"), func(f *field) { f.defDoc = "0" }),
		fWith(fInt("max_version", bounds{0, MaxSchemaVersion, "0 means no upper bound"}, "MaxVersion", "the newest schema version the handler can parse; a message of a newer version fails permanently, whatever its key, until `fix_handler` (deploying code that reads every version)"), func(f *field) { f.defDoc = "0" }),
	}}

	retryObj = &object{what: "retry", title: "retry", anchor: "retry", fields: []field{
		{name: "policy", kind: kEnum, label: "retry policy", gofield: "Policy", def: queue.RetryNone, enum: words(queue.RetryNone, queue.RetryFixed, queue.RetryExponential),
			values: map[string]string{queue.RetryNone.String(): "the visibility timeout brings the message back"}, doc: "how a failed message is retried"},
		fWith(fTicks("base", durationRange, "Base", "the fixed delay, or the first exponential delay"), func(f *field) { f.defDoc = "required for `fixed`, `exponential`" }),
		fWith(fTicks("cap", durationRange, "Cap", "`exponential` only; at least `base`"), func(f *field) { f.defDoc = "64 × `base` (at most 1,000,000)" }),
		fBool("jitter", "Jitter", "`exponential` only; up to half of each delay is drawn away from the consumer's seeded stream (\"equal jitter\")"),
		fBool("same_for_all", "SameForAll", "one strategy for every error class: permanent and poison failures are retried like transient ones until the redrive policy dead-letters them, and a rate limit's Retry-After (`handler.rate_limited`) is ignored. By default each class is treated on its own: permanent and poison go to the dead-letter queue at once, a rate limit waits its Retry-After, other transient failures follow the policy"),
	}}

	consumerObj = &object{what: "consumer", title: "consumer", anchor: "consumer", fields: []field{
		fName("name", "consumer name", "Name", true, ""),
		fName("queue", "consumer queue", "Queue", true, "the queue it reads"),
		withDef(fInt("instances", bounds{1, MaxInstances, ""}, "Instances", "competing instances"), 1),
		withDef(fInt("batch", batchRange, "Batch", "messages per receive; at most "+strictBatch+" when the queue is `strict`"), 1),
		fWith(fTicks("visibility_timeout", bounds{0, MaxTicks, "0 means the queue's"}, "VisibilityTimeout", "when above 0, the visibility timeout of every message this consumer receives, instead of the queue's (SQS ReceiveMessage's VisibilityTimeout)"), func(f *field) { f.defDoc = "0 (the queue's)" }),
		{name: "wait_time", kind: kTicks, min: 0, max: MaxTicks, note: "0 means the queue's receive_wait_time", or: WaitShort, defDoc: "0 (the queue's `receive_wait_time`)",
			doc: "how long one receive waits for a message (long polling, SQS WaitTimeSeconds): a receive opened at tick t is answered at the first tick in [t, t+`wait_time`] at which a message is visible, or ends empty; `short` makes every receive one attempt even on a queue with a `receive_wait_time`"},
		{name: "handler", kind: kObject, of: handlerObj, gofield: "Handler", defDoc: "`{kind: succeed}`"},
		{name: "ack", kind: kEnum, gofield: "Ack", def: queue.AckAfterProcess, enum: words(queue.AckAfterProcess, queue.AckBeforeProcess),
			values: map[string]string{queue.AckAfterProcess.String(): "after processing: at-least-once", queue.AckBeforeProcess.String(): "before processing: at-most-once"},
			doc:    "when the consumer acks a message"},
		{name: "retry", kind: kObject, of: retryObj, gofield: "Retry", defDoc: "`{policy: none}`"},
		{name: "idempotency", kind: kEnum, gofield: "Idempotency", def: sim.NotIdempotent, enum: idempotencyWords,
			values: map[string]string{
				sim.KeyByMessageID.String():   "processed IDs kept in the consumer's table",
				sim.KeyByBusinessKey.String(): "the message's type, key and body: a copy sent again under a new ID, e.g. redriven, is recognised too",
			}, doc: "a message already processed is acked without applying its effect again (traced `skipped`)"},
		fTicks("start", tickRange, "Start", "first tick the consumer runs"),
		{name: "forward", kind: kObject, of: forwardObj, gofield: "Forward", defDoc: "none", doc: "an outgoing message published for every message handled, after `consumer.crash_after_effect` and before the ack"},
	}}

	forwardObj = &object{what: "forward", title: "forward", anchor: "forward", fields: []field{
		{name: "to", kind: kTarget, of: producerTargetObj, required: true, doc: "where the outgoing messages go (a queue, topic or log)"},
		{name: "type", kind: kLine, gofield: "Type", defDoc: "the incoming type", doc: "message type header of the outgoing message"},
		fBool("resend", "Resend", "publish the outgoing message again for a delivery the consumer's idempotency skips as a duplicate, so a crash between the effect and the publish cannot lose it"),
	}}

	memberObj = &object{what: "member", title: "member", anchor: "member", fields: []field{
		fName("name", "member name", "Name", true, ""),
		fName("group", "member group", "Group", true, "the group it joins"),
		{name: "commit", kind: kEnum, gofield: "Commit", def: eventlog.CommitAfter, enum: words(eventlog.CommitAfter, eventlog.CommitBefore, eventlog.CommitAuto, eventlog.CommitOffByOne),
			values: map[string]string{"after": "after processing: at-least-once", "before": "before processing: at-most-once", "auto": "on the group's `auto_commit_interval`", "off_by_one": "a bug: commits the offset it read instead of the next one"},
			doc:    "when the member commits its offset"},
		{name: "handler", kind: kObject, of: handlerObj, gofield: "Handler", defDoc: "`{kind: succeed}`"},
		withDef(fInt("batch", batchRange, "Batch", "records per poll"), eventlog.DefaultBatch),
		{name: "idempotency", kind: kEnum, gofield: "Idempotency", def: sim.NotIdempotent, enum: idempotencyWords, doc: "as for consumers"},
		fTicks("start", tickRange, "Start", "tick the member joins"),
	}}

	relayObj = &object{what: "relay", title: "relay", anchor: "relay", fields: []field{
		fName("name", "relay name", "Name", true, ""),
		fName("service", "relay service", "Service", true, "the service's writer must be `outbox`"),
		{name: "mode", kind: kEnum, gofield: "Mode", def: outbox.Poll, enum: words(outbox.Poll, outbox.CDC),
			values: map[string]string{outbox.Poll.String(): "polls unsent rows", outbox.CDC.String(): "follows the database's change log"},
			doc:    "how the relay finds rows"},
		withDef(fInt("batch", batchRange, "Batch", "rows per poll (`cdc`: changes per poll)"), outbox.DefaultBatch),
		withDef(fTicks("interval", durationRange, "Interval", "ticks between polls"), outbox.DefaultPollEvery),
		withDef(fTicks("lease", durationRange, "Lease", "how long a claimed row stays claimed (`poll` only: CDC relays take no leases, so two of them publish every row twice)"), outbox.DefaultLease),
		withDef(fTicks("backoff", durationRange, "Backoff", "retry-after of a failed row, doubled on each further failure (`poll` only)"), sim.Tick(2)),
		{name: "order", kind: kEnum, gofield: "Order", def: outbox.InOrder, enum: words(outbox.InOrder, outbox.PerAggregate), doc: "`poll` only"},
		fTicks("start", tickRange, "Start", "first tick the relay runs"),
	}}

	actorsObj = &object{what: "actors", title: "actors", anchor: "actors", fields: []field{
		fList("producers", producerObj, MaxActors, "Producers", ""),
		fList("consumers", consumerObj, MaxActors, "Consumers", ""),
		fList("members", memberObj, MaxActors, "Members", ""),
		fList("relays", relayObj, MaxActors, "Relays", ""),
		fList("sagas", sagaObj, MaxActors, "Sagas", ""),
	}}

	sagaObj = &object{what: "saga", title: "saga", anchor: "saga", fields: []field{
		fName("name", "saga name", "Name", true, ""),
		fName("queue", "saga queue", "Queue", true, "the queue of its orders: each order starts one saga"),
		fWith(fList("steps", sagaStepObj, saga.MaxSteps, "Steps", "the steps, in order"), func(f *field) { f.required = true }),
		withDef(fTicks("timeout", durationRange, "Timeout", "ticks to wait for a step's answer before the saga parks for review"), sim.Tick(3)),
		fBool("compensate", "Compensate", "a declined step (`saga.step_failed`) makes the saga undo its done steps, last first; without it the saga ends failed and keeps what it did"),
	}}

	sagaStepObj = &object{what: "saga step", title: "saga step", anchor: "saga-step", fields: []field{
		fName("name", "step name", "Name", true, "the command, e.g. `reserve`; also the `match.type` of its faults"),
		{name: "compensation", kind: kLine, gofield: "Compensation", defDoc: "none", doc: "the command that undoes it, e.g. `release`; applied once per saga even when delivered twice"},
	}}

	matchObj = &object{what: "fault match", fields: []field{
		{name: "key", kind: kPattern, label: "match key", gofield: "Key", defDoc: "any", doc: "message key"},
		{name: "consumer", kind: kPattern, label: "match consumer", gofield: "Consumer", defDoc: "any", doc: "a consumer, member, relay, saga, service (its writer points) or subscriber name (a plain name must be defined); a consumer with instances is matched by its name (below)"},
		{name: "group", kind: kPattern, label: "match group", gofield: "Group", defDoc: "any", doc: "a group name (a plain name must be defined)"},
		{name: "type", kind: kPattern, label: "match type", gofield: "Type", defDoc: "any", doc: "message type header"},
		{name: "where", kind: kPattern, label: "match where", gofield: "Where", defDoc: "any", doc: "a component, `KIND:NAME` with KIND one of `queue`, `topic`, `log`, `group`, `service`, `relay` (a plain value must name a defined one); `group:G` matches at G's log for group G, `relay:R` at R's service for relay R"},
	}}

	faultObj = &object{what: "fault", title: "fault", anchor: "faults", fields: []field{
		fWith(fName("name", "fault name", "Name", false, "unique; shown in the trace"), func(f *field) { f.defDoc = "`fault-N` (N = position in the list, from 1)" }),
		{name: "point", kind: kPoint, required: true, gofield: "Point", doc: "a fault point, below"},
		{name: "match", kind: kObject, of: matchObj, inline: true, gofield: "Match", defDoc: "matches everything", doc: "each field a pattern"},
		{name: "probability", kind: kNumber, lo: 0, hi: 1, gofield: "Probability", defDoc: "0 (= always)", doc: "0 means 1, so a rule without it is deterministic"},
		fTicks("from", tickRange, "From", "start of the active window [from, until)"),
		fWith(fTicks("until", tickRange, "Until", "end of the window; when written, after `from`"), func(f *field) { f.defDoc = "0 (no end)" }),
		fWith(fInt("count", bounds{0, MaxMessages, ""}, "Count", "firings at most"), func(f *field) { f.defDoc = "0 (no cap)" }),
		fWith(fInt("nth", bounds{0, MaxMessages, ""}, "Nth", "fire only on the Nth matching opportunity"), func(f *field) { f.defDoc = "0 (every)" }),
		{name: "param", kind: kInt64, min: 0, max: MaxTicks, gofield: "Param", doc: "only for points that take one (below)"},
		{name: "error", kind: kLine, gofield: "Error", doc: "error text reported when it fires"},
	}}

	actionObj = &object{what: "timeline action", title: "action", anchor: "timeline", fields: []field{
		fWith(fTicks("at", tickRange, "At", "not after the end of the run"), func(f *field) { f.required = true }),
		{name: "action", kind: kEnum, gofield: "Action", enum: actionNames, required: true, doc: "what to do; the table below says which other fields each action takes"},
		fName("queue", "", "Queue", false, "subject of `redrive`, `purge`"),
		fName("log", "", "Log", false, "subject of `add_partitions`"),
		fName("group", "", "Group", false, "subject of `seek`, `read`"),
		fName("consumer", "", "Consumer", false, "subject of `connect`, `disconnect`, `fix_handler`, `crash`"),
		fName("member", "", "Member", false, "subject of `connect`, `disconnect`, `fix_handler`, `crash`"),
		fName("subscriber", "", "Subscriber", false, "subject of `connect`, `disconnect`, `mute`, `unmute`"),
		fName("relay", "", "Relay", false, "subject of `kill_relay`, `start_relay`"),
		fName("fault", "", "Fault", false, "subject of `disable_fault`"),
		{name: "to", kind: kEnum, label: "seek to", gofield: "To", enum: words(eventlog.SeekToEarliest, eventlog.SeekToLatest, eventlog.SeekToOffset, eventlog.SeekToTick),
			defDoc: "—", doc: "`seek` only, required there"},
		{name: "offset", kind: kInt64, min: 0, max: 1 << 53, gofield: "Offset", defDoc: "—", doc: "required with `to: offset`. An offset past the log end is accepted, as Kafka accepts it, and resets by the group's `auto_offset_reset` at its next fetch"},
		fWith(fTicks("tick", tickRange, "Tick", "required with `to: tick`: the first record at or after this tick; not after `at`"), func(f *field) { f.defDoc = "—" }),
		{name: "partition", kind: kInt, min: 0, max: MaxPartitions - 1, gofield: "Partition", def: -1, defDoc: "all partitions", doc: "`seek` only; partitions − 1 at most (counting `add_partitions` before `at`)"},
		fInt("count", bounds{0, MaxMessages, ""}, "Count", "`add_partitions`: partitions to add (at least 1); `redrive`: the most messages to move, 0 (default) moves all"),
		{name: "key", kind: kLine, gofield: "Key", defDoc: "—", doc: "`read` only, required there: the key read"},
		fEnum("from", "read from", "From", ReadFromProjection, []string{ReadFromProjection, ReadFromSource}, "`read` only: the group's projection, or the log it is built from"),
	}}

	stepObj = &object{what: "narration step", title: "narration", anchor: "narration", fields: []field{
		fWith(fTicks("at", tickRange, "At", "not after the end of the run; the step shows from this tick"), func(f *field) { f.required = true }),
		{name: "text", kind: kText, gofield: "Text", required: true, empty: "narration text must not be empty", doc: "up to 4096 bytes"},
		fBool("pause", "Pause", "a player pauses when the step is shown"),
		fName("tab", "narration tab", "Tab", false, "the queue, topic, log or service a player brings to the front when the step is shown, as `view.tab`"),
		fName("filter", "trace filter", "Filter", false, "a trace filter a player sets when the step is shown (a message ID such as `m19`, a key, a correlation ID or a component such as `queue:orders`, or part of one), so the events the step talks about are on screen; it lasts until a step with a filter of its own, or without one (which clears it); a student clears it with esc"),
	}}

	expectObj = &object{what: "expectation", title: "expectation", anchor: "expect", fields: []field{
		fWith(fEnum("check", "", "Check", "", checkNames, "a ledger check, below"), func(f *field) { f.defDoc = "—" }),
		fWith(fName("consumer", "consumer", "Consumer", false, "a queue consumer (meaning its queue's logical consumer), a queue, a group or a subscriber; not with `no_loss`"), func(f *field) { f.defDoc = "every consumer" }),
		fWith(fInt("max", bounds{0, MaxMessages, ""}, "Max", "repeated deliveries allowed"), func(f *field) { f.defDoc = "required for `max_duplicates`" }),
		fBool("violated", "Violated", "`true` turns the check around: it holds when the checker finds at least one violation (a guarantee the scenario breaks on purpose); not with a metric"),
		{name: "metric", kind: kMetric, defDoc: "—", doc: "a metric name, below"},
		fWith(fEnum("op", "", "Op", "", opNames, "required with `metric` (quote it in flow style: `op: \"==\"`)"), func(f *field) { f.defDoc = "—" }),
		{name: "value", kind: kNumber, lo: -1e15, hi: 1e15, gofield: "Value", defDoc: "—", doc: "required with `metric`"},
		fWith(fTicks("by", durationRange, "By", "judge the expectation at the end of this tick instead of at the end of the run, so a player's verdict settles when the lesson makes its point; not after the end of the run"), func(f *field) { f.defDoc = "the end of the run" }),
	}}

	viewObj = &object{what: "view", title: "view", anchor: "view", fields: []field{
		fName("tab", "view tab", "Tab", false, "the queue, topic, log or service a player shows first"),
	}}

	variantObj = &object{what: "variant", title: "variant", anchor: "variants", fields: []field{
		fName("name", "variant name", "Name", true, "unique among the variants"),
		{name: "description", kind: kText, gofield: "Description", doc: "what the variant changes, for a player"},
		{name: "set", kind: kSet, required: true, doc: "`PATH: VALUE` entries; PATH is dotted, list entries chosen by name (below)"},
	}}

	scenarioObj = &object{what: "the scenario", needs: "a scenario", title: "Top level", anchor: "top-level", fields: []field{
		{name: "version", kind: kInt, min: 1, max: 1, note: "the only format version", gofield: "Version", def: 1, doc: "the format version"},
		{name: "title", kind: kLine, gofield: "Title", required: true, empty: "title must not be empty", doc: "shown in menus and reports"},
		{name: "summary", kind: kLine, gofield: "Summary", doc: "one line for the lesson menu"},
		{name: "description", kind: kText, gofield: "Description", doc: "a lesson's introduction; may span lines (`|`)"},
		{name: "seed", kind: kSeed, gofield: "Seed", def: uint64(1), doc: "`--seed` overrides it"},
		{name: "run", kind: kObject, of: runObj, gofield: "Run", required: true, doc: "run length"},
		{name: "topology", kind: kObject, of: topologyObj, gofield: "Topology", required: true, doc: "at least one queue, topic, log or service"},
		{name: "actors", kind: kObject, of: actorsObj, gofield: "Actors", defDoc: "none"},
		fList("faults", faultObj, MaxFaults, "Faults", "the fault plan, in order"),
		fList("timeline", actionObj, MaxTimeline, "Timeline", ""),
		fList("narration", stepObj, MaxNarration, "Narration", ""),
		fList("expect", expectObj, MaxExpect, "Expect", ""),
		{name: "view", kind: kObject, of: viewObj, gofield: "View", defDoc: "none", doc: "how a player first shows the scenario"},
		fList("variants", variantObj, MaxVariants, "Variants", "named versions of the scenario"),
	}}
)

// objects lists every object with its Go type, in documentation order.
var objects = []struct {
	o *object
	t any
}{
	{scenarioObj, Scenario{}}, {runObj, Length{}}, {topologyObj, Topology{}}, {queueObj, Queue{}}, {deadLetterObj, DeadLetter{}},
	{topicObj, Topic{}}, {fanOutRetryObj, FanOutRetry{}}, {subscriberObj, Subscriber{}}, {emitObj, Emit{}},
	{logObj, Log{}}, {retentionObj, Retention{}}, {groupObj, Group{}}, {serviceObj, Service{}}, {actorsObj, Actors{}},
	{producerObj, Producer{}}, {consumerObj, Consumer{}}, {memberObj, Member{}}, {handlerObj, Handler{}}, {retryObj, Retry{}}, {forwardObj, Forward{}},
	{relayObj, Relay{}}, {sagaObj, Saga{}}, {sagaStepObj, SagaStep{}}, {faultObj, Fault{}}, {matchObj, Fault{}.Match}, {actionObj, Action{}}, {stepObj, Step{}},
	{expectObj, Expectation{}}, {viewObj, View{}}, {variantObj, Variant{}}, {serviceTargetObj, nil}, {producerTargetObj, nil},
}

// fieldOf returns the field called name of o; it panics for a name o
// does not have, a mistake in this file.
func (o *object) fieldOf(name string) *field {
	for i := range o.fields {
		if o.fields[i].name == name {
			return &o.fields[i]
		}
	}
	panic("scenario: " + o.what + " has no field " + name)
}

func (o *object) names() []string {
	out := make([]string, len(o.fields))
	for i, f := range o.fields {
		out[i] = f.name
	}
	return out
}

func (f *field) what() string {
	if f.label != "" {
		return f.label
	}
	return f.name
}

func (f *field) bounds() bounds { return bounds{f.min, f.max, f.note} }

// hook makes decode the decoder of o's field name.
func hook(o *object, name string, decode func(d *dec, v ast.Node, s reflect.Value)) {
	o.fieldOf(name).decode = decode
}

func init() {
	for _, x := range objects {
		if x.t == nil {
			continue
		}
		t := reflect.TypeOf(x.t)
		for i := range x.o.fields {
			f := &x.o.fields[i]
			if f.gofield == "" {
				continue
			}
			sf, ok := t.FieldByName(f.gofield)
			if !ok {
				panic(fmt.Sprintf("scenario: %s has no Go field %s for %s", t, f.gofield, f.name))
			}
			f.index = sf.Index
		}
	}
	hooks()
	for _, x := range objects {
		for _, f := range x.o.fields {
			if f.index == nil && f.decode == nil && x.t != nil {
				panic("scenario: nothing decodes " + x.o.what + "." + f.name)
			}
		}
	}
}

// setDefaults sets the fields of the struct s that o gives a default,
// and those of its nested mappings held by value.
func (o *object) setDefaults(s reflect.Value) {
	for i := range o.fields {
		f := &o.fields[i]
		if f.index == nil {
			continue
		}
		dst := s.FieldByIndex(f.index)
		switch {
		case f.def != nil:
			dst.Set(reflect.ValueOf(f.def).Convert(dst.Type()))
		case f.kind == kObject && dst.Kind() == reflect.Struct:
			f.of.setDefaults(dst)
		}
	}
}

// decode decodes mapping n into the struct p points to, as o describes
// it: the defaults, then every field written, then a "needs the field"
// error for each required field that is not, then o's check. It returns
// false, after reporting it, when n is not a mapping.
func (d *dec) decode(n ast.Node, o *object, p any) bool {
	s := reflect.ValueOf(p).Elem()
	o.setDefaults(s)
	node := s.FieldByName("Node").Addr().Interface().(*Node)
	if !d.object(n, o.what, o, node, func(f *field, v ast.Node) { d.value(f, v, s) }) {
		return false
	}
	needs := o.needs
	if needs == "" {
		needs = o.what
	}
	for _, f := range o.fields {
		if f.required && !node.Has(f.name) {
			d.errf(node.Pos, "%s needs the field %q", needs, f.name)
		}
	}
	if o.check != nil {
		o.check(d, p)
	}
	return true
}

// value decodes the value v of field f into the struct s.
func (d *dec) value(f *field, v ast.Node, s reflect.Value) {
	if f.decode != nil {
		f.decode(d, v, s)
		return
	}
	dst := s.FieldByIndex(f.index)
	what := f.what()
	switch f.kind {
	case kName:
		dst.SetString(d.name(v, what))
	case kLine, kText, kPattern:
		var str string
		var ok bool
		if f.kind == kText {
			str, ok = d.str(v, what, maxText, true)
		} else {
			str, ok = d.line(v, what)
		}
		if ok && str == "" && f.empty != "" {
			d.errf(posOf(v), "%s", f.empty)
		}
		dst.SetString(str)
	case kTicks, kInt, kInt64:
		x, _ := d.integer(v, what, f.bounds())
		dst.SetInt(x)
	case kNumber:
		x, _ := d.number(v, what, f.lo, f.hi)
		dst.SetFloat(x)
	case kBool:
		b, _ := d.boolean(v, what)
		dst.SetBool(b)
	case kEnum:
		w, ok := d.enum(v, what, f.enum...)
		if u, isText := dst.Addr().Interface().(encoding.TextUnmarshaler); isText {
			if ok {
				if err := u.UnmarshalText([]byte(w)); err != nil {
					d.errf(posOf(v), "%s: %v", what, err)
				}
			}
			return
		}
		dst.SetString(w)
	case kObject:
		if dst.Kind() == reflect.Pointer {
			p := reflect.New(dst.Type().Elem())
			d.decode(v, f.of, p.Interface())
			dst.Set(p)
			return
		}
		d.decode(v, f.of, dst.Addr().Interface())
	case kList:
		d.list(v, what, f.maxItems, func(v ast.Node) {
			dst.Set(reflect.Append(dst, reflect.Zero(dst.Type().Elem())))
			d.decode(v, f.of, dst.Index(dst.Len()-1).Addr().Interface())
		})
	default:
		panic("scenario: no decoder for " + f.name)
	}
}

// enumDoc documents the words of an enum field.
func (f *field) enumDoc() string {
	parts := make([]string, len(f.enum))
	for i, w := range f.enum {
		parts[i] = "`" + w + "`"
		if d := f.values[w]; d != "" {
			parts[i] += " (" + d + ")"
		}
	}
	return strings.Join(parts, ", ")
}
