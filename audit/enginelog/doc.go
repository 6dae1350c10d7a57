// Package enginelog reads serving-engine logs (SGLang, vLLM) for the facts
// specsim checks against its models: weight-load memory per rank and
// decode-batch statistics.
package enginelog
