package store

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/bits"
	"time"
	"unsafe"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/record"
)

// A segment is one row of segments: consecutive events of one run, as many
// as a writer's transaction commits up to segmentEvents or segmentBytes,
// encoded into one BLOB. Writing a run's events as a few large rows instead
// of a row per event (or per step) spares SQLite's per-row cost (binding,
// boxing, a B-tree insert), which was most of what recording a large map
// cost; reading a run decodes its segments and builds its record in Go.
//
// The BLOB is segmentFormat, then each event:
//
//   - a head byte: the kind's code in segmentKinds (headKind bits; 0 for
//     a kind given as a text), whether the time is known (headTime), and
//     how the payload is kept (headPayload bits: payloadNone,
//     payloadInline, payloadPieces, payloadShared);
//   - its seq, less the seq of the event before it in the segment (0 for
//     the first), as a uvarint;
//   - when known, its time in Unix nanoseconds, less the last known time
//     before it in the segment (0 for the first), as a varint;
//   - its kind as a text, when it has no code;
//   - its path: how many bytes it shares with the path of the event before
//     it (uvarint), then the rest as a text;
//   - its payload: for payloadInline the JSON as a text; for payloadPieces
//     the number n of pieces kept in blobs (uvarint) and the JSON in 2n+1
//     pieces: a text, then n times the SHA-256 of a piece kept in blobs
//     (32 bytes) and a text; for payloadShared which of the recent
//     payloads of its kind it shares bytes with and how many it begins
//     with (uvarint: the count times sharedBack, plus how many payloads
//     of the kind back it is, 0 for the last), how many of what follows
//     them in both it ends with (uvarint), and what lies between as a
//     text. The recent payloads of a kind are those of the last
//     sharedBack events of the kind, with a code, in the segment whose
//     payload is inline or shared.
//
// A text is its length (uvarint) and its bytes. A map item's events share
// most of their path, and follow each other within microseconds, so that
// the head of one is a few bytes; and they share the head and the tail of
// their payload with the item's before them (the tool, the member names,
// the start and the end of the values), which a segment thus keeps once:
// that was 70% of what recording a large map wrote.
const segmentFormat = 1

const (
	headKind    = 0x0f
	headTime    = 0x10
	headPayload = 0x60 // payloadNone, payloadInline or payloadPieces

	payloadNone   = 0x00
	payloadInline = 0x20
	payloadPieces = 0x40
	payloadShared = 0x60
)

// segmentKinds are the kinds an event's head names by code: its index
// here, plus one. Append to the list, never reorder it: segments written
// keep their codes.
var segmentKinds = []engine.EventKind{
	engine.EventRunStart, engine.EventRunEnd, engine.EventStepStart, engine.EventStepEnd, engine.EventToolStart, engine.EventToolEnd,
	engine.EventModelCall, engine.EventModelDelta, engine.EventRepair, engine.EventGate, engine.EventAsk, engine.EventWarning, engine.EventUsage,
	engine.EventItems,
}

// kindCode is kind's code, its index in segmentKinds plus one; 0 for a
// kind with none. Scanning the short list, the kinds of steps and tool
// calls early in it, is a few times quicker than looking a kind up in a
// map, and the writer does it for every event.
func kindCode(kind engine.EventKind) byte {
	for i, k := range segmentKinds {
		if k == kind {
			return byte(i + 1)
		}
	}
	return 0
}

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
	lastTime       int64 // the last known time, Unix nanoseconds; 0 for none yet
	lastPath       string
	// recent are the recent payloads of each kind code (payloadShared).
	recent [headKind + 1]recentPayloads
	events int
	buf    []byte
	// blobs are the pieces of the last event's payload that go in blobs,
	// for the caller to store; cuts is where they lie in it.
	blobs []blobPiece
	cuts  []cut
	// hashed is the piece last hashed. It keeps the bytes it names alive,
	// so that no other piece can lie at their address meanwhile; the
	// writer clears it with each batch, whose buffers it reuses.
	hashed hashedPiece
}

