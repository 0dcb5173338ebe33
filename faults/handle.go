package faults

// Handle is one rule of an injector, returned by Add and Handle, so a
// test holds the rule itself instead of passing its name around. Its
// methods cost O(1). A nil *Handle reports nothing and disables nothing.
type Handle struct {
	in *Injector
	r  *ruleState
}

// Name returns the rule's name.
func (h *Handle) Name() string {
	if h == nil {
		return ""
	}
	return h.r.Name
}

// Rule returns the rule as it was added.
func (h *Handle) Rule() Rule {
	if h == nil {
		return Rule{}
	}
	return h.r.original()
}

// Fired returns how often the rule has fired so far (when the injector
// replays a schedule: how many replayed firings carried its name).
func (h *Handle) Fired() int {
	if h == nil {
		return 0
	}
	return h.r.fired
}

// Opportunities returns how many matching opportunities the rule was
// consulted at (within its window, before its count ran out).
func (h *Handle) Opportunities() int {
	if h == nil {
		return 0
	}
	return h.r.opportunities
}

// Disable switches the rule off for the rest of the run ("fix the bug").
// Disabling twice is harmless.
func (h *Handle) Disable() {
	if h != nil {
		h.in.disable(h.r)
	}
}

// Disabled reports whether the rule was switched off.
func (h *Handle) Disabled() bool { return h != nil && h.r.disabled }

// Handle returns the handle of the rule called name, from the plan or
// added later, and false when there is none.
func (in *Injector) Handle(name string) (*Handle, bool) {
	if in == nil {
		return nil, false
	}
	if r := in.rule(name); r != nil {
		return &Handle{in: in, r: r}, true
	}
	return nil, false
}
