package simulate

import (
	_ "embed"
	"fmt"
	"math"
	"sort"

	"gopkg.in/yaml.v3"
)

// BandWidths are relative half-widths of an uncertainty band: a value v
// with width w spans [v/(1+w), v*(1+w)].
type BandWidths struct {
	Throughput float64 `yaml:"throughput" json:"throughput"`
	Latency    float64 `yaml:"latency" json:"latency"`
}

// Range is a band around one predicted figure.
type Range struct {
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

func within(v, w float64) Range { return Range{v / (1 + w), v * (1 + w)} }

// BandText says how width w is applied (within): a factor 1+w either way,
// -w/(1+w) below the value and +w above it, with prec decimals of percent:
// "×/÷ 1.82 (-45%/+82%)" for w 0.82 and prec 0.
func BandText(w float64, prec int) string {
	return fmt.Sprintf("×/÷ %.*f (-%.*f%%/+%.*f%%)", prec+2, 1+w, prec, 100*w/(1+w), prec, 100*w)
}

// bandErrorText is what a width is the quantile of (BandFromResiduals).
const bandErrorText = "error factor max(predicted/measured, measured/predicted)"

// Band is the uncertainty of one prediction: where its widths come from and
// the range of every throughput and latency figure.
type Band struct {
	Source   string     `json:"source"`
	Relative BandWidths `json:"relative"`
	// Rows is how many measured points the widths were derived from.
	Rows          int   `json:"rows"`
	TputPerGPU    Range `json:"tput_per_gpu"`
	OutputPerGPU  Range `json:"output_tput_per_gpu"`
	Interactivity Range `json:"interactivity"`
	TPOTms        Range `json:"tpot_ms"`
	TTFTms        Range `json:"ttft_ms"`
	E2ELp50       Range `json:"e2el_s_p50"`
	E2ELp90       Range `json:"e2el_s_p90"`
}

// validationBands are the widths derived from the residuals of the
// published validation rows, by GPU family and workload: fixed-workload
// rows from testdata/published.yaml, agentx rows from the AgentX points of
// TestAgentXPublished; TestValidationBands recomputes them (see bandGroups).
//
//go:embed validation_bands.yaml
var validationBandsYAML []byte

// BandGroup is the residual summary of one GPU family and workload.
type BandGroup struct {
	Family   string `yaml:"family"`   // GPU architecture ("hopper", "blackwell") or "all"
	Workload string `yaml:"workload"` // "fixed" or "agentx"
	// Source names the measured points the group's rows are.
	Source string     `yaml:"source"`
	Rows   int        `yaml:"rows"`
	Widths BandWidths `yaml:"widths"`
	// Residuals counts the errors behind each width; Low how many of them
	// predicted the figure below its measurement (latency errors counted
	// on the latency, a speed's error inverted).
	Residuals BandCounts `yaml:"residuals"`
	Low       BandCounts `yaml:"low"`
}

// BandCounts counts throughput and latency residuals.
type BandCounts struct {
	Throughput int `yaml:"throughput"`
	Latency    int `yaml:"latency"`
}

// bias says when every residual of a group lies on one side: the band is
// symmetric, the error is not.
func (g *BandGroup) bias() string {
	side := func(low, n int) string {
		switch {
		case n == 0:
			return ""
		case low == n:
			return "LOW"
		case low == 0:
			return "HIGH"
		}
		return ""
	}
	t, l := side(g.Low.Throughput, g.Residuals.Throughput), side(g.Low.Latency, g.Residuals.Latency)
	switch {
	case t == "" || l == "":
		return ""
	case t == l:
		return fmt.Sprintf("; all %d rows predicted %s (%s the measurement: every one of %d throughput and %d latency residuals): the error is a bias, not symmetric noise",
			g.Rows, t, map[string]string{"LOW": "below", "HIGH": "above"}[t], g.Residuals.Throughput, g.Residuals.Latency)
	}
	return fmt.Sprintf("; all %d rows predicted %s in throughput, %s in latency: the error is a bias, not symmetric noise", g.Rows, t, l)
}

// bandFamilies are the GPU families with their own group of workload wl.
func bandFamilies(groups []BandGroup, wl string) []string {
	var fams []string
	for _, g := range groups {
		if g.Workload == wl && g.Family != "all" {
			fams = append(fams, g.Family)
		}
	}
	return fams
}

type bandFile struct {
	Groups []BandGroup `yaml:"groups"`
}

func validationBands() ([]BandGroup, error) {
	var f bandFile
	if err := yaml.Unmarshal(validationBandsYAML, &f); err != nil {
		return nil, fmt.Errorf("simulate/validation_bands.yaml: %w", err)
	}
	return f.Groups, nil
}

// bandQuantile is the share of validation residuals a band covers.
const bandQuantile = 0.8

// minBandRows is the fewest residuals a group needs to give its own band;
// smaller groups use the pooled one.
const minBandRows = 4

// BandFromResiduals turns relative errors (predicted/measured - 1) into a
// band width: the bandQuantile quantile of |log(1+e)|, as a relative width.
func BandFromResiduals(errs []float64) float64 {
	if len(errs) == 0 {
		return math.NaN()
	}
	a := make([]float64, len(errs))
	for i, e := range errs {
		a[i] = math.Abs(math.Log1p(e))
	}
	sort.Float64s(a)
	return math.Expm1(quantile(a, bandQuantile))
}

// BandWidthsFor is the band deployment r's predictions carry: from the
// calibration's leave-one-out residuals when one is applied, otherwise from
// the validation residuals of r's GPU family and workload (pooled over all
// GPUs when the family has fewer than minBandRows rows): agentx
// predictions take the agentx rows (the published H200 AgentX points),
// fixed-length ones testdata/published.yaml's. The source says when every
// row of the group was predicted on one side. It returns the widths, where
// they come from and how many measured points they rest on.
func BandWidthsFor(r *Resolved) (BandWidths, string, int, error) {
	if c := r.Calibration; c != nil {
		return c.Band, fmt.Sprintf("calibration %s/%s: p%.0f of the leave-one-out %s over %d measured points", c.GPU, c.Engine, 100*bandQuantile, bandErrorText, c.Points), c.Points, nil
	}
	groups, err := validationBands()
	if err != nil {
		return BandWidths{}, "", 0, err
	}
	fam := r.GPU.GPU.Arch
	wl := r.Workload.Name
	var pick *BandGroup
	for i := range groups {
		g := &groups[i]
		if g.Family == fam && g.Workload == wl && g.Rows >= minBandRows {
			pick = g
		}
	}
	note := ""
	if pick == nil {
		for i := range groups {
			g := &groups[i]
			if g.Family == "all" && (pick == nil || g.Workload == wl) {
				pick = g
			}
		}
		note = fmt.Sprintf("; fewer than %d rows for %s/%s, so pooled", minBandRows, orDefault(fam, "unknown"), wl)
		if pick != nil && pick.Workload != wl {
			note += fmt.Sprintf(" from %s-workload rows (no %s rows: likely too narrow)", pick.Workload, wl)
		} else if fams := bandFamilies(groups, wl); len(fams) == 1 && fams[0] != fam {
			note += fmt.Sprintf(" from %s rows only (none measured on %s)", fams[0], orDefault(fam, "this GPU"))
		}
	}
	if pick == nil {
		return BandWidths{}, "", 0, fmt.Errorf("simulate/validation_bands.yaml: no pooled group")
	}
	return pick.Widths, fmt.Sprintf("validation residuals (%s), %s GPUs, %s workload: p%.0f of the %s over %d rows%s%s",
		orDefault(pick.Source, "testdata/published.yaml"), pick.Family, pick.Workload, 100*bandQuantile, bandErrorText, pick.Rows, pick.bias(), note), pick.Rows, nil
}

// BandFor is the uncertainty band of prediction p of deployment r (see
// BandWidthsFor).
func BandFor(r *Resolved, p *Result) (Band, error) {
	var b Band
	var err error
	if b.Relative, b.Source, b.Rows, err = BandWidthsFor(r); err != nil {
		return b, err
	}
	t, l := b.Relative.Throughput, b.Relative.Latency
	b.TputPerGPU = within(p.TputPerGPU, t)
	b.OutputPerGPU = within(p.OutputPerGPU, t)
	b.Interactivity = within(p.Interactivity, l)
	b.TPOTms = within(p.TPOTms, l)
	b.TTFTms = within(p.TTFTms, l)
	b.E2ELp50 = within(p.E2EL.P50, l)
	b.E2ELp90 = within(p.E2EL.P90, l)
	return b, nil
}
