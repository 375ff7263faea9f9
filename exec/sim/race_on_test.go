//go:build race

package sim

// raceDetector is true in a build with the race detector. The simulator
// steps its machines on one goroutine, so the detector has little to find
// in it and slows each seed several times over: such a build runs the
// seeds -short runs.
const raceDetector = true
