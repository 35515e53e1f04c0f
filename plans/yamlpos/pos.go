// Package yamlpos is the one YAML layer of stepwise: it reads the YAML
// files a project holds (plans, tool files, replies files) into position-
// carrying nodes, refuses text nested too deeply for any parser before one
// runs, and turns a parser's refusal into a Diagnostic at file:line:col.
// Pos and Diagnostic are also the position and finding types of the other
// file formats stepwise reads (its TOML configuration), so that every
// finding about a file is placed and printed one way.
package yamlpos

import "fmt"

// Pos is a position in a file. Line and Col are 1-based, Col counting
// characters; a zero Line means the position is unknown (a value built in
// code rather than read, or a finding about a file as a whole).
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

// Diagnostic is one thing wrong with a file, at the place it is wrong.
// Message says what is wrong and what would fix it; String puts the
// position in front, compiler style.
type Diagnostic struct {
	Pos
	Message string
}

// String renders the diagnostic as file:line:col: message, leaving out the
// position when it has none.
func (d Diagnostic) String() string {
	if loc := d.Pos.String(); loc != "" {
		return loc + ": " + d.Message
	}
	return d.Message
}
