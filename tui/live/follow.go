package live

// Newest returns the path of the row where the run is: while anything
// runs, the newest running row, from the top down through the running
// child that started last to a node with no running child; once nothing
// runs, the row started last, found the same way. A collapsed node stands
// for what runs in it. The walk reads the subtrees' running counts, so it
// costs the children of the nodes on its way, not the tree. ok is false
// before anything starts.
func (t *Tree) Newest() (path string, ok bool) {
	running := t.root.running > 0
	n := &t.root
	for n == &t.root || !n.collapsed {
		var next *node
		for _, c := range n.children {
			candidate := c.running > 0 || !running && !c.start.IsZero()
			if candidate && (next == nil || !c.start.Before(next.start)) {
				next = c
			}
		}
		if next == nil {
			break
		}
		n = next
	}
	if n == &t.root {
		return "", false
	}
	return n.path, true
}

// Walk calls visit with the row of every node, in the tree's order,
// collapsed subtrees included, until visit returns false. The rows'
// Rails are not worked out: a caller that draws a subset of them works
// out its own.
func (t *Tree) Walk(visit func(Row) bool) {
	t.walk(t.root.children, 0, visit)
}

func (t *Tree) walk(nodes []*node, depth int, visit func(Row) bool) bool {
	for _, n := range nodes {
		if !visit(t.row(n, depth, 0)) || !t.walk(n.children, depth+1, visit) {
			return false
		}
	}
	return true
}
