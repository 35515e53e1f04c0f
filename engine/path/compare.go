package path

import "strings"

// Compare orders two paths as a person counts: a run of digits in one is
// compared with the run in the same place of the other as a number, so
// that do.2 comes before do.10 and agent.9 before agent.10; the rest is
// compared as text. It returns -1, 0 or +1 as strings.Compare does.
func Compare(a, b string) int {
	for a != "" && b != "" {
		da, db := digits(a), digits(b)
		if da == 0 || db == 0 {
			if a[0] != b[0] {
				return strings.Compare(a[:1], b[:1])
			}
			a, b = a[1:], b[1:]
			continue
		}
		na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
		// Of two numbers without leading zeros, the longer is larger.
		if len(na) != len(nb) {
			return compareInts(len(na), len(nb))
		}
		if c := strings.Compare(na, nb); c != 0 {
			return c
		}
		// The same number: the one written with fewer zeros first, so
		// that the order is total.
		if da != db {
			return compareInts(da, db)
		}
		a, b = a[da:], b[db:]
	}
	return compareInts(len(a), len(b))
}

// digits is the length of the run of ASCII digits s starts with.
func digits(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

func compareInts(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
