//go:build race

package sched

// raceDetector is true in a build with the race detector, which slows
// the kernels several times over.
const raceDetector = true
