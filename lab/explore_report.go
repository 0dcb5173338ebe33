package lab

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"sort"
	"strconv"
)

// ErrSweep is wrapped by the errors of a seed space or sweep report that
// is not usable: a bad shard, reports that do not belong together.
var ErrSweep = errors.New("lab: bad sweep")

// MaxSweepSeeds caps the seeds of one sweep (all shards together).
const MaxSweepSeeds = 1 << 40

// MaxListedFailures caps the failing seeds a sweep report lists; the rest
// are only counted (SweepReport.Failed), so a report stays small however
// many seeds fail.
const MaxListedFailures = 10_000

// Seeds is the seed space of a sweep, or one shard of it: the seeds
// From, From+1, ..., From+Count-1, of which shard K of N (1 <= K <= N)
// takes those with seed mod N == K-1. Shards interleave, so every shard
// gets early and late seeds alike, and a seed's shard depends on the seed
// alone: the same seed is in the same shard whatever From and Count are.
type Seeds struct {
	From, Count uint64
	// Shard is K and Shards is N; 0 and 0 (or 1 and 1) mean the whole
	// space.
	Shard, Shards int
}

// Validate reports a space that cannot be swept.
func (s Seeds) Validate() error {
	switch {
	case s.Count == 0:
		return fmt.Errorf("%w: no seeds: the count must be at least 1", ErrSweep)
	case s.Count > MaxSweepSeeds:
		return fmt.Errorf("%w: %d seeds; a sweep is capped at %d", ErrSweep, s.Count, uint64(MaxSweepSeeds))
	case s.From > math.MaxUint64-(s.Count-1):
		return fmt.Errorf("%w: seeds from %d on, %d of them, run past the largest seed %d", ErrSweep, s.From, s.Count, uint64(math.MaxUint64))
	case s.Shards == 0 && s.Shard == 0:
	case s.Shards < 1 || s.Shard < 1 || s.Shard > s.Shards:
		return fmt.Errorf("%w: shard %d/%d: want K/N with 1 <= K <= N", ErrSweep, s.Shard, s.Shards)
	}
	return nil
}

// shards returns N, at least 1.
func (s Seeds) shards() uint64 { return uint64(max(s.Shards, 1)) }

// first returns the first seed of the shard at or after From, and false
// when the shard has none.
func (s Seeds) first() (uint64, bool) {
	n := s.shards()
	k := uint64(max(s.Shard, 1) - 1)
	off := (k + n - s.From%n) % n
	if off >= s.Count {
		return 0, false
	}
	return s.From + off, true
}

// Len returns how many seeds the shard holds. O(1).
func (s Seeds) Len() uint64 {
	f, ok := s.first()
	if !ok {
		return 0
	}
	return (s.From+s.Count-1-f)/s.shards() + 1
}

// All yields the seeds of the shard in increasing order.
func (s Seeds) All() iter.Seq[uint64] {
	return func(yield func(uint64) bool) {
		f, ok := s.first()
		if !ok {
			return
		}
		last := s.From + s.Count - 1
		for x := f; ; x += s.shards() {
			if !yield(x) || last-x < s.shards() {
				return
			}
		}
	}
}

// String formats the space as "seeds 1..200" or "seeds 1..200, shard 2/4".
func (s Seeds) String() string {
	out := "seeds " + strconv.FormatUint(s.From, 10) + ".." + strconv.FormatUint(s.From+s.Count-1, 10)
	if s.Shards > 1 {
		out += ", shard " + strconv.Itoa(s.Shard) + "/" + strconv.Itoa(s.Shards)
	}
	return out
}

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
// shard covered once. It reports every mismatch at once.
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
	return &r, nil
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
// increasing order), the failures grouped by expectation and the count.
// The text depends only on the report, never on how the seeds were
// spread over workers.
func (r *SweepReport) WriteText(w io.Writer) error {
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
	case len(miss) == 0:
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
