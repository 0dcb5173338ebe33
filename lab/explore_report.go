package lab

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/brokerlab/brokerlab/sweep"
)

// ErrSweep is wrapped by the errors of a sweep report that is not
// usable: reports that do not belong together, a file that is no report.
var ErrSweep = errors.New("lab: bad sweep")

// MaxSweepSeeds caps the seeds of one sweep (all shards together).
const MaxSweepSeeds = sweep.MaxSeeds

// MaxSweepShards caps the shards a sweep is cut into.
const MaxSweepShards = 1 << 20

// MaxListedFailures caps the failing seeds a sweep report lists; the rest
// are only counted (SweepReport.Failed), so a report stays small however
// many seeds fail.
const MaxListedFailures = 10_000

// Seeds is the seed space of a sweep, or one shard of it (see
// sweep.Seeds); its Validate errors wrap sweep.ErrSeeds.
type Seeds = sweep.Seeds

// SeedFailure is one failing seed of a sweep.
type SeedFailure struct {
	Seed uint64 `json:"seed"`
	Failure
}

// SweepReport is the result of a sweep over a seed space, or over some of
// its shards: which seeds ran and which failed, how. It is written as
// JSON (brokerlab explore --json) so the shards of one sweep, run on
// different machines, can be merged (MergeSweeps).
type SweepReport struct {
	// Version is the report format version, 1.
	Version int `json:"version"`
	// Scenario is the scenario's file name and Digest the SHA-256 of its
	// text: reports merge only when both agree.
	Scenario string `json:"scenario"`
	Digest   string `json:"sha256"`
	// Variant is the variant of the scenario swept, "" for the file as
	// written; reports merge only when it agrees too.
	Variant string `json:"variant,omitempty"`
	// From, Count and Shards describe the whole seed space (Seeds).
	From   uint64 `json:"from"`
	Count  uint64 `json:"count"`
	Shards int    `json:"shards"`
	// Covered lists the shards (1-based) this report covers, sorted.
	Covered []int `json:"covered"`
	// Ran counts the seeds run, Failed the seeds that failed.
	Ran    uint64 `json:"ran"`
	Failed uint64 `json:"failed"`
	// Failures are the failing seeds in increasing order, at most
	// MaxListedFailures: the lowest ones.
	Failures []SeedFailure `json:"failures"`
}

// Digest returns the digest of a scenario text that SweepReport.Digest
// holds.
func Digest(src []byte) string {
	h := sha256.Sum256(src)
	return hex.EncodeToString(h[:])
}

// NewSweepReport returns the empty report of a sweep of space over the
// scenario called name, whose text is src.
func NewSweepReport(name string, src []byte, space Seeds) *SweepReport {
	return &SweepReport{Version: 1, Scenario: name, Digest: Digest(src), From: space.From, Count: space.Count,
		Shards: max(space.Shards, 1), Covered: []int{max(space.Shard, 1)}}
}

// Add records one seed that ran; f is its failure when failed is set.
// Seeds may be added in any order: Sort puts the list in order, keeping
// the lowest MaxListedFailures.
func (r *SweepReport) Add(seed uint64, f Failure, failed bool) {
	r.Ran++
	if !failed {
		return
	}
	r.Failed++
	r.Failures = append(r.Failures, SeedFailure{Seed: seed, Failure: f})
	if len(r.Failures) >= 2*MaxListedFailures {
		r.Sort()
	}
}

// Sort orders the failures by seed and drops those beyond
// MaxListedFailures.
func (r *SweepReport) Sort() {
	sort.Slice(r.Failures, func(i, j int) bool { return r.Failures[i].Seed < r.Failures[j].Seed })
	if len(r.Failures) > MaxListedFailures {
		r.Failures = r.Failures[:MaxListedFailures:MaxListedFailures]
	}
}

// Complete reports whether the report covers every shard of its space.
func (r *SweepReport) Complete() bool { return len(r.Covered) == r.Shards }

// Missing returns the shards the report does not cover.
func (r *SweepReport) Missing() []int {
	var out []int
	j := 0
	for k := 1; k <= r.Shards; k++ {
		if j < len(r.Covered) && r.Covered[j] == k {
			j++
			continue
		}
		out = append(out, k)
	}
	return out
}

