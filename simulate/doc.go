// Package simulate predicts what a speculative-decoding deployment serves:
// throughput, latency and memory of one model on one GPU type, topology and
// workload, with the draft's cost and acceptance in every step.
//
// A [Query] states a prediction as the command line gives it;
// [Query.Resolve] types it against the golden curves and the GPU catalog it
// is handed (errors are [*Error], naming the Query field). The [Resolved]
// query holds the [Model] (a preset, or a checkpoint directory read by
// [ModelFromDir]; both through package audit/model), the [GPUSpec], the
// [Workload], the [EngineConfig] and the acceptance target
// (acceptance.Target). An [Engine] prices one instance's decode and
// prefill steps with package kernels; a [Plan] places instances on a
// [Topology] and checks memory; the serving simulation replays the
// workload through it. [Predict] runs one deployment, [Sweep] a space of
// them with its Pareto frontier, [BestK] the draft lengths of one topology.
package simulate
