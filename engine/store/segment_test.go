package store

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/record"
)

// TestSegmentRoundTrip encodes events of every shape a segment keeps
// (a kind with a code and one without, no time and a time that goes back,
// paths that share a prefix and one that shares nothing, no payload, an
// inline one, one in pieces, and ones that share their head with the last
// payloads of their kind, past a payload in pieces, a kind between and
// other payloads of the kind)
// and decodes them as they were; every shorter prefix of the BLOB is an
// error, never a panic or a wrong event.
func TestSegmentRoundTrip(t *testing.T) {
	t0 := time.Date(2025, 3, 1, 10, 15, 0, 0, time.UTC)
	big := `{"tool":"t","result":"` + strings.Repeat("x", blobBytes) + `","ms":1}`
	events := []record.StoredEvent{
		{Seq: 1, Time: t0, Path: "", Kind: engine.EventRunStart, Payload: []byte(`{"plan":"p"}`)},
		{Seq: 2, Time: t0.Add(time.Microsecond), Path: "E1/do.10", Kind: engine.EventStepStart, Payload: []byte(`{"tool":"builtin__reshape","input":{"id":"CHK-10"}}`)},
		{Seq: 3, Path: "E1/do.10/E10", Kind: "custom_kind", Payload: []byte(`{"tool":"builtin__reshape"}`)},
		{Seq: 4, Time: t0.Add(2 * time.Microsecond), Path: "E1/do.11", Kind: engine.EventStepStart, Payload: []byte(`{"tool":"builtin__reshape","input":{"id":"CHK-11"}}`)},
		{Seq: 5, Time: t0.Add(3 * time.Microsecond), Path: "E1/do.10", Kind: engine.EventStepEnd, Payload: []byte(`{"tool":"builtin__reshape","status":"ok","ms":1}`)},
		{Seq: 7, Time: t0.Add(-time.Hour), Path: "E1/do.1", Kind: engine.EventStepEnd, Payload: []byte(big)},
		{Seq: 8, Time: t0, Path: "E1/do.11", Kind: engine.EventStepEnd, Payload: []byte(`{"tool":"builtin__reshape","status":"ok","ms":2}`)},
		{Seq: 9, Time: t0, Path: "Z", Kind: engine.EventUsage, Payload: []byte(`{}`)},
		{Seq: 10, Time: t0, Path: "E2", Kind: engine.EventStepStart, Payload: []byte(`{"x":1}`)},
		{Seq: 11, Time: t0, Path: "E3", Kind: engine.EventStepStart, Payload: []byte(`{"tool":"map","input":{"index":1}}`)},
		{Seq: 12, Time: t0, Path: "E3/do.1", Kind: engine.EventStepStart, Payload: []byte(`{"tool":"builtin__reshape","input":{"id":"CHK-12"}}`)},
	}
	var g segment
	g.reset()
	var blobs []blobPiece
	for _, e := range events {
		g.appendEvent(e.Seq, unixNanos(e.Time), e.Kind, e.Path, e.Payload, unknownValue)
		blobs = append(blobs, g.blobs...)
	}
	if g.firstSeq != 1 || g.last != 12 || g.events != len(events) {
		t.Errorf("segment of seqs %d to %d, %d events", g.firstSeq, g.last, g.events)
	}
	if len(blobs) != 1 || len(blobs[0].data) != blobBytes+2 {
		t.Fatalf("%d pieces in blobs", len(blobs))
	}
	got, pieced, err := decodeSegment(g.buf, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The first step_start and step_end, and the kind without a code,
	// are the only ones written whole; the last step_start shares its
	// head with the third step_start before it.
	if n := bytes.Count(g.buf, []byte(`builtin__reshape`)); n != 3 {
		t.Errorf("the tool's name is written %d times, want 3", n)
	}
	if len(pieced) != 1 || pieced[0].event != 5 {
		t.Fatalf("payloads in pieces: %+v", pieced)
	}
	if len(got) != len(events) {
		t.Fatalf("%d events decoded, want %d", len(got), len(events))
	}
	for i, e := range events {
		d := got[i]
		if i == pieced[0].event {
			p := pieced[0].pieces
			if len(p) != 3 || p[1] != blobs[0].hash {
				t.Fatalf("event %d: pieces %q", i, p)
			}
			d.Payload = []byte(p[0] + string(blobs[0].data) + p[2])
		}
		if d.Seq != e.Seq || !d.Time.Equal(e.Time) || d.Time.IsZero() != e.Time.IsZero() || d.Path != e.Path || d.Kind != e.Kind || !bytes.Equal(d.Payload, e.Payload) {
			t.Errorf("event %d: got %d %v %q %s %.80s, want %d %v %q %s %.80s", i, d.Seq, d.Time, d.Path, d.Kind, d.Payload, e.Seq, e.Time, e.Path, e.Kind, e.Payload)
		}
	}
	// A prefix that ends between two events decodes the ones before.
	ends := map[int]bool{}
	var g2 segment
	g2.reset()
	for _, e := range events {
		ends[len(g2.buf)] = true
		g2.appendEvent(e.Seq, unixNanos(e.Time), e.Kind, e.Path, e.Payload, unknownValue)
	}
	for n := 0; n < len(g.buf); n++ {
		list, _, err := decodeSegment(g.buf[:n], nil, nil)
		if err == nil && !ends[n] {
			t.Errorf("a BLOB cut to %d of %d bytes decoded into %d events", n, len(g.buf), len(list))
		}
	}
}
