package recipe

import "sort"

// Codes lists every finding code a recipe check can report, sorted.
func Codes() []string {
	c := []string{CodeArchOverride, CodeCUDAGraphBelowCap, CodeConfigOverride, CodeDraftDTypeOverride, CodeDraftDummyWeights, CodeDraftLengthDiffers, CodeDraftLengthMissing, CodeDraftLengthRange, CodeDraftNotServed, CodeDraftQuantization, CodeDuplicateKey, CodeEngineModified, CodeEngineMountOverride, CodeEngineUnknown, CodeFP8NextNMoE, CodeGenerationNotSpec, CodeImageNotUpstream, CodeModelUnknown, CodeNoRoles, CodeNotAgentic, CodeNumDraftTokens, CodeRealDraftTokenTopK, CodeSimAccIncomplete, CodeSimAccLenMismatch, CodeSimAccMethod, CodeSimAccMissing, CodeSimAccNonSpecRole, CodeSimAccRecipeWide, CodeSimAccTokenMode, CodeSimAccWrongEngine, CodeSpecAlgorithmClash, CodeTRTFractionalForced}
	sort.Strings(c)
	return c
}
