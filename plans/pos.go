package plans

import "fmt"

// Pos is a position in a plan file. Line and Col are 1-based; a zero Line
// means the position is unknown (a value built in code rather than loaded).
type Pos struct {
	File string
	Line int
	Col  int
}

// String renders the position the way compilers do: file:line:col.
func (p Pos) String() string {
	switch {
	case p.Line == 0:
		return p.File
	case p.File == "":
		return fmt.Sprintf("%d:%d", p.Line, p.Col)
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// Field is a scalar field of a plan with the position it was written at.
// Set distinguishes a field written with its zero value from one left out.
type Field[T any] struct {
	Value T
	Pos   Pos
	Set   bool
}
