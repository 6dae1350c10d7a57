package golden

import (
	"errors"
	"strings"
	"testing"
)

// TestLookupErrorIsTyped: a name that fits several curves of one model is
// an *Error on "DraftModel" with no value (no draft model was given), and
// names no command's flag.
func TestLookupErrorIsTyped(t *testing.T) {
	s, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ name, draft string }{
		{"minimaxm3", ""},
		{"MiniMaxAI/MiniMax-M3", ""},
	} {
		_, err := s.Lookup(tt.name, tt.draft)
		var e *Error
		if !errors.As(err, &e) || e.Field != "DraftModel" || e.Value != tt.draft || strings.Contains(err.Error(), "--") {
			t.Errorf("%s/%q: error %#v, want an *Error on DraftModel and no flag", tt.name, tt.draft, err)
		}
	}
}
