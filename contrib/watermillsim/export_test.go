package watermillsim

// SynctestAlone switches h's driver from lockstep to serving calls in
// arrival order, still in the bubble: what synctest alone gives.
func SynctestAlone(h *Harness) { h.ls.on.Store(false) }
