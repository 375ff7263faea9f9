// Package spec turns a spec, in its text or JSON form, into a Graph of
// whole-tensor operations whose shapes and dtypes are inferred as NumPy
// 1.24 would. The parser (spec/syntax) gives statements; the builder
// (build*.go) evaluates them, lowering the language's conveniences (clip,
// stack, outer, tensordot, .T, linalg.norm, ...) onto a small set of ops,
// so that each op needs one tile rule; infer*.go infers every node the
// same way for both forms.
//
// Tensors a session already holds come in as an Env, a snapshot of their
// names, shapes and chunkings: the parser never calls back into the
// session. Errors in the text name the line and column (syntax.Error).
//
// The scheduler process runs it.
package spec
