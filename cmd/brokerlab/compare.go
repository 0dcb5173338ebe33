package main

import (
	"flag"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/brokerlab/brokerlab/lab"
	"github.com/brokerlab/brokerlab/scenario"
)

// compareFlags are play's flags for variants and compare mode.
type compareFlags struct {
	on       bool
	seeds    string
	variants string
	variant  string
}

// addCompareFlags adds --variant, --compare, --seeds and --variants to
// play's flag set, and the compare paragraph to its help.
func addCompareFlags(fs *flag.FlagSet) *compareFlags {
	cf := &compareFlags{}
	fs.StringVar(&cf.variant, "variant", "", "play the variant `NAME` of the scenario (see its variants:)")
	fs.BoolVar(&cf.on, "compare", false, "play two runs side by side in lockstep (see below)")
	fs.StringVar(&cf.seeds, "seeds", "", "with --compare: the seeds of the two sides, `N,M`")
	fs.StringVar(&cf.variants, "variants", "", "with --compare: the two variants of the lesson, `V,W` (default: its first two)")
	usage := fs.Usage
	fs.Usage = func() {
		usage()
		fmt.Fprint(fs.Output(), "\n"+compareHelp+"Lessons with variants: "+lessonsWithVariants()+".\n")
	}
	return cf
}

// compareMode handles play's compare flags: with --compare it plays the
// comparison and returns its exit code and true; a compare flag without
// --compare is a usage error (exit 2, true). Otherwise it returns false and
// play goes on with one run.
func (c *cli) compareMode(pos []string, seed seedFlag, cf *compareFlags) (int, bool) {
	if cf.on {
		if cf.variant != "" {
			fmt.Fprintln(c.stderr, "brokerlab play --compare: --variant plays one variant; to compare two, give --variants V,W")
			return exitBadInput, true
		}
		return c.playCompare(pos, seed, *cf), true
	}
	for _, f := range []struct{ name, v string }{{"seeds", cf.seeds}, {"variants", cf.variants}} {
		if f.v != "" {
			fmt.Fprintf(c.stderr, "brokerlab play: --%s needs --compare, e.g. brokerlab play --compare poison-dlq --seeds 4,5\n", f.name)
			return exitBadInput, true
		}
	}
	return 0, false
}

// compareHelp is the paragraph `brokerlab help play` prints about compare
// mode.
const compareHelp = `Compare mode plays two runs side by side, in lockstep: space, s, n, r and
the hand actions apply to both; x moves the keys to the other side. Each
side has its label (file or lesson, seed or variant) in its header and its
ledger numbers (sent, applied, duplicates, lost, pending) under it.
  brokerlab play --compare A B                    two files or lessons (--seeds N,M: A at N, B at M)
  brokerlab play --compare A --seeds N,M          one file or lesson under two seeds
  brokerlab play --compare LESSON                 the lesson's first two variants
  brokerlab play --compare LESSON --variants V,W  two variants by name
`

// pairOf parses "N,M" (what) into two items, for --seeds and --variants.
func pairOf(flag, v string) ([2]string, error) {
	parts := strings.Split(v, ",")
	if len(parts) != 2 || strings.TrimSpace(parts[0]) == "" || strings.TrimSpace(parts[1]) == "" {
		return [2]string{}, fmt.Errorf("--%s wants two values separated by a comma, e.g. --%s %s; got %q", flag, flag, map[string]string{"seeds": "4,5", "variants": "naive,idempotent"}[flag], v)
	}
	return [2]string{strings.TrimSpace(parts[0]), strings.TrimSpace(parts[1])}, nil
}

// argLabel names a command-line argument on screen: a lesson by its name,
// a file by its base name.
func argLabel(arg string) string {
	if isLesson(arg) {
		return arg
	}
	return filepath.Base(arg)
}

// compareSide is one side being built.
type compareSide struct {
	arg, variant, label string
	seed                *uint64
}

