package audit

import "strings"

// sizer computes per-rank bytes of target and draft.
type sizer struct {
	cfg       *ModelConfig
	place     Placement
	draftMods []*Module
	eff       map[*Module]string
	mtp       *MTP
	quantRole map[Role]bool
	embed     *Module // target embedding, for drafts that allocate their own copy
	lmHead    *Module
	// The target is reduced to bytes per (role, is-matrix): per-rank sizes
	// are linear in bytes for every role but the vocab-parallel ones,
	// which keep their row counts.
	targetSums  map[roleKey]int64
	targetVocab []vocabTensor
}

type roleKey struct {
	role   Role
	matrix bool
}

type vocabTensor struct {
	role  Role
	rows  int64
	bytes int64
}

func newSizer(engine string, cfg *ModelConfig, modules []*Module, inDraft map[*Module]bool, mtp *MTP, e Effective) *sizer {
	s := &sizer{cfg: cfg, mtp: mtp, eff: map[*Module]string{}, quantRole: map[Role]bool{}, targetSums: map[roleKey]int64{}}
	s.place = Placement{Experts: cfg.NumExperts, KVHeads: cfg.NumKeyValueHeads,
		EmbedOverAttnTP: mtp.Family == FamilyDeepSeek || mtp.Family == FamilyGLM}
	for _, v := range e.Verdicts {
		s.eff[v.Module] = v.Effective
	}
	for _, m := range modules {
		if inDraft[m] {
			s.draftMods = append(s.draftMods, m)
			continue
		}
		for i := range m.Tensors {
			t := &m.Tensors[i]
			r := roleOf(engine, t, false)
			if (r == RoleEmbed || r == RoleLMHead) && len(t.Shape) > 0 {
				s.targetVocab = append(s.targetVocab, vocabTensor{r, t.Shape[0], t.Bytes()})
				continue
			}
			s.targetSums[roleKey{r, len(t.Shape) >= 2}] += t.Bytes()
		}
		if m.Weight == nil {
			continue
		}
		r := roleOf(engine, m.Weight, false)
		switch r {
		case RoleEmbed:
			if s.embed == nil && !strings.Contains(m.Name, "visual") {
				s.embed = m
			}
		case RoleLMHead:
			if s.lmHead == nil {
				s.lmHead = m
			}
		}
		if m.Linear() && m.Quantized() {
			s.quantRole[r] = true
		}
	}
	if len(s.quantRole) == 0 {
		for _, r := range []Role{RoleExpert, RoleAttention, RoleKV, RoleDense} {
			s.quantRole[r] = true
		}
	}
	return s
}

var matrixShape, vectorShape = []int64{1, 1}, []int64{1}

func (s *sizer) target(l Layout) float64 {
	var sum float64
	for k, b := range s.targetSums {
		shape := vectorShape
		if k.matrix {
			shape = matrixShape
		}
		sum += s.place.RankBytes(l, k.role, shape, b)
	}
	for _, v := range s.targetVocab {
		sum += s.place.RankBytes(l, v.role, []int64{v.rows, 1}, v.bytes)
	}
	return sum
}

// draft sizes the draft on one rank: bytes of its parameters, and the
// memory the engine reports for them: for SGLang the CUDA caching-allocator
// segments ("mem usage" is the drop in free device memory), for vLLM the
// allocated bytes. prec "" uses each module's effective precision;
// otherwise the module kinds the target quantizes are stored in prec and
// the rest in BF16.
func (s *sizer) draft(l Layout, prec string) (bytes, reserved float64) {
	if !s.mtp.Present() {
		return 0, 0
	}
	byParam := map[string]float64{}
	ownEmbed, ownHead := false, false
	for _, m := range s.draftMods {
		var r Role
		if m.Weight != nil {
			r = roleOf(l.Engine, m.Weight, true)
		}
		if r == RoleEmbed {
			ownEmbed = true
		}
		if r == RoleLMHead {
			ownHead = true
		}
		if l.Engine == EngineVLLM && s.mtp.Kind != MTPDraftDir && (r == RoleEmbed || r == RoleLMHead) {
			continue // vLLM shares the target's embedding and lm_head with the MTP draft
		}
		p := s.eff[m]
		if prec != "" && m.Linear() {
			p = PrecBF16
			if s.quantRole[r] && !isRouter(m.Name) {
				p = prec
			}
		}
		byParam[engineParam(m.Name)] += s.place.moduleRankBytes(l, m, p, true)
	}
	// SGLang drafts construct their own vocab-parallel embedding and lm_head
	// (loaded from the target's tensors, shared only after loading), so the
	// load-time figure includes them; unquantized, as the draft is built.
	if l.Engine == EngineSGLang && s.mtp.Kind == MTPPrefixed {
		if !ownEmbed && s.embed != nil {
			byParam["draft.embed_tokens"] += s.bf16Vocab(l, RoleEmbed, s.embed)
		}
		if !ownHead && !s.cfg.TieWordEmbeddings {
			src := s.lmHead
			if src == nil {
				src = s.embed
			}
			if src != nil {
				byParam["draft.lm_head"] += s.bf16Vocab(l, RoleLMHead, src)
			}
		}
	}
	for _, b := range byParam {
		bytes += b
	}
	if l.Engine == EngineVLLM {
		// vLLM's "Model loading took" is torch.cuda allocated memory
		// (DeviceMemoryProfiler), not reserved segments.
		return bytes, bytes
	}
	return bytes, float64(allocatorFootprint(paramSizes(byParam)))
}

func (s *sizer) bf16Vocab(l Layout, r Role, m *Module) float64 {
	rows, cols := matrixDims(m)
	if m.Weight != nil && len(m.Weight.Shape) >= 2 && !m.Quantized() {
		rows, cols = m.Weight.Shape[0], m.Weight.Shape[1]
	}
	return s.place.RankBytes(l, r, []int64{rows, cols}, 2*rows*cols)
}
