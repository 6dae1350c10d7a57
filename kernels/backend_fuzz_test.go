package kernels

import "testing"

// FuzzParseBackends: no input panics the backend-table parser, and a table
// it accepts prices every backend (efficiency in (0, 1]) and resolves every
// fallback to a backend of the same engine that accepts the format.
func FuzzParseBackends(f *testing.F) {
	f.Add(embeddedBackends)
	f.Add([]byte("engines: [{engine: e, fallback: {bf16: t}, backends: [{name: t, dtypes: [bf16], efficiency: 1}]}]"))
	f.Add([]byte("engines: [{engine: e, fallback: {nvfp4: t}, backends: [{name: t, dtypes: [bf16], efficiency: 0.5}]}]"))
	f.Add([]byte("engines: &a [*a]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tab, err := parseBackends("fuzz.yaml", data)
		if err != nil {
			return
		}
		for _, b := range tab.backends {
			if !(b.Efficiency > 0 && b.Efficiency <= 1) {
				t.Fatalf("accepted backend %s/%s with efficiency %v", b.Engine, b.Name, b.Efficiency)
			}
		}
		for engine, fb := range tab.fallback {
			for dt, name := range fb {
				if b, ok := tab.find(engine, name); !ok || !b.Accepts(dt) {
					t.Fatalf("engine %s: fallback for %s is %q, found %v, accepts it %v", engine, dt, name, ok, b.Accepts(dt))
				}
			}
		}
	})
}
