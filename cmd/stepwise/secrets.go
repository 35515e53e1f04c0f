package main

import (
	"io"

	"github.com/stepwise-dev/stepwise/debugger/workspace"
)

// hidingSecrets returns s with the secrets ws's configuration expanded
// hidden in what is written to its out and err (Workspace.Redact), for
// the commands that print a run's values: its output, answer, events and
// stops. Without secrets it is s itself, and writing costs nothing more.
func (s *streams) hidingSecrets(ws *workspace.Workspace) *streams {
	if !ws.HasSecrets() {
		return s
	}
	return &streams{in: s.in, out: hideSecrets(s.out, ws), err: hideSecrets(s.err, ws)}
}

// hideSecrets returns w with the secrets ws's configuration expanded hidden
// in every write; w itself when there are none.
func hideSecrets(w io.Writer, ws *workspace.Workspace) io.Writer {
	if !ws.HasSecrets() {
		return w
	}
	return secretHider{w: w, redact: ws.Redact}
}

// secretHider redacts each write whole. That is enough because what writes
// a value writes it in one write (json.Encoder's Encode, fmt.Fprintf), and
// a model's streamed answer, the one text written in pieces, comes with its
// secrets hidden across the pieces already (config.SecretStream). A JSON
// value stays JSON: a secret's forms in JSON become ${VAR}, which needs no
// escaping.
type secretHider struct {
	w      io.Writer
	redact func(string) string
}

func (h secretHider) Write(p []byte) (int, error) {
	if _, err := io.WriteString(h.w, h.redact(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