// MergeSweeps merges the reports of shards of one sweep: the same
// scenario text, the same seed space and the same number of shards, each
// shard covered once. Each report must add up as ReadSweepReport
// requires (its failures are sorted first, as Sort does). It reports
// every mismatch at once.
func MergeSweeps(rs ...*SweepReport) (*SweepReport, error) {
	if len(rs) == 0 {
		return nil, fmt.Errorf("%w: no reports to merge", ErrSweep)
	}
	a := rs[0]
	out := &SweepReport{Version: 1, Scenario: a.Scenario, Digest: a.Digest, Variant: a.Variant, From: a.From, Count: a.Count, Shards: a.Shards}
	var errs []error
	seen := map[int]int{}
	for i, r := range rs {
		what := "report " + strconv.Itoa(i+1)
		switch {
		case r.Version != 1:
			errs = append(errs, fmt.Errorf("%w: %s has format version %d; only 1 exists", ErrSweep, what, r.Version))
			continue
		case r.Digest != a.Digest:
			errs = append(errs, fmt.Errorf("%w: %s is of another scenario text (%s, sha256 %.12s) than report 1 (%s, sha256 %.12s)",
				ErrSweep, what, r.Scenario, r.Digest, a.Scenario, a.Digest))
			continue
		case r.Variant != a.Variant:
			errs = append(errs, fmt.Errorf("%w: %s sweeps %s of %s, report 1 %s", ErrSweep, what, variantName(r.Variant), r.Scenario, variantName(a.Variant)))
			continue
		case r.From != a.From || r.Count != a.Count || r.Shards != a.Shards:
			errs = append(errs, fmt.Errorf("%w: %s sweeps %s of %d shards, report 1 %s of %d shards",
				ErrSweep, what, Seeds{From: r.From, Count: r.Count}, r.Shards, Seeds{From: a.From, Count: a.Count}, a.Shards))
			continue
		}
		r.Sort()
		if err := r.check(); err != nil {
			errs = append(errs, fmt.Errorf("%w: %s: %v", ErrSweep, what, err))
			continue
		}
		for _, k := range r.Covered {
			if k < 1 || k > r.Shards {
				errs = append(errs, fmt.Errorf("%w: %s covers shard %d of %d", ErrSweep, what, k, r.Shards))
				continue
			}
			if j, dup := seen[k]; dup {
				errs = append(errs, fmt.Errorf("%w: shard %d/%d is in report %d and %s", ErrSweep, k, r.Shards, j, what))
				continue
			}
			seen[k] = i + 1
			out.Covered = append(out.Covered, k)
		}
		out.Ran += r.Ran
		out.Failed += r.Failed
		out.Failures = append(out.Failures, r.Failures...)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	sort.Ints(out.Covered)
	out.Sort()
	return out, nil
}

// ReadSweepReport decodes a report written by WriteJSON; name is used in
// errors.
func ReadSweepReport(name string, rd io.Reader) (*SweepReport, error) {
	dec := json.NewDecoder(io.LimitReader(rd, 64<<20))
	dec.DisallowUnknownFields()
	var r SweepReport
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("%w: %s: not a sweep report: %v", ErrSweep, name, err)
	}
	if r.Version != 1 || r.Shards < 1 || r.Digest == "" {
		return nil, fmt.Errorf("%w: %s: not a sweep report of format version 1 (version %d, %d shards)", ErrSweep, name, r.Version, r.Shards)
	}
	if err := r.check(); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrSweep, name, err)
	}
	return &r, nil
}

// check reports a report whose contents do not add up, as a report
// edited by hand (or cut short) would: a seed space that cannot be
// swept, shards out of range or repeated, a count of seeds run that is
// not the covered shards' seeds, more seeds failed than ran, a list of
// failures whose length is not the count's (at most MaxListedFailures),
// or a failing seed that is repeated, out of order or outside the
// covered shards. Cost: O(covered + failures).
func (r *SweepReport) check() error {
	space := Seeds{From: r.From, Count: r.Count}
	if err := space.Validate(); err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), sweep.ErrSeeds.Error()+": "))
	}
	if r.Shards > MaxSweepShards {
		return fmt.Errorf("the report has %d shards; at most %d exist", r.Shards, MaxSweepShards)
	}
	if len(r.Covered) == 0 {
		return errors.New("the report covers no shard")
	}
	var ran uint64
	for i, k := range r.Covered {
		switch {
		case k < 1 || k > r.Shards:
			return fmt.Errorf("the report covers shard %d of %d", k, r.Shards)
		case i > 0 && k == r.Covered[i-1]:
			return fmt.Errorf("the report covers shard %d twice", k)
		case i > 0 && k < r.Covered[i-1]:
			return fmt.Errorf("the shards it covers are not in increasing order (%d, then %d)", r.Covered[i-1], k)
		}
		ran += Seeds{From: r.From, Count: r.Count, Shard: k, Shards: r.Shards}.Len()
	}
	if r.Ran != ran {
		return fmt.Errorf("the report ran %d seeds, but %s of %s has %d", r.Ran, r.coveredName(), space, ran)
	}
	if r.Failed > r.Ran {
		return fmt.Errorf("%d seeds failed of %d run", r.Failed, r.Ran)
	}
	if n := uint64(len(r.Failures)); n != min(r.Failed, MaxListedFailures) {
		return fmt.Errorf("%d seeds failed, but %d are listed (the list holds every failing seed, or the lowest %d)", r.Failed, n, MaxListedFailures)
	}
	n := uint64(r.Shards)
	for i, f := range r.Failures {
		k := int(f.Seed%n) + 1
		if f.Seed < r.From || f.Seed-r.From >= r.Count || !slices.Contains(r.Covered, k) {
			return fmt.Errorf("failing seed %d is not in %s of %s", f.Seed, r.coveredName(), space)
		}
		if i > 0 {
			switch prev := r.Failures[i-1].Seed; {
			case f.Seed == prev:
				return fmt.Errorf("failing seed %d is listed twice", f.Seed)
			case f.Seed < prev:
				return fmt.Errorf("the failing seeds are not in increasing order (%d, then %d)", prev, f.Seed)
			}
		}
	}
	return nil
}

