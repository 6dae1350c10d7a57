// Package agentx is the client side of an InferenceX AgentX run: the
// recorded Claude-Code session trees it replays (kv-cache-tester / WEKA
// trace format), the AIPerf agentic-replay rules that decide who sends what
// when (lanes, sampled start turns with warm-up, think time, subagent
// fan-out and join, idle-gap shifts, recycling), and the InferenceX
// measurement protocol over the profiled requests.
//
// What the server does with a request (prefix cache, routing, batching) is
// not here: the serving simulation receives Requests from a Replay, tells
// it when each one produced its first token and when it ended, and the
// Replay releases the requests that depended on it.
package agentx

// BlockSize is the KV block the traces hash: kv-cache-tester traces carry
// "block_size": 64 and one hash id per 64 prompt tokens.
const BlockSize = 64

// Phase says whether a request is warm-up (excluded from metrics, as
// InferenceX's request_metrics.py drops rows whose benchmark_phase is not
// "profiling") or profiled.
type Phase uint8

const (
	Warmup Phase = iota
	Profile
)

func (p Phase) String() string {
	if p == Warmup {
		return "warmup"
	}
	return "profiling"
}

// Request is one request as the AgentX client emits it.
type Request struct {
	// ID is unique within one Replay; pass it back to Replay.Complete.
	ID int
	// Tree is the live session tree (one play of one trace in one lane):
	// a root conversation and every subagent it spawns. --conc counts trees.
	Tree int
	// Lane is the concurrency slot the tree occupies (0..conc-1).
	Lane int
	// Session is a globally unique conversation (one context chain of one
	// play): the routing key Dynamo's session affinity binds
	// (X-Dynamo-Session-ID). Subagents and side chains are sessions of
	// their own within the same Tree.
	Session int
	// Trace indexes the corpus trace this play replays.
	Trace int
	// Turn is the index of this request within its session in the trace
	// (not counting turns skipped before a lane's sampled start).
	Turn int
	// Arrival is when the client sends it, in seconds of simulated time.
	Arrival float64
	// Input is the prompt, in tokens, cached part included.
	Input int
	// Output is the number of tokens generated; AgentX locks ignore_eos, so
	// a request always runs to this length.
	Output int
	// Shared is how many leading prompt tokens (whole 64-token blocks)
	// equal the leading tokens of the same session's previous request's
	// prompt (the longest common prefix of their hash_ids), or on a
	// session's first request those of another session of the same tree
	// (From). The first turn of a recycled play shares nothing with an
	// earlier play (AIPerf's cache-bust marker is per tree). The server's
	// cache decides how much of it is still resident.
	Shared int
	// From is the session whose prompt Shared refers to on a session's
	// first request (a chain forked from another chain of the tree: the
	// whole tree is one prefix-cache domain, branch_orchestrator.py
	// _marker_for_root), or -1.
	From int
	// Phase is Warmup or Profile.
	Phase Phase
}

// Uncached returns the prompt tokens that are new since the session's
// previous request: what a server whose cache still holds that request's
// prompt must prefill.
func (r *Request) Uncached() int { return r.Input - r.Shared }
