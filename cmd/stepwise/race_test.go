//go:build race

package main

// raceEnabled is set in a build with the race detector, whose memory and
// time overheads would swamp what the memory tests measure.
const raceEnabled = true
