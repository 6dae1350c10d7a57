package simulate

import (
	"fmt"
	"strconv"
	"strings"
)

// Parallel is how one serving instance (an aggregated worker, a prefill
// worker or a decode worker) splits the model over its GPUs.
type Parallel struct {
	TP int // tensor parallel size (attention heads and dense GEMMs)
	EP int // expert parallel size inside the TP group (1 = experts TP-split)
	PP int // pipeline stages; each stage holds Layers/PP layers on TP GPUs
	// DPAttention: attention runs data-parallel (each of the TP ranks holds
	// whole attention weights and its own sequences), MoE is expert-parallel
	// over the same ranks: SGLang --enable-dp-attention, "DEP".
	DPAttention bool
}

// GPUs is the GPU count of one instance.
func (p Parallel) GPUs() int { return p.TP * p.PP }

// AttentionTP is the tensor-parallel split of attention weights and heads.
func (p Parallel) AttentionTP() int {
	if p.DPAttention {
		return 1
	}
	return p.TP
}

// AttentionDP is how many ranks hold disjoint sequences for attention.
func (p Parallel) AttentionDP() int {
	if p.DPAttention {
		return p.TP
	}
	return 1
}

// MoETP is the tensor split of each expert's intermediate dimension.
func (p Parallel) MoETP() int { return p.TP / p.EP }

// String prints the spec in the form ParseTopology reads.
func (p Parallel) String() string {
	var b strings.Builder
	switch {
	case p.DPAttention:
		fmt.Fprintf(&b, "dep%d", p.TP)
	case p.EP > 1:
		fmt.Fprintf(&b, "tp%dep%d", p.TP, p.EP)
	default:
		fmt.Fprintf(&b, "tp%d", p.TP)
	}
	if p.PP > 1 {
		fmt.Fprintf(&b, "pp%d", p.PP)
	}
	return b.String()
}

// Topology is an aggregated deployment (one kind of instance serving prefill
// and decode) or a disaggregated one (prefill workers handing KV to decode
// workers).
type Topology struct {
	Disagg         bool
	Agg            Parallel // when !Disagg
	PrefillWorkers int
	Prefill        Parallel
	DecodeWorkers  int
	Decode         Parallel
}

// GPUs is the total GPU count of the deployment (one aggregated instance, or
// all prefill and decode workers).
func (t Topology) GPUs() int {
	if t.Disagg {
		return t.PrefillWorkers*t.Prefill.GPUs() + t.DecodeWorkers*t.Decode.GPUs()
	}
	return t.Agg.GPUs()
}

// String prints the topology in the form ParseTopology reads.
func (t Topology) String() string {
	if t.Disagg {
		return fmt.Sprintf("disagg:%dx%s+%dx%s", t.PrefillWorkers, t.Prefill, t.DecodeWorkers, t.Decode)
	}
	return "agg:" + t.Agg.String()
}

// Limits that keep a typo from asking for a million-GPU deployment.
const (
	maxParallel = 1024
	maxWorkers  = 1024
	maxGPUs     = 8192
)

// ParseTopology reads "agg:tp2", "agg:tp8ep8", "agg:dep8", "agg:tp1pp4",
// "agg:tp4ep2pp2" and "disagg:3xtp1pp4+1xdep8". The "agg:" prefix may be
// left out.
func ParseTopology(s string) (Topology, error) {
	orig := s
	s = strings.ToLower(strings.TrimSpace(s))
	bad := func(format string, a ...any) (Topology, error) {
		return Topology{}, fmt.Errorf("topology %q: %s (want agg:tpN, agg:tpNepM, agg:depN, agg:tpNppM or disagg:<P>x<spec>+<D>x<spec>, e.g. disagg:3xtp1pp4+1xdep8)", orig, fmt.Sprintf(format, a...))
	}
	switch {
	case strings.HasPrefix(s, "disagg:"):
		body := strings.TrimPrefix(s, "disagg:")
		parts := strings.Split(body, "+")
		if len(parts) != 2 {
			return bad("a disaggregated topology has one prefill and one decode group joined by '+'")
		}
		var t Topology
		t.Disagg = true
		var err error
		if t.PrefillWorkers, t.Prefill, err = parseWorkers(parts[0]); err != nil {
			return bad("prefill group: %v", err)
		}
		if t.DecodeWorkers, t.Decode, err = parseWorkers(parts[1]); err != nil {
			return bad("decode group: %v", err)
		}
		if t.GPUs() > maxGPUs {
			return bad("%d GPUs is more than %d", t.GPUs(), maxGPUs)
		}
		return t, nil
	case strings.HasPrefix(s, "agg:"):
		s = strings.TrimPrefix(s, "agg:")
	}
	p, err := parseParallel(s)
	if err != nil {
		return bad("%v", err)
	}
	return Topology{Agg: p}, nil
}

