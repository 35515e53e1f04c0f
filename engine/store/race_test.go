//go:build race

package store

// raceEnabled is set in a build with the race detector, under which the
// tests that move tens of megabytes move a tenth of that.
const raceEnabled = true
