// Package tensortest runs chunk graphs in this process, one op after the
// other in key order, with no scheduling at all: the reference the tests
// compare the engine and the optimizations against, and the home of the
// tests that take a spec from text to values (the NumPy catalogue).
//
// Only tests run it: no marsfs process links it.
package tensortest
