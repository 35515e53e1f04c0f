package inspector

// diffKind says whether a line is in both texts, only the first or only
// the second.
type diffKind uint8

const (
	diffSame diffKind = iota
	diffDel
	diffAdd
)

type diffOp struct {
	kind diffKind
	text string
}

// maxDiffCells bounds the table diffLines fills; past it, every line is
// taken as changed rather than spend seconds on a huge answer.
const maxDiffCells = 1 << 20

// diffLines is the line diff of a and b by longest common subsequence:
// every line of a and of b, in order, each marked kept, removed or added.
// Answers are short, so the quadratic table is cheap.
func diffLines(a, b []string) []diffOp {
	n, m := len(a), len(b)
	out := make([]diffOp, 0, n+m)
	if n*m > maxDiffCells {
		for _, l := range a {
			out = append(out, diffOp{diffDel, l})
		}
		for _, l := range b {
			out = append(out, diffOp{diffAdd, l})
		}
		return out
	}
	// lcs[i][j] is the length of the longest common subsequence of a[i:]
	// and b[j:].
	w := m + 1
	lcs := make([]int, (n+1)*w)
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i*w+j] = lcs[(i+1)*w+j+1] + 1
			} else {
				lcs[i*w+j] = max(lcs[(i+1)*w+j], lcs[i*w+j+1])
			}
		}
	}
	i, j := 0, 0
	for i < n && j < m {
		switch {
		case a[i] == b[j]:
			out = append(out, diffOp{diffSame, a[i]})
			i, j = i+1, j+1
		case lcs[(i+1)*w+j] >= lcs[i*w+j+1]:
			out = append(out, diffOp{diffDel, a[i]})
			i++
		default:
			out = append(out, diffOp{diffAdd, b[j]})
			j++
		}
	}
	for ; i < n; i++ {
		out = append(out, diffOp{diffDel, a[i]})
	}
	for ; j < m; j++ {
		out = append(out, diffOp{diffAdd, b[j]})
	}
	return out
}
