package main

import (
	"fmt"
	"io"

	"github.com/specsim/specsim/simulate"
)

// printAgentX reports the AgentX client side of a trace replay.
func printAgentX(w io.Writer, p *simulate.Result, format format) {
	a := p.AgentX
	if a == nil {
		return
	}
	fmt.Fprintln(w)
	t := &table{header: []string{"agentx client", ">value", "unit"}}
	t.add("usable traces", fmt.Sprint(a.UsableTraces), "traces (first --agentx max-traces, peak context within max-context)")
	t.add("warm-up", fmt.Sprintf("%.1f", a.WarmupSeconds), fmt.Sprintf("s (%d requests: primers + per-lane advance)", a.WarmupRequests))
	t.add("profiled window", fmt.Sprintf("%.0f", a.WindowS), fmt.Sprintf("s (requests span %.0f s)", a.ProfiledS))
	t.add("session trees / sessions replayed", fmt.Sprintf("%d / %d", a.Trees, a.Sessions), fmt.Sprintf("(%d subagent sessions; trees started over the warm-up and window, --conc live at once)", a.SubagentSessions))
	t.add("ISL / OSL mean", fmt.Sprintf("%.0f / %.0f", a.ISLMean, a.OSLMean), "tokens")
	t.add("prompt shared with session's last", fmt.Sprintf("%.1f%%", 100*a.SharedFraction), "of input tokens (client side)")
	t.add("prompt served from cache", fmt.Sprintf("%.1f%%", 100*a.CachedFraction), "of input tokens of profiled requests (server side; warm-up excluded)")
	t.add("E2EL p75", fmt.Sprintf("%.2f", a.E2ELp75), "s")
	t.add("idle shifts system / tree", fmt.Sprintf("%d / %d", a.IdleShifts, a.TreeShifts), fmt.Sprintf("(%.0f s / %.0f s skipped)", a.IdleShiftS, a.TreeShiftS))
	q := a.QuarterTPS
	steady := "steady"
	if !a.Steady {
		steady = "NOT steady (the window's halves differ by more than 10%)"
	}
	t.add("tokens/s by window quarter", fmt.Sprintf("%.0f %.0f %.0f %.0f", q[0], q[1], q[2], q[3]), steady)
	t.write(w, format)
}
