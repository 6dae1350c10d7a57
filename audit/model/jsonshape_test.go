package model

import (
	"strings"
	"testing"
)

// A 60 MB config.json of empty objects took 1.66 GB and 13 s to decode
// (issue 14, item 13): files over MaxConfigSize are refused unread, and
// the containers are counted before decoding.
func TestConfigShapeBounded(t *testing.T) {
	many := `{"a":[` + strings.Repeat("{},", maxJSONContainers) + `{}]}`
	if _, err := Parse([]byte(many)); err == nil || !strings.Contains(err.Error(), "more than 100000 JSON objects and arrays") {
		t.Errorf("Parse: %v", err)
	}
	if _, err := ParseQuant([]byte(many)); err == nil || !strings.Contains(err.Error(), "more than 100000") {
		t.Errorf("ParseQuant: %v", err)
	}
	// braces inside strings are text, not containers
	text := `{"model_type":"llama","note":"` + strings.Repeat("{[", maxJSONContainers) + `"}`
	if err := checkJSONShape([]byte(text)); err != nil {
		t.Errorf("braces in a string counted: %v", err)
	}
	if err := checkJSONShape([]byte(`{"a":"\"{"}`)); err != nil {
		t.Error(err)
	}
}
