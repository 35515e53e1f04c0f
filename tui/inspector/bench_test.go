package inspector_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/chat"
	"github.com/stepwise-dev/stepwise/tui/live"
)

// streamingRound is a tree in which round E1/agent.1 has streamed size
// bytes of prose, in deltas of a few words, and is still streaming. The
// events are made by hand: a scripted reply would time the provider.
func streamingRound(size int) (*live.Tree, func() engine.Event) {
	t0 := time.Unix(1_700_000_000, 0)
	seq := uint64(0)
	ev := func(path string, kind engine.EventKind, payload any) engine.Event {
		seq++
		return engine.Event{Seq: seq, Time: t0.Add(time.Duration(seq) * time.Millisecond), RunID: "r", Path: path, Kind: kind, Payload: payload}
	}
	tr := live.New(nil)
	tr.Apply(ev("", engine.EventRunStart, engine.RunStarted{Plan: "bench"}))
	tr.Apply(ev("E1", engine.EventStepStart, engine.StepStarted{Tool: "agent", Input: map[string]any{"prompt": "Summarise the issues."}}))
	words := strings.Fields("the tracker lists forty open issues, most of them about the importer; three are duplicates and one is a question.\n")
	i := 0
	delta := func() engine.Event {
		w := words[i%len(words)] + " "
		if i%97 == 96 {
			w += "\n\n"
		}
		i++
		return ev("E1/agent.1", engine.EventModelDelta, chat.Delta{Text: w})
	}
	for streamed := 0; streamed < size; {
		e := delta()
		tr.Apply(e)
		streamed += len(e.Payload.(chat.Delta).Text)
	}
	return tr, delta
}

// BenchmarkStreamFrame is one frame of a round streaming in: one more
// delta applied, the node read, shown and drawn, with the cursor on the
// end of a 20 KB reply that it follows. The reply grows by a word a
// frame; it is started again at 20 KB every 2,000 frames so that every
// frame times the same size.
func BenchmarkStreamFrame(b *testing.B) {
	for _, size := range [][2]int{{120, 40}, {40, 20}} {
		b.Run(strconv.Itoa(size[0])+"x"+strconv.Itoa(size[1]), func(b *testing.B) {
			m := newModel(size[0], size[1], true)
			tr, delta := streamingRound(20_000)
			n, _ := tr.Node("E1/agent.1")
			m.Show(n, nil)
			if m.Cursor() != m.Len()-1 || m.Len() < 100 {
				b.Fatalf("cursor %d of %d lines: not following a long reply", m.Cursor(), m.Len())
			}
			frames := 0
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if frames++; frames%2000 == 0 {
					b.StopTimer()
					tr, delta = streamingRound(20_000)
					b.StartTimer()
				}
				tr.Apply(delta())
				n, _ := tr.Node("E1/agent.1")
				m.Show(n, nil)
				_ = m.View()
			}
		})
	}
}

// BenchmarkShowUnchanged is Show with nothing new at the node, as every
// batch of events elsewhere in the run calls it.
func BenchmarkShowUnchanged(b *testing.B) {
	m := newModel(120, 40, true)
	tr, _ := streamingRound(20_000)
	n, _ := tr.Node("E1/agent.1")
	m.Show(n, nil)
	b.ReportAllocs()
	for b.Loop() {
		m.Show(n, nil)
	}
}
