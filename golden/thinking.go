package golden

import (
	"fmt"
	"strings"
)

// Thinking is the chat-template thinking mode a curve was measured in.
// AgentX replays agentic traces with thinking on.
type Thinking string

// The two thinking modes of the InferenceX schema.
const (
	ThinkingOn  Thinking = "on"
	ThinkingOff Thinking = "off"
)

// ParseThinking accepts "on", "off" and the file keys "thinking_on",
// "thinking_off", in any case.
func ParseThinking(s string) (Thinking, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "on", "thinking_on":
		return ThinkingOn, nil
	case "off", "thinking_off":
		return ThinkingOff, nil
	}
	return "", fmt.Errorf("thinking mode %q: want on or off", s)
}

// fileKey is the mode's key in a golden file.
func (t Thinking) fileKey() string { return "thinking_" + string(t) }
