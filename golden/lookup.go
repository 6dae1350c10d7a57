package golden

import (
	"fmt"
	"sort"
	"strings"
)

// Lookup is Resolve for callers that must not guess between curves of one
// model: where a name fits several curve files of the same model
// (MiniMax-M3's minimaxm3_eagle3 and minimaxm3_eagle3_gqa), Resolve keeps
// the file with the plain model key, and Lookup instead asks for the draft
// model. draftModel, when given, picks the curve as InferenceX does (infx
// curve_name: the _gqa curve when the draft path contains "gqa", else the
// plain one). A curve name or a full key ("minimax-m3@minimaxm3_eagle3_gqa")
// names one curve and is never ambiguous. A name that stays ambiguous is an
// [*Error] on "DraftModel".
func (s *Set) Lookup(name, draftModel string) (string, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	if e, ok := s.entries[n]; ok && strings.Contains(n, "@") {
		return e.key, nil
	}
	for _, e := range s.entries {
		if e.stem == n {
			return e.key, nil
		}
	}
	key, err := s.Resolve(name)
	if err != nil {
		return "", err
	}
	model := s.entries[strings.ToLower(key)].model
	var sib []*entry
	for _, e := range s.entries {
		if strings.EqualFold(e.model, model) {
			sib = append(sib, e)
		}
	}
	if len(sib) == 1 {
		return key, nil
	}
	sort.Slice(sib, func(i, j int) bool { return sib[i].stem < sib[j].stem })
	if d := strings.ToLower(strings.TrimSpace(draftModel)); d != "" {
		var plain *entry
		for _, e := range sib {
			suffix := e.stem[strings.LastIndexByte(e.stem, '_')+1:]
			if strings.Contains(d, suffix) && suffix != "mtp" && suffix != "eagle3" {
				return e.key, nil
			}
			if e.key == e.model {
				plain = e
			}
		}
		if plain != nil {
			return plain.key, nil
		}
	}
	names := make([]string, len(sib))
	for i, e := range sib {
		names[i] = fmt.Sprintf("%s (curve %s)", e.key, e.stem)
	}
	return "", &Error{Field: "DraftModel", Value: draftModel, Reason: fmt.Sprintf("model %q has several golden curves: %s; name the curve, or pick one by the draft checkpoint (InferenceX reads the _gqa curve when its path contains \"gqa\")", name, strings.Join(names, ", "))}
}

// Error is an argument of a call that cannot be used as given: Field names
// the argument ("DraftModel"), Value what it held ("" when missing) and
// Reason what is wrong. A command maps Field to its own flag.
type Error struct {
	Field, Value, Reason string
}

func (e *Error) Error() string {
	if e.Value == "" {
		return e.Field + ": " + e.Reason
	}
	return fmt.Sprintf("%s %s: %s", e.Field, e.Value, e.Reason)
}

// CurveFor is Curve after Lookup.
func (s *Set) CurveFor(name, draftModel string, t Thinking) (*Curve, error) {
	key, err := s.Lookup(name, draftModel)
	if err != nil {
		return nil, err
	}
	return s.Curve(key, t)
}
