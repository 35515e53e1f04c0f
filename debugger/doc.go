// Package debugger stops, inspects and steers engine runs: breakpoints,
// stepping, inject and replace, and record, replay and fork.
package debugger