func parseWorkers(s string) (int, Parallel, error) {
	n, spec, ok := strings.Cut(s, "x")
	if !ok {
		return 0, Parallel{}, fmt.Errorf("%q: want <workers>x<spec>", s)
	}
	w, err := strconv.Atoi(n)
	if err != nil || w < 1 || w > maxWorkers {
		return 0, Parallel{}, fmt.Errorf("%q: worker count must be 1..%d", s, maxWorkers)
	}
	p, err := parseParallel(spec)
	return w, p, err
}

// parseParallel reads a sequence of tp<N>, ep<N>, dep<N> and pp<N> terms.
func parseParallel(s string) (Parallel, error) {
	if s == "" {
		return Parallel{}, fmt.Errorf("empty parallel spec")
	}
	p := Parallel{}
	seen := map[string]bool{}
	for s != "" {
		var key string
		for _, k := range []string{"dep", "tp", "ep", "pp"} {
			if strings.HasPrefix(s, k) {
				key = k
				break
			}
		}
		if key == "" {
			return Parallel{}, fmt.Errorf("unexpected %q", s)
		}
		s = s[len(key):]
		i := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == 0 {
			return Parallel{}, fmt.Errorf("%s needs a size", key)
		}
		if i > 5 {
			return Parallel{}, fmt.Errorf("%s%s: too large", key, s[:i])
		}
		n, _ := strconv.Atoi(s[:i])
		s = s[i:]
		if n < 1 || n > maxParallel {
			return Parallel{}, fmt.Errorf("%s%d: size must be 1..%d", key, n, maxParallel)
		}
		if seen[key] {
			return Parallel{}, fmt.Errorf("%s given twice", key)
		}
		seen[key] = true
		switch key {
		case "tp":
			p.TP = n
		case "ep":
			p.EP = n
		case "pp":
			p.PP = n
		case "dep":
			p.TP, p.EP, p.DPAttention = n, n, true
		}
	}
	if seen["dep"] && (seen["tp"] || seen["ep"]) {
		return Parallel{}, fmt.Errorf("dep<N> already sets tp and ep")
	}
	if p.TP == 0 {
		if p.EP > 0 {
			return Parallel{}, fmt.Errorf("ep needs a tp size (tpNepM)")
		}
		p.TP = 1
	}
	if p.EP == 0 {
		p.EP = 1
	}
	if p.PP == 0 {
		p.PP = 1
	}
	if p.EP > p.TP || p.TP%p.EP != 0 {
		return Parallel{}, fmt.Errorf("ep%d must divide tp%d (experts are spread inside the TP group)", p.EP, p.TP)
	}
	if p.GPUs() > maxGPUs {
		return Parallel{}, fmt.Errorf("%d GPUs per instance is more than %d", p.GPUs(), maxGPUs)
	}
	return p, nil
}

// fits reports why parallel p cannot hold model m (heads, experts or layers
// that do not divide), or nil.
func (p Parallel) fits(m *Model) error {
	if p.PP > m.Layers {
		return fmt.Errorf("pp%d exceeds the %d layers of %s", p.PP, m.Layers, m.Name)
	}
	at := p.AttentionTP()
	if m.Heads%at != 0 {
		return fmt.Errorf("tp%d does not divide the %d attention heads of %s", at, m.Heads, m.Name)
	}
	if m.Experts > 0 {
		if m.Experts%p.EP != 0 {
			return fmt.Errorf("ep%d does not divide the %d experts of %s", p.EP, m.Experts, m.Name)
		}
		if m.MoEInter%p.MoETP() != 0 {
			return fmt.Errorf("moe tp%d does not divide moe_intermediate_size %d of %s", p.MoETP(), m.MoEInter, m.Name)
		}
	}
	if m.FullAttnInterval > 1 && m.LinearVHeads%at != 0 {
		return fmt.Errorf("tp%d does not divide the %d linear-attention value heads of %s", at, m.LinearVHeads, m.Name)
	}
	return nil
}
