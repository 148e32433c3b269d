package memstored

import (
	"regexp"
	"sort"
	"strings"
	"unicode"
)

// Text search over lines, the modes of Tkrzw's SearchTextFileModal (used
// by File.Search).

func splitLines(text string) []string {
	if text == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(text, "\n"), "\n")
}

func isWordByte(b byte) bool {
	r := rune(b)
	return b >= 0x80 || unicode.IsLetter(r) || unicode.IsDigit(r)
}

// containsWord tells whether word occurs in text with no letter or digit
// right before or after it.
func containsWord(text, word string) bool {
	for from := 0; from <= len(text); {
		i := strings.Index(text[from:], word)
		if i < 0 {
			return false
		}
		i += from
		end := i + len(word)
		if (i == 0 || !isWordByte(text[i-1])) && (end == len(text) || !isWordByte(text[end])) {
			return true
		}
		from = i + 1
	}
	return false
}

// lineMatcher returns the test of a line for a mode (other than the edit
// distance ones), or (nil, the failure) for an unknown mode or a bad regex.
func lineMatcher(mode, pattern string) (func(string) bool, *Status) {
	batch := strings.HasSuffix(mode, "*")
	base := strings.TrimSuffix(mode, "*")
	var one func(line, p string) bool
	lower := func(s string) string { return strings.ToLower(s) }
	switch base {
	case "contain":
		one = strings.Contains
	case "containcase":
		one = func(line, p string) bool { return strings.Contains(lower(line), lower(p)) }
	case "containword":
		one = containsWord
	case "containcaseword":
		one = func(line, p string) bool { return containsWord(lower(line), lower(p)) }
	case "begin", "end", "regex":
		if batch {
			return nil, NewStatus2(StatusInvalidArgumentError, "unknown mode")
		}
		switch base {
		case "begin":
			return func(line string) bool { return strings.HasPrefix(line, pattern) }, nil
		case "end":
			return func(line string) bool { return strings.HasSuffix(line, pattern) }, nil
		}
		re, err := regexp.Compile(pattern)
		if err != nil {
			return nil, NewStatus2(StatusInvalidArgumentError, "invalid regex: "+err.Error())
		}
		return re.MatchString, nil
	default:
		return nil, NewStatus2(StatusInvalidArgumentError, "unknown mode")
	}
	if !batch {
		return func(line string) bool { return one(line, pattern) }, nil
	}
	patterns := []string{}
	for _, p := range strings.Split(pattern, "\n") {
		if p != "" {
			patterns = append(patterns, p)
		}
	}
	return func(line string) bool {
		for _, p := range patterns {
			if one(line, p) {
				return true
			}
		}
		return false
	}, nil
}

// nearest returns up to capacity lines (0: all) by ascending edit distance
// to pattern, ties in byte order.
func nearest(lines []string, pattern string, capacity int, utf bool) []string {
	type scored struct {
		dist int
		line string
	}
	all := make([]scored, len(lines))
	for i, l := range lines {
		all[i] = scored{EditDistanceLev(pattern, l, utf), l}
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].dist != all[j].dist {
			return all[i].dist < all[j].dist
		}
		return all[i].line < all[j].line
	})
	if capacity > 0 && len(all) > capacity {
		all = all[:capacity]
	}
	out := make([]string, len(all))
	for i, s := range all {
		out[i] = s.line
	}
	return out
}

func (self *File) search(mode, pattern string, capacity int) ([]string, *Status) {
	lines, st := self.lines()
	if !st.IsOK() {
		return []string{}, st
	}
	if mode == "edit" || mode == "editbin" {
		return nearest(lines, pattern, capacity, mode == "edit"), st
	}
	match, bad := lineMatcher(mode, pattern)
	if bad != nil {
		return []string{}, bad
	}
	out := []string{}
	for _, l := range lines {
		if capacity > 0 && len(out) >= capacity {
			break
		}
		if match(l) {
			out = append(out, l)
		}
	}
	return out, NewStatus()
}
