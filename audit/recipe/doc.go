// Package recipe reads srt-slurm benchmark recipes and checks the
// simulated-acceptance setup AgentX requires of them.
//
// AgentX replays agentic traces with synthetic acceptance: the engine runs
// the real draft and verify kernels but forces the number of accepted
// tokens so that the mean acceptance length equals a committed golden value
// for (model, thinking mode, draft length). Reviewers check by hand that
// each speculative role gets that value, with the right method and token
// mode, and that nothing, set directly or inherited from a base recipe,
// serves the draft below the precision it ships in. This package makes
// those checks.
//
// Parsing follows srt-slurm: schema 2 files hold a base and override_* or
// zip_override_* sections merged with srt-slurm's deep_merge rules
// (mappings merge, lists and scalars replace, null deletes); schema 1 files
// hold backend.<mode>_environment and backend.<engine>_config.<mode>.
// YAML is decoded with gopkg.in/yaml.v3 under a size cap, a depth bound and
// a bound on the nodes alias expansion may produce.
package recipe
