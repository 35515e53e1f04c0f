package store

import (
	"bytes"
	"strings"

	"github.com/stepwise-dev/stepwise/engine/internal/jsonenc"
)

// Secret is a value the configuration expanded from the environment (a
// model's key, a server's token) and the reference it is stored as
// (${VAR}): a tool that prints what it was passed on would otherwise put
// it in the record in clear.
type Secret struct {
	Value, Ref string
}

// redaction hides a Recorder's secrets in what it stores. It searches the
// encoded bytes of each payload for them, and rewrites only a payload that
// holds one: most payloads hold none, and encoding each value through a
// redacting encoder would cost recording every value a second look.
type redaction struct {
	// inJSON are the forms a secret takes inside a payload's JSON: as a
	// JSON string holds it, and as it is once more escaped when that JSON
	// is itself text inside a string (a tool's stdout that printed JSON),
	// each with the same form of its reference. A secret's forms come
	// before a shorter secret's, so that a secret holding another is
	// hidden whole.
	inJSON []replacement
	// plain are the secrets as they are, for the run's row, which the
	// writer takes from the payloads' values rather than their JSON.
	plain *strings.Replacer
}

// replacement is a secret's form, and its reference's.
type replacement struct {
	secret, ref []byte
}

// newRedaction is the redaction of secrets, nil when there are none, so
// that recording without secrets costs nothing more.
func newRedaction(secrets []Secret) *redaction {
	if len(secrets) == 0 {
		return nil
	}
	rd := &redaction{}
	var pairs []string
	for _, sec := range secrets {
		if sec.Value == "" {
			continue
		}
		pairs = append(pairs, sec.Value, sec.Ref)
		once, ref := jsonText(sec.Value), jsonText(sec.Ref)
		twice, refTwice := jsonText(string(once)), jsonText(string(ref))
		if !bytes.Equal(twice, once) {
			rd.inJSON = append(rd.inJSON, replacement{twice, refTwice})
		}
		rd.inJSON = append(rd.inJSON, replacement{once, ref})
	}
	if len(pairs) == 0 {
		return nil
	}
	rd.plain = strings.NewReplacer(pairs...)
	return rd
}

// jsonText is s as the payload encoder writes it inside a JSON string:
// its encoding less the quotes.
func jsonText(s string) []byte {
	b := jsonenc.AppendString(nil, s)
	return b[1 : len(b)-1]
}

// payload returns p, a payload's JSON, with every secret in it replaced by
// its reference: p itself when it holds none, else a new buffer.
func (rd *redaction) payload(p []byte) []byte {
	for _, r := range rd.inJSON {
		if bytes.Contains(p, r.secret) {
			p = bytes.ReplaceAll(p, r.secret, r.ref)
		}
	}
	return p
}

// text returns s with every secret in it replaced by its reference.
func (rd *redaction) text(s string) string {
	if rd == nil {
		return s
	}
	return rd.plain.Replace(s)
}
