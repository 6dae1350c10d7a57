package enginelog

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// EnvHit is one place a log shows an environment variable's value: a
// worker's environment dump (`env`, `printenv`, srt-slurm's exports) or a
// Python dict of os.environ.
type EnvHit struct {
	Line  int
	Value string
}

// MaxEnvHits bounds the hits kept per key.
const MaxEnvHits = 1000

// ScanEnv finds the values a log shows for each of keys, as KEY=VALUE,
// export KEY=VALUE, KEY: VALUE or 'KEY': 'VALUE' (quotes stripped). Lines
// over MaxLineBytes are skipped. It returns an error only when reading
// fails.
func ScanEnv(r io.Reader, keys []string) (map[string][]EnvHit, error) {
	out := map[string][]EnvHit{}
	if len(keys) == 0 {
		return out, nil
	}
	quoted := make([]string, len(keys))
	for i, k := range keys {
		quoted[i] = regexp.QuoteMeta(k)
	}
	re := regexp.MustCompile(`(?:^|[^A-Za-z0-9_])['"]?(` + strings.Join(quoted, "|") + `)['"]?\s*[=:]\s*(?:"([^"]*)"|'([^']*)'|([^\s,;}\])]*))`)
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; ; n++ {
		line, err := readLine(br)
		if line != "" {
			for _, m := range re.FindAllStringSubmatch(line, -1) {
				v := m[2] + m[3] + m[4]
				if len(out[m[1]]) < MaxEnvHits {
					out[m[1]] = append(out[m[1]], EnvHit{Line: n, Value: v})
				}
			}
		}
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, fmt.Errorf("line %d: %w", n, err)
		}
	}
}
