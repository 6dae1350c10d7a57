package audit

import (
	"errors"
	"testing"
)

// The error names the checkpoint unless its message already does as a path
// of its own: a directory named "index" or "e" lost its name because the
// message held those letters ("no *.safetensors files and no
// model.safetensors.index.json").
func TestCorruptErrorNamesTheDirectory(t *testing.T) {
	const noFiles = "no *.safetensors files and no model.safetensors.index.json"
	for _, tc := range []struct {
		path, msg, want string
	}{
		{"index", noFiles, "index: " + noFiles},
		{"e", noFiles, "e: " + noFiles},
		{"json", noFiles, "json: " + noFiles},
		{"models/ckpt", noFiles, "models/ckpt: " + noFiles},
		{"ckpt", "ckpt/config.json: not a JSON object", "ckpt/config.json: not a JSON object"},
		{"ckpt/", "ckpt/config.json: not a JSON object", "ckpt/config.json: not a JSON object"},
		{"ckpt", "stat ckpt: no such file or directory", "stat ckpt: no such file or directory"},
		{"ckpt", `open "ckpt": denied`, `open "ckpt": denied`},
		{"ck", "ckpt/config.json: bad", "ck: ckpt/config.json: bad"},
		{".", "config.json: not a JSON object", "config.json: not a JSON object"},
	} {
		if got := (&CorruptError{Path: tc.path, Err: errors.New(tc.msg)}).Error(); got != tc.want {
			t.Errorf("path %q, message %q: got %q, want %q", tc.path, tc.msg, got, tc.want)
		}
	}
}
