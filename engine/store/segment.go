package store

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/stepwise-dev/stepwise/engine"
)

// A segment is one row of segments: consecutive events of one run, as many
// as a writer's transaction commits up to segmentEvents or segmentBytes,
// encoded into one BLOB. Writing a run's events as a few large rows instead
// of a row per event (or per step) spares SQLite's per-row cost (binding,
// boxing, a B-tree insert), which was most of what recording a large map
// cost; reading a run decodes its segments and builds its record in Go.
//
// The BLOB is segmentFormat, then each event: its seq (uvarint), time
// (varint Unix nanoseconds, 0 when unknown), kind and path (a text each),
// and its payload: a tag byte, then for payloadInline the JSON as a text,
// for payloadPieces the number n of pieces kept in blobs (uvarint) and
// the JSON in 2n+1 pieces: a text, then n times the SHA-256 of a piece
// kept in blobs (32 bytes) and a text. A text is its length (uvarint) and
// its bytes.
const (
	segmentFormat = 1

	payloadNone   = 0
	payloadInline = 1
	payloadPieces = 2
)

// segmentEvents and segmentBytes cap a segment: large enough that a row's
// cost is spread over hundreds of events, small enough that a reader of a
// run being recorded, or a crash, never deals with more than a few
// hundred kilobytes at once.
const (
	segmentEvents = 512
	segmentBytes  = 256 << 10
)

// segment is a segment being encoded.
type segment struct {
	run            *runState
	firstSeq, last uint64
	events         int
	buf            []byte
	// blobs are the pieces of the last event's payload that go in blobs,
	// for the caller to store; cuts is where they lie in it.
	blobs []blobPiece
	cuts  []cut
}

// blobPiece is a piece of a payload kept in blobs, under its hash.
type blobPiece struct {
	hash string // SHA-256, hex
	data []byte
}

// cut is a piece of a buffer, [lo, hi).
type cut struct{ lo, hi int }

func (g *segment) reset() {
	g.run, g.firstSeq, g.last, g.events = nil, 0, 0, 0
	g.buf = append(g.buf[:0], segmentFormat)
}

// full reports whether the segment takes no more events.
func (g *segment) full() bool {
	return g.events >= segmentEvents || len(g.buf) >= segmentBytes
}

// appendHead appends an event's seq, time, kind and path.
func (g *segment) appendHead(seq uint64, at time.Time, kind, path string) {
	if g.events == 0 {
		g.firstSeq = seq
	}
	g.events++
	g.last = seq
	g.buf = binary.AppendUvarint(g.buf, seq)
	g.buf = binary.AppendVarint(g.buf, unixNanos(at))
	g.buf = binary.AppendUvarint(g.buf, uint64(len(kind)))
	g.buf = append(g.buf, kind...)
	g.buf = binary.AppendUvarint(g.buf, uint64(len(path)))
	g.buf = append(g.buf, path...)
}

// blobBytes is the largest payload kept whole in its segment. A larger
// one keeps its value members over valueBlobBytes in blobs, once per
// content, or goes there whole when what is left is larger still: only a
// reader of its run reads it, segments stay small, and a value that
// several events or runs hold is stored once.
const blobBytes = 16 << 10

// appendEvent appends one event, its payload JSON (nil for none), and sets
// blobs to the pieces of the payload the caller is to keep in blobs.
func (g *segment) appendEvent(seq uint64, at time.Time, kind, path string, payload []byte) {
	g.blobs = g.blobs[:0]
	g.appendHead(seq, at, kind, path)
	switch {
	case payload == nil:
		g.buf = append(g.buf, payloadNone)
	case len(payload) <= blobBytes:
		g.buf = append(g.buf, payloadInline)
		g.appendText(payload)
	default:
		g.appendPieces(payload)
	}
}

func (g *segment) appendText(b []byte) {
	g.buf = binary.AppendUvarint(g.buf, uint64(len(b)))
	g.buf = append(g.buf, b...)
}

// appendPieces appends a payload over blobBytes in pieces.
func (g *segment) appendPieces(p []byte) {
	g.cuts = valueCuts(bufferText(p), g.cuts[:0])
	left := len(p)
	for _, c := range g.cuts {
		left -= c.hi - c.lo
	}
	if left > blobBytes {
		g.cuts = append(g.cuts[:0], cut{0, len(p)})
	}
	g.buf = append(g.buf, payloadPieces)
	g.buf = binary.AppendUvarint(g.buf, uint64(len(g.cuts)))
	prev := 0
	for _, c := range g.cuts {
		g.appendText(p[prev:c.lo])
		sum := sha256.Sum256(p[c.lo:c.hi])
		g.buf = append(g.buf, sum[:]...)
		g.blobs = append(g.blobs, blobPiece{hash: hex.EncodeToString(sum[:]), data: p[c.lo:c.hi]})
		prev = c.hi
	}
	g.appendText(p[prev:])
}

// decodedEvent is an event read from a segment. A payload kept in pieces
// has them in pieces, the texts and the hashes (hex) of the pieces kept in
// blobs in turn, for the reader to join into Payload.
type decodedEvent struct {
	StoredEvent
	pieces []string
}

var errSegment = errors.New("segment is cut short")

// decodeSegment appends the events of one segment's BLOB to list. Their
// payloads are slices of data, which the caller owns.
func decodeSegment(data []byte, list []decodedEvent) ([]decodedEvent, error) {
	if len(data) == 0 || data[0] != segmentFormat {
		return list, fmt.Errorf("segment of an unknown format (%d bytes); a newer stepwise wrote it", len(data))
	}
	d := data[1:]
	uvarint := func() uint64 {
		v, n := binary.Uvarint(d)
		if n <= 0 {
			d = nil
			return 0
		}
		d = d[n:]
		return v
	}
	bytes := func() []byte {
		n := uvarint()
		if n > uint64(len(d)) {
			d = nil
			return nil
		}
		b := d[:n:n]
		d = d[n:]
		return b
	}
	for len(d) > 0 {
		var e decodedEvent
		e.Seq = uvarint()
		t, n := binary.Varint(d)
		if n <= 0 {
			return list, errSegment
		}
		d = d[n:]
		if t != 0 {
			e.Time = time.Unix(0, t)
		}
		e.Kind = engine.EventKind(bytes())
		e.Path = string(bytes())
		if len(d) == 0 {
			return list, errSegment
		}
		tag := d[0]
		d = d[1:]
		switch tag {
		case payloadNone:
		case payloadInline:
			e.Payload = bytes()
		case payloadPieces:
			n := uvarint()
			if n > uint64(len(d))/32 {
				return list, errSegment
			}
			e.pieces = make([]string, 0, 2*n+1)
			e.pieces = append(e.pieces, string(bytes()))
			for range n {
				if len(d) < 32 {
					return list, errSegment
				}
				e.pieces = append(e.pieces, hex.EncodeToString(d[:32]))
				d = d[32:]
				e.pieces = append(e.pieces, string(bytes()))
			}
		default:
			return list, fmt.Errorf("segment event %d has a payload of an unknown kind (%d)", e.Seq, tag)
		}
		if d == nil {
			return list, errSegment
		}
		list = append(list, e)
	}
	return list, nil
}
