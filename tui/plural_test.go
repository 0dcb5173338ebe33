package tui

import (
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/lab"
)

// TestEffectsSingular checks the effects panel's count: "1 effect", not
// "1 effects".
func TestEffectsSingular(t *testing.T) {
	th := NewTheme(true)
	s := &lab.Snapshot{Effects: []lab.EffectView{{Consumer: "a", Applied: 1}, {Consumer: "b", Applied: 2}}}
	var b strings.Builder
	for _, l := range effectsLines(s, &th, 80) {
		for _, sg := range l {
			b.WriteString(sg.text)
		}
		b.WriteString("\n")
	}
	got := b.String()
	if !strings.Contains(got, "a 1 effect") || strings.Contains(got, "1 effects") || !strings.Contains(got, "b 2 effects") {
		t.Errorf("effects lines:\n%s", got)
	}
}

// TestHelpNamesEveryKey checks that the help lists every key of the key
// table, among them "m" (even when the player was not opened from the
// menu, with when it works) and ",", the second key for going back.
func TestHelpNamesEveryKey(t *testing.T) {
	th := NewTheme(true)
	p := NewPlayer(th, nil)
	var b strings.Builder
	for _, l := range helpLines(p.bindings, p, &th, 84) {
		for _, sg := range l {
			b.WriteString(sg.text)
		}
		b.WriteString("\n")
	}
	help := b.String()
	for _, bd := range p.bindings {
		for _, k := range bd.Keys {
			if name := keyName(k); !strings.Contains(help, name) {
				t.Errorf("help does not name the key %q (%s)", name, bd.Name)
			}
		}
	}
	for _, want := range []string{"← ,", "m bksp", "Back to the lesson menu. (Only when"} {
		if !strings.Contains(help, want) {
			t.Errorf("help lacks %q:\n%s", want, help)
		}
	}
}
