// Package syntax reads the text of the spec language, a small subset of
// Python: it lexes and parses statements (assignments, augmented
// assignments, bare expressions to fetch) into expressions package lang
// evaluates, and reports errors with their line and column. It knows
// nothing of tensors beyond the numbers written in the text, and their
// arithmetic, which it folds as Python would (arith.go).
//
// The scheduler process runs it (fs checks each write of a spec with it
// too).
package syntax