// hashedPiece is a piece hashed, and where its bytes lay.
type hashedPiece struct {
	data  []byte
	piece blobPiece
	sum   [sha256.Size]byte
}

// pieceOf is data as a piece kept in blobs, and its SHA-256, which data
// that is the same bytes as the last piece's (a run's inputs, the row's
// and its run_start's piece) does not take hashing again.
func (g *segment) pieceOf(data []byte) (blobPiece, [sha256.Size]byte) {
	h := &g.hashed
	if len(data) != len(h.data) || unsafe.SliceData(data) != unsafe.SliceData(h.data) {
		h.piece, h.sum = blobOf(data)
		h.data = data
	}
	return h.piece, h.sum
}

// blobPiece is a piece of a payload kept in blobs, under its hash.
type blobPiece struct {
	hash string // SHA-256, hex
	data []byte
}

// blobOf is data as a piece kept in blobs, and its SHA-256.
func blobOf(data []byte) (blobPiece, [sha256.Size]byte) {
	sum := sha256.Sum256(data)
	return blobPiece{hash: hex.EncodeToString(sum[:]), data: data}, sum
}

// cut is a piece of a buffer, [lo, hi).
type cut struct{ lo, hi int }

func (g *segment) reset() {
	g.run, g.firstSeq, g.last, g.lastTime, g.lastPath, g.events = nil, 0, 0, 0, "", 0
	clear(g.recent[:])
	g.buf = append(g.buf[:0], segmentFormat)
}

// full reports whether the segment takes no more events.
func (g *segment) full() bool {
	return g.events >= segmentEvents || len(g.buf) >= segmentBytes
}

// blobBytes is the largest payload kept whole in its segment. A larger
// one keeps its value members over valueBlobBytes in blobs, once per
// content, or goes there whole when what is left is larger still: only a
// reader of its run reads it, segments stay small, and a value that
// several events or runs hold is stored once.
const blobBytes = 16 << 10

// appendEvent appends one event, its time (unixNanos, 0 for none) and
// its payload JSON (nil for none), and sets blobs to the pieces of the
// payload the caller is to keep in blobs. value is where the payload's
// value member lies, unknownValue when its encoder did not say
// (payloadEncoder.append).
func (g *segment) appendEvent(seq uint64, at int64, kind engine.EventKind, path string, payload []byte, value cut) {
	g.blobs = g.blobs[:0]
	if g.events == 0 {
		g.firstSeq = seq
	}
	code := kindCode(kind)
	head := code
	shared, sharedEnd, back := 0, 0, 0
	switch {
	case payload == nil:
	case len(payload) > blobBytes:
		head |= payloadPieces
	case code == 0:
		head |= payloadInline
	default:
		// The latest payload of the kind is nearly always the best to
		// share with: the ones before it are compared only when it
		// shares less than half of this one.
		recent := &g.recent[code]
		for i := range sharedBack {
			last := recent.back(i)
			if last == nil || 2*(shared+sharedEnd) >= len(payload) {
				break
			}
			begin := commonPrefix(payload, last)
			end := commonSuffix(payload[begin:], last[begin:])
			if begin+end > shared+sharedEnd {
				shared, sharedEnd, back = begin, end, i
			}
		}
		// Sharing fewer bytes than its counts take saves nothing.
		if shared+sharedEnd > 2 {
			head |= payloadShared
		} else {
			head |= payloadInline
		}
		recent.push(payload)
	}
	if at != 0 {
		head |= headTime
	}
	g.buf = append(g.buf, head)
	g.buf = binary.AppendUvarint(g.buf, seq-g.last)
	if at != 0 {
		g.buf = binary.AppendVarint(g.buf, at-g.lastTime)
		g.lastTime = at
	}
	if code == 0 {
		g.buf = appendText(g.buf, kind)
	}
	sharedPath := commonPrefix(stringBytes(path), stringBytes(g.lastPath))
	g.buf = binary.AppendUvarint(g.buf, uint64(sharedPath))
	g.buf = appendText(g.buf, path[sharedPath:])
	g.events++
	g.last, g.lastPath = seq, path
	switch head & headPayload {
	case payloadInline:
		g.buf = appendText(g.buf, payload)
	case payloadShared:
		g.buf = binary.AppendUvarint(g.buf, uint64(shared)*sharedBack+uint64(back))
		g.buf = binary.AppendUvarint(g.buf, uint64(sharedEnd))
		g.buf = appendText(g.buf, payload[shared:len(payload)-sharedEnd])
	case payloadPieces:
		g.appendPieces(payload, value)
	}
}

