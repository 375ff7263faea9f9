// Package lang is the spec language: it evaluates the statements package
// syntax parses onto a spec.Builder, lowering the language's conveniences
// (clip, stack, outer, tensordot, .T, linalg.norm, ...) onto the ops of
// package spec. Its functions are a library built once, each family by its
// file's register function (build_create.go, build_stats.go, ...); the
// evaluator is build.go, build_call.go (binding a call's arguments to a
// function's parameters) and build_index.go. Parse takes either form of a
// spec, the text here or the JSON form of package spec; Prefix builds a
// spec as it is written, a statement at a time.
//
// Errors in the text name the line and column (syntax.Error).
//
// The scheduler process runs it (fs checks each write of a spec with it).
package lang
