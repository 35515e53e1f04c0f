package yamlpos

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// plainTag is the tag yaml.v3 gives a plain scalar (its resolve function,
// decode-free): what the text reads as, null, a boolean, a number, a
// timestamp, a merge key or a string. It follows yaml.v3 step by step,
// YAML 1.1 leftovers included (0777 is an octal integer), so that the
// fast reader's tree is yaml.v3's.
func plainTag(value string) Tag {
	// The words yaml.v3 looks up by their text, in a switch, which the
	// compiler sorts by length and bytes: a map lookup hashed every plain
	// scalar of a plan, most of them ids and names that are none of these.
	switch value {
	case "true", "True", "TRUE", "false", "False", "FALSE":
		return BoolTag
	case "", "~", "null", "Null", "NULL":
		return NullTag
	case ".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF":
		return FloatTag
	case "<<":
		return MergeTag
	}
	switch c := value[0]; {
	case c == '.':
		if _, err := strconv.ParseFloat(value, 64); err == nil {
			return FloatTag
		}
	case c == '+' || c == '-' || c >= '0' && c <= '9':
		if isTimestamp(value) {
			return TimestampTag
		}
		plain := strings.ReplaceAll(value, "_", "")
		if _, err := strconv.ParseInt(plain, 0, 64); err == nil {
			return IntTag
		}
		if _, err := strconv.ParseUint(plain, 0, 64); err == nil {
			return IntTag
		}
		if yamlFloat.MatchString(plain) {
			if _, err := strconv.ParseFloat(plain, 64); err == nil {
				return FloatTag
			}
		}
		switch {
		case strings.HasPrefix(plain, "0b"):
			if isInt(plain[2:], 2) {
				return IntTag
			}
		case strings.HasPrefix(plain, "-0b"):
			if _, err := strconv.ParseInt("-"+plain[3:], 2, 64); err == nil {
				return IntTag
			}
		case strings.HasPrefix(plain, "0o"):
			if isInt(plain[2:], 8) {
				return IntTag
			}
		case strings.HasPrefix(plain, "-0o"):
			if _, err := strconv.ParseInt("-"+plain[3:], 8, 64); err == nil {
				return IntTag
			}
		}
	}
	return StrTag
}

var yamlFloat = regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)

// isInt says whether s is a whole number in base, signed or not, of 64
// bits.
func isInt(s string, base int) bool {
	if _, err := strconv.ParseInt(s, base, 64); err == nil {
		return true
	}
	_, err := strconv.ParseUint(s, base, 64)
	return err == nil
}

// timestampLayouts are the timestamp forms yaml.v3 reads.
var timestampLayouts = []string{
	"2006-1-2T15:4:5.999999999Z07:00",
	"2006-1-2t15:4:5.999999999Z07:00",
	"2006-1-2 15:4:5.999999999",
	"2006-1-2",
}

// isTimestamp says whether yaml.v3 reads s as a timestamp: four digits and
// a '-', then one of timestampLayouts.
func isTimestamp(s string) bool {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i != 4 || i == len(s) || s[i] != '-' {
		return false
	}
	for _, layout := range timestampLayouts {
		if _, err := time.Parse(layout, s); err == nil {
			return true
		}
	}
	return false
}