// playCompare plays two runs side by side (play --compare). pos are the
// positional arguments, seed is --seed (both sides).
func (c *cli) playCompare(pos []string, seed seedFlag, cf compareFlags) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(c.stderr, "brokerlab play --compare: "+format+"\n", a...)
		return exitBadInput
	}
	if len(pos) < 1 || len(pos) > 2 {
		return fail("want A B (two files or lessons), A --seeds N,M, or LESSON [--variants V,W]; got %d arguments", len(pos))
	}
	if cf.seeds != "" && seed.set {
		return fail("give --seed N (both sides) or --seeds N,M (one each), not both")
	}
	if cf.seeds != "" && cf.variants != "" {
		return fail("give --seeds or --variants, not both")
	}
	if len(pos) == 2 && cf.variants != "" {
		return fail("--variants compares two variants of one lesson; give one FILE or LESSON")
	}
	var seeds [2]*uint64
	if cf.seeds != "" {
		ss, err := pairOf("seeds", cf.seeds)
		if err != nil {
			return fail("%v", err)
		}
		for i, s := range ss {
			var f seedFlag
			if err := f.Set(s); err != nil {
				return fail("--seeds %q: seed %q %v", cf.seeds, s, err)
			}
			seeds[i] = f.ptr()
		}
	} else {
		seeds = [2]*uint64{seed.ptr(), seed.ptr()}
	}
	if !c.terminal() {
		return c.playResult(c.noTerminal())
	}
	sides := [2]compareSide{{arg: pos[0], seed: seeds[0]}, {arg: pos[len(pos)-1], seed: seeds[1]}}
	base, ok := c.load(pos[0])
	if !ok {
		return exitBadInput
	}
	bases := [2]*scenario.Scenario{base, base}
	switch {
	case len(pos) == 2:
		if bases[1], ok = c.load(pos[1]); !ok {
			return exitBadInput
		}
		for i := range sides {
			sides[i].label = argLabel(sides[i].arg)
		}
		if sides[0].label == sides[1].label || cf.seeds != "" {
			for i := range sides {
				sides[i].label += " · seed " + seedText(bases[i], sides[i].seed)
			}
		}
	case cf.seeds != "":
		for i := range sides {
			sides[i].label = "seed " + seedText(base, sides[i].seed)
		}
	default:
		var names [2]string
		if cf.variants != "" {
			vs, err := pairOf("variants", cf.variants)
			if err != nil {
				return fail("%v", err)
			}
			names = vs
		} else {
			if len(base.Variants) < 2 {
				return fail("%s declares %d variants, so there is nothing to compare by default; "+
					"give a second FILE or LESSON, --seeds N,M, or a lesson with variants (%s)",
					pos[0], len(base.Variants), lessonsWithVariants())
			}
			names = [2]string{base.Variants[0].Name, base.Variants[1].Name}
		}
		for i := range sides {
			sides[i].variant = names[i]
			sides[i].label = names[i]
		}
	}
	var ts [2]lab.Side
	for i := range sides {
		s, ok := c.variantOf(bases[i], sides[i].variant)
		if !ok {
			return exitBadInput
		}
		d, err := lab.Open(s, lab.SessionOptions{Seed: sides[i].seed})
		if err != nil {
			fmt.Fprintln(c.stderr, strings.TrimRight(err.Error(), "\n"))
			return exitBadInput
		}
		if isLesson(sides[i].arg) {
			d.SetLesson(sides[i].arg)
		}
		ts[i] = lab.Side{Label: sides[i].label, Session: d}
	}
	p, err := lab.NewPair(ts[0], ts[1])
	if err != nil {
		return fail("%v", err)
	}
	title := base.Title
	if len(pos) == 2 && bases[1].Title != base.Title {
		title = base.Title + " | " + bases[1].Title
	}
	p.SetTitle(title)
	return c.playResult(c.comparePlay(p))
}

// seedText is the seed a side runs with: the override, or the file's.
func seedText(s *scenario.Scenario, seed *uint64) string {
	if seed != nil {
		return strconv.FormatUint(*seed, 10)
	}
	return strconv.FormatUint(s.Seed, 10)
}

// lessonsWithVariants lists the built-in lessons that declare at least
// two variants.
func lessonsWithVariants() string {
	var names []string
	for _, l := range scenario.Lessons() {
		if s, err := scenario.LoadLesson(l.Name); err == nil && len(s.Variants) >= 2 {
			names = append(names, l.Name)
		}
	}
	if len(names) == 0 {
		return "none yet"
	}
	return strings.Join(names, ", ")
}
