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

// first returns the first rule of the site's point, nil when no rule
// targets it; s.in is not nil. A point a rule targeted when the Site was
// made costs a load, one no rule targets a bit test, and one first
// targeted since a scan of the rules comparing integers.
func (s Site) first() *ruleState {
	if s.head != nil {
		return s.head
	}
	if s.in.targeted&(1<<s.i) != 0 { // targeted by a rule added since
		return s.in.headAt(s.i)
	}
	return nil
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
func (s Site) Check(c *Context) *Firing {
	if s.in == nil {
		return nil
	}
	return s.in.check(Points[s.i].Point, s.first(), c)
}

// Consulted reports whether Check can do anything at all for the site's
// point: draw, note an opportunity or fire. When it is false, Check
// returns nil without reading its context, so a model may skip filling
// one in. It is a bit test: a rule targets the point (enabled or not),
// or, when replaying, the schedule names it.
func (s Site) Consulted() bool { return s.in != nil && s.in.consultedPts&(1<<s.i) != 0 }