// coveredName names the shards the report covers: "shard 2 of 3",
// "shards [1 3] of 3".
func (r *SweepReport) coveredName() string {
	if len(r.Covered) == 1 {
		return fmt.Sprintf("shard %d of %d", r.Covered[0], r.Shards)
	}
	return fmt.Sprintf("shards %v of %d", r.Covered, r.Shards)
}

// WriteJSON writes the report as indented JSON.
func (r *SweepReport) WriteJSON(w io.Writer) error {
	r.Sort()
	if r.Failures == nil {
		r.Failures = []SeedFailure{}
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// MaxPrintedFailures is how many failing seeds WriteText lists.
const MaxPrintedFailures = 20

// WriteText writes the failing seeds (the first MaxPrintedFailures, in
// increasing order), the failures grouped by expectation and the count,
// and a note when the report lacks shards of its sweep. The text depends
// only on the report, never on how the seeds were spread over workers.
func (r *SweepReport) WriteText(w io.Writer) error { return r.writeText(w, true) }

// WriteResults is WriteText without the note on missing shards, for a
// caller that says itself which shards are missing (explore merge).
func (r *SweepReport) WriteResults(w io.Writer) error { return r.writeText(w, false) }

// writeText is WriteText; note asks for the note on missing shards.
func (r *SweepReport) writeText(w io.Writer, note bool) error {
	r.Sort()
	b := bufio.NewWriter(w)
	for i, f := range r.Failures {
		if i == MaxPrintedFailures {
			fmt.Fprintf(b, "... and %d more failing seeds\n", r.Failed-uint64(i))
			break
		}
		fmt.Fprintf(b, "FAIL seed %d: %s\n", f.Seed, f.Failure.In(r.Scenario))
	}
	if r.Failed > 0 {
		// By expectation, in file order; runtime errors last.
		type group struct {
			f Failure
			n int
		}
		var gs []group
		for _, f := range r.Failures {
			found := false
			for i := range gs {
				if gs[i].f.Same(f.Failure) {
					gs[i].n++
					found = true
					break
				}
			}
			if !found {
				gs = append(gs, group{f.Failure, 1})
			}
		}
		sort.SliceStable(gs, func(i, j int) bool {
			a, b := gs[i].f.Expect, gs[j].f.Expect
			if a < 0 || b < 0 {
				return b < 0 && a >= 0
			}
			return a < b
		})
		listed := ""
		if r.Failed > uint64(len(r.Failures)) {
			listed = " (of the " + strconv.Itoa(len(r.Failures)) + " listed)"
		}
		fmt.Fprintf(b, "failing%s:", listed)
		for i, g := range gs {
			sep := ","
			if i == 0 {
				sep = ""
			}
			fmt.Fprintf(b, "%s %s in %d %s", sep, g.f.Text, g.n, plural(g.n, "seed", "seeds"))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(b, "%d of %d seeds failed", r.Failed, r.Ran)
	if len(r.Failures) > 0 {
		fmt.Fprintf(b, " (first: %d)", r.Failures[0].Seed)
	}
	b.WriteString("\n")
	switch miss := r.Missing(); {
	case len(miss) == 0 || !note:
	case len(r.Covered) == 1:
		fmt.Fprintf(b, "NOTE: this is shard %d of %d; merge the shards' --json reports with brokerlab explore merge\n", r.Covered[0], r.Shards)
	default:
		fmt.Fprintf(b, "NOTE: shards %v of %d are missing from this report\n", miss, r.Shards)
	}
	return b.Flush()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// variantName names a variant in a message: "variant NAME", or "the file
// as written" for "".
func variantName(v string) string {
	if v == "" {
		return "the file as written"
	}
	return "variant " + strconv.Quote(v)
}
