package tui

import (
	"testing"
)

// BenchmarkViewLargePlan renders one frame of the 2,000-step plan: the
// tree scrolled to the middle, the detail of the selected step, the
// problems pane, at a large and at the smallest supported size.
func BenchmarkViewLargePlan(b *testing.B) {
	doc := loadDocument(b, largeFile)
	for _, size := range []struct {
		name string
		w, h int
	}{{"200x60", 200, 60}, {"80x24", 80, 24}} {
		b.Run(size.name, func(b *testing.B) {
			m, _ := drive(b, newTestModel(doc), size.w, size.h, keyPgDown)
			m.tree.Select(len(m.tree.Rows()) / 2)
			m.sync()
			b.ReportAllocs()
			for b.Loop() {
				_ = m.View()
			}
		})
	}
}

// BenchmarkMoveLargePlan is one j press in the 2,000-step plan: moving the
// selection and laying out the new step's detail.
func BenchmarkMoveLargePlan(b *testing.B) {
	m, _ := drive(b, newTestModel(loadDocument(b, largeFile)), 200, 60)
	b.ReportAllocs()
	for b.Loop() {
		next, _ := m.Update(keyDown)
		m = next.(model)
		if m.tree.Selected().Index == len(m.tree.Rows())-1 {
			m.tree.Select(0)
		}
	}
}
