// Package golden reads golden acceptance-length (AL) curves and derives what
// a simulator needs from them.
//
// A golden curve is the mean number of tokens a speculative-decoding verify
// step emits per request (accepted drafts plus the target's bonus token), as
// a function of the draft length k, measured once per model and thinking
// mode and then committed as a policy constant: InferenceX AgentX runs force
// the serving engine's acceptance to these values. The files use the
// InferenceX schema (model key -> thinking_on | thinking_off -> k -> AL);
// every file under data/ is embedded as the default set.
//
// A mean alone does not say how the accepted length L is spread. Reading the
// curve as a chain draft whose behaviour does not depend on k gives more:
// p_j = AL(j) - AL(j-1) (AL(0) = 1) is the probability that the first j
// drafts are all accepted, and at draft length k
//
//	P(L = 1+j) = p_j - p_(j+1) for j < k,   P(L = 1+k) = p_k.
//
// That reading needs 1 >= p_1 >= p_2 >= ... >= 0, which measured curves do
// not always satisfy. Check names each violation; Consistent returns the
// least-squares closest curve that satisfies it, and every distribution is
// derived from that consistent curve.
package golden
