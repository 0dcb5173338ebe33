package pubsub

import (
	"fmt"
	"strings"
)

// Pattern is a parsed subscription pattern. The zero Pattern matches
// nothing. Matching costs O(len(subject)) and never allocates.
type Pattern struct {
	text   string
	tokens []string
}

// ParsePattern parses a subscription pattern: tokens separated by '.', each
// non-empty and free of spaces and control characters. The token "*" matches
// exactly one subject token and the token ">", allowed only last, matches one
// or more trailing tokens. A wildcard must be a whole token ("ord*" is an
// error, not a prefix match).
func ParsePattern(s string) (Pattern, error) {
	if err := checkTokens(s, true); err != nil {
		return Pattern{}, err
	}
	return Pattern{text: s, tokens: strings.Split(s, ".")}, nil
}

// String returns the pattern as written.
func (p Pattern) String() string { return p.text }

// Match reports whether the subject matches the pattern. An invalid subject
// (see ValidSubject) may match a pattern of literal tokens; callers publish
// only validated subjects.
func (p Pattern) Match(subject string) bool {
	if len(p.tokens) == 0 {
		return false
	}
	pos := 0 // start of the next subject token; len(subject)+1 when exhausted
	for _, t := range p.tokens {
		if pos > len(subject) {
			return false
		}
		if t == ">" {
			return true
		}
		var tok string
		if end := strings.IndexByte(subject[pos:], '.'); end < 0 {
			tok, pos = subject[pos:], len(subject)+1
		} else {
			tok, pos = subject[pos:pos+end], pos+end+1
		}
		if t != "*" && t != tok {
			return false
		}
	}
	return pos > len(subject)
}

// Match reports whether subject matches pattern; an invalid pattern matches
// nothing. It parses the pattern on every call: hold a Pattern to match
// repeatedly.
func Match(pattern, subject string) bool {
	p, err := ParsePattern(pattern)
	return err == nil && ValidSubject(subject) == nil && p.Match(subject)
}

// ValidSubject reports whether s can be published to: tokens separated by
// '.', each non-empty, free of spaces and control characters, and neither
// "*" nor ">".
func ValidSubject(s string) error { return checkTokens(s, false) }

func checkTokens(s string, pattern bool) error {
	what := "subject"
	if pattern {
		what = "pattern"
	}
	if s == "" {
		return fmt.Errorf("%w: empty %s", ErrInvalidSubject, what)
	}
	start := 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] != '.' {
			if c := s[i]; c <= ' ' || c == 0x7f {
				return fmt.Errorf("%w: %s %q contains a space or control character", ErrInvalidSubject, what, s)
			}
			continue
		}
		tok := s[start:i]
		start = i + 1
		switch {
		case tok == "":
			return fmt.Errorf("%w: %s %q has an empty token", ErrInvalidSubject, what, s)
		case tok == "*" || tok == ">":
			if !pattern {
				return fmt.Errorf("%w: subject %q contains the wildcard %q", ErrInvalidSubject, s, tok)
			}
			if tok == ">" && i != len(s) {
				return fmt.Errorf("%w: pattern %q: '>' must be the last token", ErrInvalidSubject, s)
			}
		case strings.ContainsAny(tok, "*>"):
			return fmt.Errorf("%w: %s %q: a wildcard must be a whole token, not part of %q", ErrInvalidSubject, what, s, tok)
		}
	}
	return nil
}
