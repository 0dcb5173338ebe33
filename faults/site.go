package faults

// Site is one fault point of one injector, resolved once so that a model
// consulting the point on every message neither looks the point up by
// name nor, when no rule targets it, pays more than a bit test: a model
// resolves its points when it is made (Injector.Site) and asks Armed
// before it builds a Context. A Site sees rules added later with Add and
// rules disabled since, exactly as Has and CheckRef do, and decides
// exactly as they do. The zero Site, and the Site of a nil injector, never
// fire.
type Site struct {
	in   *Injector
	head *ruleState // the point's first rule when a rule targeted it as the Site was made, else nil
	i    int        // the point's index in Points
}

// Site returns point p of the injector for a model to consult. It costs
// a hash lookup of p's index in Points and, when a rule targets p, a scan
// of the rules, and allocates nothing. A point that is not a
// fault point (see Known) never fires, as no rule can target it.
func (in *Injector) Site(p Point) Site {
	i := index(p)
	if in == nil || i < 0 {
		return Site{}
	}
	s := Site{in: in, i: i}
	if in.targeted&(1<<i) != 0 {
		s.head = in.headAt(i)
	}
	return s
}

// The points fit the bits of Injector.targeted.
var _ [64 - len(points)]struct{}

// Armed reports what Has reports for the site's point: whether an enabled
// rule targets it (or, when replaying, whether the schedule names it). It
// is a bit test of what the injector keeps up to date as rules are added
// and disabled, so it is cheap enough to ask for every message.
func (s Site) Armed() bool { return s.in != nil && s.in.armedPts&(1<<s.i) != 0 }

// Check is CheckRef for the site's point: c is not retained, and the
// firing, nil when none, belongs to the injector until its next firing.
// It is small enough to be inlined, so a model's consultation costs one
// call (checkAt) before the point's rules draw.
func (s Site) Check(c *Context) *Firing {
	if s.in == nil {
		return nil
	}
	return s.in.checkAt(s.i, s.head, c)
}

// checkAt is Site.Check for the point Points[i] whose first rule was
// head when the Site was made (nil when no rule targeted it then). A
// point a rule targeted then costs the draws of its rules, exactly as
// check; one no rule targets a bit test, and one first targeted since a
// scan of the rules comparing integers.
func (in *Injector) checkAt(i int, head *ruleState, c *Context) *Firing {
	if head == nil || in.rec != nil {
		if head == nil && in.targeted&(1<<i) != 0 { // targeted by a rule added since
			head = in.headAt(i)
		}
		return in.check(Points[i].Point, head, c)
	}
	if r := draw(head, in.env.Clock.Now(), c); r != nil {
		return in.fire(r.Name, r.Point, r.Param, r.Error, c, 0, 0)
	}
	return nil
}

// Consulted reports whether Check can do anything at all for the site's
// point: draw, note an opportunity or fire. When it is false, Check
// returns nil without reading its context, so a model may skip filling
// one in. It is a bit test: a rule targets the point (enabled or not),
// or, when replaying, the schedule names it.
func (s Site) Consulted() bool { return s.in != nil && s.in.consultedPts&(1<<s.i) != 0 }
