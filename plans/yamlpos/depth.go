package yamlpos

// MaxDepth is how deeply the values of a YAML file may nest. No plan, tool
// or replies file comes near it (a step's input schema nests a few levels
// per object), while every parser slows down with nesting: yaml.v3 recurses
// once per level and goccy/go-yaml's parser, which places syntax errors,
// takes time and memory that grow with the square of the depth.
const MaxDepth = 1000

// depthScan is what scanDepth found: the deepest nesting of the text, and
// the byte offset where it first went past the limit (-1 when it never
// did).
type depthScan struct {
	deepest int
	over    int
}

// scanDepth measures how deeply the values of a YAML text nest, in one pass
// over its bytes and before any parser sees it. It follows the little of
// YAML that nesting depends on: flow brackets outside quoted scalars and
// comments, and block indentation (a line indented past the one before
// opens a level, and so does each compact "- ", "? " or ": " at a line's
// start), with block scalars' text skipped. A collection counts as a level
// and so does a scalar in it (a key too), as the parsed tree nests them.
// Where the text does not say which it is, the scan counts the deeper
// reading (a scalar right after "- " is the item itself, not a key in it),
// so it errs, by a level or two, towards depth: a parser never sees deeper
// text than limit allows.
func scanDepth(src []byte, limit int) depthScan {
	s := depthScan{over: -1}
	var (
		indents     []int // the columns of the open block levels
		flow        int   // open flow collections
		quote       byte  // the quote of a quoted scalar that runs on, or 0
		blockParent = -1  // indentation of the line a block scalar hangs from, or -1
	)
	reach := func(depth, at int) {
		if depth > s.deepest {
			s.deepest = depth
		}
		if depth > limit && s.over < 0 {
			s.over = at
		}
	}
	for start := 0; start < len(src); {
		end := start
		for end < len(src) && src[end] != '\n' {
			end++
		}
		next := end + 1
		indent := 0
		for start+indent < end && src[start+indent] == ' ' {
			indent++
		}
		p := start + indent
		blank := p == end || (src[p] == '\r' && p+1 == end)
		if blockParent >= 0 {
			if blank || indent > blockParent {
				start = next
				continue
			}
			blockParent = -1
		}
		nodeStart := true // whether p is where a value may start
		if quote == 0 && flow == 0 {
			if blank || src[p] == '#' {
				start = next
				continue
			}
			if indent == 0 && end-start >= 3 && (string(src[start:start+3]) == "---" || string(src[start:start+3]) == "...") && (end-start == 3 || src[start+3] == ' ' || src[start+3] == '\r') {
				indents = indents[:0]
				p += 3
			} else {
				for len(indents) > 0 && indents[len(indents)-1] >= indent {
					indents = indents[:len(indents)-1]
				}
				indents = append(indents, indent)
				reach(len(indents), p)
				// Compact entries ("- - x", "? a", "- key: x") open a level
				// each, at the column of what follows them.
				for p < end && (src[p] == '-' || src[p] == '?' || src[p] == ':') && (p+1 == end || src[p+1] == ' ') {
					p++
					for p < end && src[p] == ' ' {
						p++
					}
					indents = append(indents, p-start)
					reach(len(indents), p)
				}
			}
		}
		afterQuote := false // whether the last thing read closed a quoted scalar
		for ; p < end; p++ {
			c := src[p]
			if quote == '"' {
				switch c {
				case '\\':
					p++
				case '"':
					quote, afterQuote, nodeStart = 0, true, false
				}
				continue
			}
			if quote == '\'' {
				if c == '\'' {
					if p+1 < end && src[p+1] == '\'' {
						p++
						continue
					}
					quote, afterQuote, nodeStart = 0, true, false
				}
				continue
			}
			spaceAfter := p+1 == end || src[p+1] == ' ' || src[p+1] == '\r'
			switch {
			case c == ' ' || c == '\t' || c == '\r':
				continue
			case c == '#' && (p == start || src[p-1] == ' ' || src[p-1] == '\t'):
				p = end
			case nodeStart && (c == '"' || c == '\''):
				quote = c
				reach(len(indents)+flow+1, p)
			case (nodeStart || flow > 0) && (c == '[' || c == '{'):
				flow++
				reach(len(indents)+flow, p)
				nodeStart = true
			case flow > 0 && (c == ']' || c == '}'):
				flow--
				nodeStart = false
			case flow > 0 && c == ',':
				nodeStart = true
			case c == ':' && (spaceAfter || afterQuote || (flow > 0 && p+1 < end && (src[p+1] == ',' || src[p+1] == ']' || src[p+1] == '}'))):
				nodeStart = true
			case flow == 0 && nodeStart && (c == '|' || c == '>'):
				reach(len(indents)+1, p)
				blockParent = indent
				p = end
			case nodeStart && (c == '&' || c == '!'):
				for p+1 < end && src[p+1] != ' ' {
					p++
				}
			default:
				if nodeStart {
					reach(len(indents)+flow+1, p)
				}
				nodeStart = false
			}
			afterQuote = false
		}
		start = next
	}
	return s
}
