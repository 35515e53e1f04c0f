//go:build race

package main

// raceDetector says whether the tests run under the race detector, which
// multiplies the memory a process uses.
const raceDetector = true
