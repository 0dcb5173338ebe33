package tui

import (
	"errors"
	"strings"
	"testing"
)

// A terminal whose $TERM is unset, dumb or unknown cannot hold the
// player: the error wraps ErrNotTerminal and the message gives the reason
// and the same headless hints as for a pipe.
func TestCheckTermRefusesWhatCannotDraw(t *testing.T) {
	for _, c := range []struct{ term, reason string }{
		{"", "TERM is not set"},
		{"dumb", "TERM is dumb"},
		{"no-such-terminal-42", "TERM is no-such-terminal-42, a terminal type the player does not know"},
		{"x\x1b[2J", `TERM is x\x1b[2J,`},
	} {
		err := checkTerm(c.term)
		if !errors.Is(err, ErrNotTerminal) {
			t.Errorf("TERM=%q: %v, want ErrNotTerminal", c.term, err)
			continue
		}
		msg := TerminalMessage("brokerlab", err)
		for _, want := range []string{c.reason, "needs a terminal", "brokerlab run FILE|LESSON", "brokerlab list", "TERM=xterm-256color"} {
			if !strings.Contains(msg, want) {
				t.Errorf("TERM=%q: message lacks %q:\n%s", c.term, want, msg)
			}
		}
		if strings.Contains(msg, "\x1b") || strings.Contains(msg, "cursor addressable") {
			t.Errorf("TERM=%q: %q", c.term, msg)
		}
		if !strings.HasPrefix(TerminalReason(err), "TERM is") {
			t.Errorf("TERM=%q: reason %q", c.term, TerminalReason(err))
		}
	}
	for _, term := range []string{"xterm-256color", "xterm", "vt100", "screen", "tmux-256color"} {
		if err := checkTerm(term); err != nil {
			t.Errorf("TERM=%s: %v", term, err)
		}
	}
	if TerminalMessage("brokerlab", ErrNotTerminal) != NotTerminalMessage("brokerlab") || TerminalMessage("brokerlab", nil) != NotTerminalMessage("brokerlab") {
		t.Error("a pipe does not get NotTerminalMessage")
	}
	if TerminalReason(ErrNotTerminal) != "standard output is not a terminal" {
		t.Errorf("reason %q", TerminalReason(ErrNotTerminal))
	}
}