// sharedBack is how many payloads of its kind back a shared payload may
// name: the events of a map item whose body has a few steps are as many
// step_starts (and step_ends) apart as the body has steps.
const sharedBack = 4

// recentPayloads are the last payloads of one kind code, in a ring:
// pushing one stores it over the oldest instead of moving the others,
// each move a pointer the garbage collector is told of.
type recentPayloads struct {
	ring   [sharedBack][]byte
	latest int // where the latest is in ring
}

func (r *recentPayloads) push(p []byte) {
	r.latest = (r.latest + 1) % sharedBack
	r.ring[r.latest] = p
}

// back is the payload n payloads before the latest (0 for it), nil for
// none.
func (r *recentPayloads) back(n int) []byte {
	return r.ring[(r.latest-n+sharedBack)%sharedBack]
}

// commonPrefix is the length of the longest prefix a and b share,
// compared a word at a time: a map item's payloads share tens of bytes
// with the item's before them.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for ; i+8 <= n; i += 8 {
		if x := binary.LittleEndian.Uint64(a[i:]) ^ binary.LittleEndian.Uint64(b[i:]); x != 0 {
			return i + bits.TrailingZeros64(x)/8
		}
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// commonSuffix is the length of the longest suffix a and b share.
func commonSuffix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for ; i+8 <= n; i += 8 {
		if x := binary.LittleEndian.Uint64(a[len(a)-i-8:]) ^ binary.LittleEndian.Uint64(b[len(b)-i-8:]); x != 0 {
			return i + bits.LeadingZeros64(x)/8
		}
	}
	for i < n && a[len(a)-1-i] == b[len(b)-1-i] {
		i++
	}
	return i
}

// stringBytes is a string's bytes, without a copy, for reading only.
func stringBytes(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// appendText appends a text: its length and its bytes.
func appendText[T ~string | ~[]byte](buf []byte, b T) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(b)))
	return append(buf, b...)
}

// appendPieces appends a payload over blobBytes in pieces; value is where
// its value member lies, if known.
func (g *segment) appendPieces(p []byte, value cut) {
	switch {
	case value == unknownValue:
		g.cuts = valueCuts(bufferText(p), g.cuts[:0])
	case value.hi-value.lo > valueBlobBytes:
		g.cuts = append(g.cuts[:0], value)
	default:
		g.cuts = g.cuts[:0]
	}
	left := len(p)
	for _, c := range g.cuts {
		left -= c.hi - c.lo
	}
	if left > blobBytes {
		g.cuts = append(g.cuts[:0], cut{0, len(p)})
	}
	g.buf = binary.AppendUvarint(g.buf, uint64(len(g.cuts)))
	prev := 0
	for _, c := range g.cuts {
		g.buf = appendText(g.buf, p[prev:c.lo])
		piece, sum := g.pieceOf(p[c.lo:c.hi])
		g.buf = append(g.buf, sum[:]...)
		g.blobs = append(g.blobs, piece)
		prev = c.hi
	}
	g.buf = appendText(g.buf, p[prev:])
}

// piecedPayload is the payload of list[event], as decodeSegment found it
// kept in pieces: the texts and the hashes (hex) of the pieces kept in
// blobs in turn, for the reader to join into the event's Payload.
type piecedPayload struct {
	event  int
	pieces []string
}

var errSegment = errors.New("segment is cut short")

// segmentReader reads the fields of a segment's events; a field past the
// end, or of a bad length, leaves it failed.
type segmentReader struct {
	d      []byte
	failed bool
}

