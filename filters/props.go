package filters

// PropertiesTagKey is the build-properties key whose value tags a kernel.
const PropertiesTagKey = "occa_tools_tag"

// PropertiesTags returns the tags named by the top-level key occa_tools_tag
// of an OCCA properties text: its value is a string or an array of strings
// (other elements are ignored). OCCA properties are relaxed JSON: keys may be
// unquoted, strings may use single or double quotes, comments (// and /* */)
// and trailing commas are allowed, and the outer braces may be left out.
// Keys nested in inner objects are not looked at. The scanner is tolerant:
// malformed text gives the tags it could read, never a panic.
func PropertiesTags(props string) []string {
	s := &propScanner{s: props}
	s.space()
	if s.peek() == '{' {
		s.i++
	}
	var tags []string
	for !s.eof() {
		s.space()
		switch s.peek() {
		case '}', ',', ':', ']':
			s.i++ // end of object, separators, stray closers
			continue
		}
		if s.eof() {
			break
		}
		start := s.i
		key, ok := s.key()
		if !ok {
			if s.i == start {
				s.i++
			}
			continue
		}
		s.space()
		if s.peek() != ':' {
			continue // a key without a value
		}
		s.i++
		s.space()
		if key == PropertiesTagKey {
			tags = append(tags, s.tagValue()...)
		} else {
			s.skipValue()
		}
	}
	return tags
}

type propScanner struct {
	s string
	i int
}

func (s *propScanner) eof() bool { return s.i >= len(s.s) }

func (s *propScanner) peek() byte {
	if s.i < len(s.s) {
		return s.s[s.i]
	}
	return 0
}

// space skips whitespace and comments.
func (s *propScanner) space() {
	for !s.eof() {
		c := s.peek()
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			s.i++
		case c == '/' && s.i+1 < len(s.s) && s.s[s.i+1] == '/':
			for !s.eof() && s.peek() != '\n' {
				s.i++
			}
		case c == '/' && s.i+1 < len(s.s) && s.s[s.i+1] == '*':
			s.i += 2
			for !s.eof() && !(s.peek() == '*' && s.i+1 < len(s.s) && s.s[s.i+1] == '/') {
				s.i++
			}
			s.i += 2
			if s.i > len(s.s) {
				s.i = len(s.s)
			}
		default:
			return
		}
	}
}

// key reads a quoted string or a bare word.
func (s *propScanner) key() (string, bool) {
	switch c := s.peek(); {
	case c == '"' || c == '\'':
		return s.str(), true
	case isWord(c):
		return s.word(), true
	}
	return "", false
}

func isWord(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '_' || c == '-' || c == '.' || c == '+' || c == '$' || c >= 0x80
}

func (s *propScanner) word() string {
	start := s.i
	for !s.eof() && isWord(s.peek()) {
		s.i++
	}
	return s.s[start:s.i]
}

// str reads a string quoted with the quote at s.i and returns its contents
// with the common escapes undone.
func (s *propScanner) str() string {
	q := s.peek()
	s.i++
	var b []byte
	for !s.eof() {
		c := s.peek()
		s.i++
		switch {
		case c == q:
			return string(b)
		case c == '\\' && !s.eof():
			e := s.peek()
			s.i++
			switch e {
			case 'n':
				b = append(b, '\n')
			case 't':
				b = append(b, '\t')
			default:
				b = append(b, e)
			}
		default:
			b = append(b, c)
		}
	}
	return string(b)
}

// tagValue reads the value of occa_tools_tag: a string, a bare word, or an
// array whose string elements are tags.
func (s *propScanner) tagValue() []string {
	switch c := s.peek(); {
	case c == '"' || c == '\'':
		if t := s.str(); t != "" {
			return []string{t}
		}
		return nil
	case c == '[':
		s.i++
		var tags []string
		for !s.eof() {
			s.space()
			switch c := s.peek(); {
			case c == ']':
				s.i++
				return tags
			case c == ',':
				s.i++
			case c == '"' || c == '\'':
				if t := s.str(); t != "" {
					tags = append(tags, t)
				}
			default:
				start := s.i
				s.skipValue()
				if s.i == start {
					s.i++
				}
			}
		}
		return tags
	case isWord(c):
		s.word() // true, 1, null: not a tag
		return nil
	}
	s.skipValue()
	return nil
}

// skipValue skips one value: a string, word, object or array (nested to
// any depth). Anything else is left for the caller.
func (s *propScanner) skipValue() {
	c := s.peek()
	switch {
	case c == '"' || c == '\'':
		s.str()
	case isWord(c):
		s.word()
	case c == '{' || c == '[':
		level := 0
		for !s.eof() {
			s.space()
			switch c := s.peek(); {
			case c == '{' || c == '[':
				level++
				s.i++
			case c == '}' || c == ']':
				level--
				s.i++
				if level == 0 {
					return
				}
			case c == '"' || c == '\'':
				s.str()
			default:
				s.i++
			}
		}
	}
}
