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
//
// A search looks for the byte of a secret's form that is rarest in the
// payloads (counted in the first sampleBytes of them) and compares the
// form only where that byte is: searching for a form's first byte, an s
// or a t as often as not, stopped at every other member name, and made
// recording a map half as slow again.
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
	// counts are how often each byte occurs in the first sampled bytes of
	// the payloads.
	counts  [256]int
	sampled int
}

// sampleBytes is how much of the payloads a redaction counts bytes in,
// to choose its forms' anchors.
const sampleBytes = 64 << 10

// replacement is a secret's form, its reference's, and the index of the
// byte of the form its search looks for.
type replacement struct {
	secret, ref []byte
	anchor      int
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
			rd.inJSON = append(rd.inJSON, replacement{secret: twice, ref: refTwice})
		}
		rd.inJSON = append(rd.inJSON, replacement{secret: once, ref: ref})
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
// its reference: p itself when it holds none, else a new buffer, and
// hidden set.
func (rd *redaction) payload(p []byte) (_ []byte, hidden bool) {
	if rd.sampled < sampleBytes {
		rd.sample(p)
	}
	for i := range rd.inJSON {
		if r := &rd.inJSON[i]; r.in(p) {
			p, hidden = bytes.ReplaceAll(p, r.secret, r.ref), true
		}
	}
	return p, hidden
}

// sample counts the bytes of p, up to sampleBytes in all, and anchors
// each form at its rarest byte so far.
func (rd *redaction) sample(p []byte) {
	for _, c := range p[:min(len(p), sampleBytes-rd.sampled)] {
		rd.counts[c]++
	}
	rd.sampled += len(p)
	for i := range rd.inJSON {
		r := &rd.inJSON[i]
		for j, c := range r.secret {
			if rd.counts[c] < rd.counts[r.secret[r.anchor]] {
				r.anchor = j
			}
		}
	}
}

// in reports whether p holds r's form.
func (r *replacement) in(p []byte) bool {
	c := r.secret[r.anchor]
	for i := r.anchor; i < len(p); i++ {
		j := bytes.IndexByte(p[i:], c)
		if j < 0 {
			return false
		}
		i += j
		if start := i - r.anchor; start+len(r.secret) <= len(p) && bytes.Equal(p[start:start+len(r.secret)], r.secret) {
			return true
		}
	}
	return false
}

// text returns s with every secret in it replaced by its reference.
func (rd *redaction) text(s string) string {
	if rd == nil {
		return s
	}
	return rd.plain.Replace(s)
}