func (r *segmentReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.d)
	if n <= 0 {
		r.failed, r.d = true, nil
		return 0
	}
	r.d = r.d[n:]
	return v
}

func (r *segmentReader) varint() int64 {
	v, n := binary.Varint(r.d)
	if n <= 0 {
		r.failed, r.d = true, nil
		return 0
	}
	r.d = r.d[n:]
	return v
}

func (r *segmentReader) text() []byte {
	n := r.uvarint()
	if n > uint64(len(r.d)) {
		r.failed, r.d = true, nil
		return nil
	}
	b := r.d[:n:n]
	r.d = r.d[n:]
	return b
}

func (r *segmentReader) hash() string {
	if len(r.d) < sha256.Size {
		r.failed, r.d = true, nil
		return ""
	}
	h := hex.EncodeToString(r.d[:sha256.Size])
	r.d = r.d[sha256.Size:]
	return h
}

// decodeSegment appends the events of one segment's BLOB to list, and
// their payloads kept in pieces to pieced. The payloads are slices of
// data, which the caller owns.
func decodeSegment(data []byte, list []record.StoredEvent, pieced []piecedPayload) ([]record.StoredEvent, []piecedPayload, error) {
	if len(data) == 0 || data[0] != segmentFormat {
		return list, pieced, fmt.Errorf("segment of an unknown format (%d bytes); a newer stepwise wrote it", len(data))
	}
	r := segmentReader{d: data[1:]}
	var seq uint64
	var at int64
	var path string
	var recent [headKind + 1]recentPayloads
	// joined holds the payloads shared ones are joined into, a chunk at a
	// time, so that a segment's take an allocation or a few.
	var joined []byte
	for len(r.d) > 0 {
		head := r.d[0]
		r.d = r.d[1:]
		var e record.StoredEvent
		seq += r.uvarint()
		e.Seq = seq
		if head&headTime != 0 {
			at += r.varint()
			e.Time = time.Unix(0, at)
		}
		code := int(head & headKind)
		if code == 0 {
			e.Kind = engine.EventKind(r.text())
		} else if code <= len(segmentKinds) {
			e.Kind = segmentKinds[code-1]
		} else {
			return list, pieced, fmt.Errorf("segment event %d has a kind of an unknown code (%d); a newer stepwise wrote it", seq, code)
		}
		shared := r.uvarint()
		if shared > uint64(len(path)) {
			return list, pieced, errSegment
		}
		path = path[:shared] + string(r.text())
		e.Path = path
		switch head & headPayload {
		case payloadNone:
		case payloadInline:
			e.Payload = r.text()
			recent[code].push(e.Payload)
		case payloadShared:
			which, sharedEnd := r.uvarint(), r.uvarint()
			shared, last := which/sharedBack, recent[code].back(int(which%sharedBack))
			if code == 0 || last == nil || shared > uint64(len(last)) || sharedEnd > uint64(len(last))-shared {
				return list, pieced, errSegment
			}
			middle := r.text()
			n := len(middle) + int(shared+sharedEnd)
			if cap(joined)-len(joined) < n {
				joined = make([]byte, 0, max(n, 64<<10))
			}
			start := len(joined)
			joined = append(append(append(joined, last[:shared]...), middle...), last[uint64(len(last))-sharedEnd:]...)
			e.Payload = joined[start:len(joined):len(joined)]
			recent[code].push(e.Payload)
		case payloadPieces:
			n := r.uvarint()
			if n > uint64(len(r.d))/sha256.Size {
				return list, pieced, errSegment
			}
			p := piecedPayload{event: len(list), pieces: make([]string, 0, 2*n+1)}
			p.pieces = append(p.pieces, string(r.text()))
			for range n {
				p.pieces = append(p.pieces, r.hash(), string(r.text()))
			}
			pieced = append(pieced, p)
		default:
			return list, pieced, fmt.Errorf("segment event %d has a payload of an unknown kind (%#x); a newer stepwise wrote it", seq, head&headPayload)
		}
		if r.failed {
			return list, pieced, errSegment
		}
		list = append(list, e)
	}
	return list, pieced, nil
}
