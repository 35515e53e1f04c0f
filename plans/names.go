package plans

import "strings"

// The names a plan writes are checked byte by byte, not with regular
// expressions: Load checks one or more per step, and a match through the
// regexp package costs more than the rest of checking the name.

// wordByte reports whether c is an ASCII letter, digit or '_'.
func wordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

// identifierByte reports whether c may appear in an identifier: a word
// byte or '-'.
func identifierByte(c byte) bool { return wordByte(c) || c == '-' }

// toolNameByte reports whether c may appear in a tool's name, after its
// namespace: an identifier byte or '.'.
func toolNameByte(c byte) bool { return identifierByte(c) || c == '.' }

// toolPatternByte reports whether c may appear in an agent's tools
// pattern: a tool name byte or the wildcard '*'.
func toolPatternByte(c byte) bool { return toolNameByte(c) || c == '*' }

// madeOf reports whether s is not empty and every byte of it is one that
// allowed allows.
func madeOf(s string, allowed func(byte) bool) bool {
	for i := range len(s) {
		if !allowed(s[i]) {
			return false
		}
	}
	return s != ""
}

// validStepID reports whether s is a step id: word bytes, not starting
// with a digit.
func validStepID(s string) bool {
	return madeOf(s, wordByte) && !('0' <= s[0] && s[0] <= '9')
}

// validToolName reports whether s is a namespaced tool name: a namespace
// of identifier bytes, "__", and a name of tool name bytes, neither empty.
// The namespace ends at the first "__" after its first byte; a later one
// would leave a namespace holding the '.' or the end that stopped the
// first.
func validToolName(s string) bool {
	if !madeOf(s, toolNameByte) || len(s) < 4 {
		return false
	}
	sep := strings.Index(s[1:], "__") + 1
	return sep > 0 && sep+2 < len(s) && !strings.Contains(s[:sep], ".")
}
