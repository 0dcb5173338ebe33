package scenario

import (
	"path"
	"strconv"
	"strings"
)

// MaxGlobWork caps the pattern matches Load spends on deriving the
// match.consumer patterns of the fault plan (see consumerGlobs); a file
// that needs more is refused at the rule that ran out.
const MaxGlobWork = 1 << 21

// globMatch is path.Match without the error: a malformed pattern (Load
// refuses those) matches nothing.
func globMatch(pattern, name string) bool {
	ok, _ := path.Match(pattern, name)
	return ok
}

// baseName is an instance name without its "#i" suffix.
func baseName(name string) string {
	b, _, _ := strings.Cut(name, "#")
	return b
}

// consumerGlobs derives the match.consumer patterns of one scenario's fault
// plan. In the file a pattern matches a consumer with several instances by
// its name, so "*-worker" matches the instances "a-worker#1" ...
// "a-worker#N" of consumer "a-worker"; the models see the instance names.
type consumerGlobs struct {
	s     *Scenario
	names []string // every name a fault point can see, built on first need
	memo  map[string]globResult
	work  int // pattern matches spent, against MaxGlobWork
}

type globResult struct {
	glob, bad string
	over      bool
}

// actorNames returns every name a fault point can see as the consumer of
// an opportunity: each queue consumer's instance names (NAME, or NAME#1 ...
// NAME#N with several instances), members, relays, subscribers, producers
// and services (a service's writer carries its name). Cost: O(actors x
// instances).
func (s *Scenario) actorNames() []string {
	var out []string
	for i := range s.Actors.Consumers {
		c := &s.Actors.Consumers[i]
		n := max(c.Instances, 1)
		for j := 1; j <= n; j++ {
			out = append(out, InstanceName(c.Name, j, n))
		}
	}
	for i := range s.Actors.Members {
		out = append(out, s.Actors.Members[i].Name)
	}
	for i := range s.Actors.Relays {
		out = append(out, s.Actors.Relays[i].Name)
	}
	for i := range s.Actors.Producers {
		out = append(out, s.Actors.Producers[i].Name)
	}
	for i := range s.Topology.Topics {
		for j := range s.Topology.Topics[i].Subscribers {
			out = append(out, s.Topology.Topics[i].Subscribers[j].Name)
		}
	}
	for i := range s.Topology.Services {
		out = append(out, s.Topology.Services[i].Name)
	}
	return out
}

// glob returns the pattern the fault plan uses for the match.consumer
// pattern p: the first of p, p+"#*" and p+"*" that matches exactly the
// wanted names (those p matches, and the instances of the consumers p
// matches by name) among every name the run can show a fault point. When
// none does it returns "" and a name that p+"*" matches but p should not;
// over is set when the check would exceed MaxGlobWork. A pattern with "#"
// is written against instance names and kept as it is.
//
// Cost: O(consumers) pattern matches when p names no consumer with
// instances or ends in "*" (then p is exact: what matches a name matches
// the name followed by anything), else O(actors x instances), once per
// distinct pattern.
func (g *consumerGlobs) glob(p string) (glob, bad string, over bool) {
	if p == "" || strings.Contains(p, "#") {
		return p, "", false
	}
	named := false
	for i := range g.s.Actors.Consumers {
		if c := &g.s.Actors.Consumers[i]; c.Instances > 1 && globMatch(p, c.Name) {
			named = true
			break
		}
	}
	if !named || strings.HasSuffix(p, "*") && !strings.HasSuffix(p, `\*`) {
		return p, "", false
	}
	if r, ok := g.memo[p]; ok {
		return r.glob, r.bad, r.over
	}
	if g.names == nil {
		g.names = g.s.actorNames()
	}
	if g.memo == nil {
		g.memo = map[string]globResult{}
	}
	r := g.derive(p)
	g.memo[p] = r
	return r.glob, r.bad, r.over
}

// derive checks the candidates of glob for p against every name.
func (g *consumerGlobs) derive(p string) globResult {
	if g.work += 5 * len(g.names); g.work > MaxGlobWork {
		return globResult{over: true}
	}
	want := make([]bool, len(g.names))
	for i, n := range g.names {
		want[i] = globMatch(p, n) || globMatch(p, baseName(n))
	}
	bad := ""
	for _, c := range []string{p, p + "#*", p + "*"} {
		bad = ""
		for i, n := range g.names {
			if globMatch(c, n) != want[i] {
				bad = n
				break
			}
		}
		if bad == "" {
			return globResult{glob: c}
		}
	}
	// p+"*" matches every wanted name, so bad is one it should not match.
	return globResult{bad: bad}
}

// InstanceName is the name of instance i (from 1) of a consumer with n
// instances, as queue.Consumer names them: the consumer's own name when it
// runs alone, NAME#i otherwise. Load widens fault rules' consumer patterns
// with it (consumerGlobs).
func InstanceName(name string, i, n int) string {
	if n == 1 {
		return name
	}
	return name + "#" + strconv.Itoa(i)
}
