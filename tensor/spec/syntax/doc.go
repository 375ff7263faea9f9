// Package syntax reads the text of the spec language, a small subset of
// Python: it lexes and parses statements (assignments, augmented
// assignments, bare expressions to fetch) into expressions the spec
// builder evaluates, and reports errors with their line and column.
// It knows nothing of tensors beyond the numbers written in the text.
//
// The scheduler process runs it (fs checks each write of a spec with it
// too).
package syntax
