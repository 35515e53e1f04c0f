package plans

import "github.com/stepwise-dev/stepwise/plans/yamlpos"

// Pos is a position in a plan file: the one position type of every file
// stepwise reads (see yamlpos.Pos).
type Pos = yamlpos.Pos

// Field is a scalar field of a plan with the position it was written at.
// Set distinguishes a field written with its zero value from one left out.
type Field[T any] struct {
	Value T
	Pos   Pos
	Set   bool
}
