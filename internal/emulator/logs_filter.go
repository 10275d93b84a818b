package emulator

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// maxFilterPatternLength is AWS's limit of FilterLogEvents' filterPattern,
// in characters.
const maxFilterPatternLength = 1024

// filterPattern is a filter pattern of FilterLogEvents, of one of the two
// kinds the emulator supports. A JSON pattern ({ $.x = ... }) is a
// jsonPattern. A term pattern is space-separated terms, a term a word or a
// "quoted phrase", matched case-sensitively anywhere in the message:
// every plain term must appear; of the terms marked ?, at least one; no
// term marked - may appear. Space-delimited ([...]) and
// regular-expression (%...%) patterns are refused.
type filterPattern struct {
	all, any, none []string
	json           *jsonPattern
}

// parseFilterPattern parses a term or JSON filter pattern, of at most
// maxFilterPatternLength characters.
func parseFilterPattern(pattern string) (filterPattern, error) {
	var p filterPattern
	if n := utf8.RuneCountInString(pattern); n > maxFilterPatternLength {
		return p, invalidParameter(ServiceLogs, "1 validation error detected: Value at 'filterPattern' failed to satisfy constraint: Member must have length less than or equal to %d (this one has %d characters): shorten the pattern.", maxFilterPatternLength, n)
	}
	rest := strings.TrimSpace(pattern)
	if isJSONPattern(rest) {
		var err error
		p.json, err = parseJSONPattern(rest)
		return p, err
	}
	if strings.HasPrefix(rest, "[") || strings.HasPrefix(rest, "%") {
		return p, invalidParameter(ServiceLogs, "Invalid filter pattern: the emulator supports term patterns (words, \"quoted phrases\", ?any, -none) and JSON patterns ({ $.field = value }), not %q.", pattern)
	}
	for rest != "" {
		var kind byte
		if rest[0] == '?' || rest[0] == '-' {
			kind, rest = rest[0], rest[1:]
		}
		var term string
		if strings.HasPrefix(rest, `"`) {
			end := strings.Index(rest[1:], `"`)
			if end < 0 {
				return p, invalidParameter(ServiceLogs, "Invalid filter pattern: unterminated quote in %q.", pattern)
			}
			term, rest = rest[1:end+1], rest[end+2:]
		} else {
			end := strings.IndexAny(rest, " \t")
			if end < 0 {
				end = len(rest)
			}
			term, rest = rest[:end], rest[end:]
		}
		rest = strings.TrimSpace(rest)
		if term == "" {
			continue
		}
		switch kind {
		case '?':
			p.any = append(p.any, term)
		case '-':
			p.none = append(p.none, term)
		default:
			p.all = append(p.all, term)
		}
	}
	return p, nil
}

// matches reports whether a message matches the pattern.
func (p filterPattern) matches(message string) bool {
	if p.json != nil {
		return p.json.matches(message)
	}
	contains := func(term string) bool { return strings.Contains(message, term) }
	if slices.ContainsFunc(p.none, contains) {
		return false
	}
	for _, term := range p.all {
		if !contains(term) {
			return false
		}
	}
	return len(p.any) == 0 || slices.ContainsFunc(p.any, contains)
}

type filterLogEventsInput struct {
	groupRef
	LogStreamNames      []string `json:"logStreamNames"`
	LogStreamNamePrefix string   `json:"logStreamNamePrefix"`
	StartTime           *int64   `json:"startTime"`
	EndTime             *int64   `json:"endTime"`
	FilterPattern       string   `json:"filterPattern"`
	NextToken           string   `json:"nextToken"`
	Limit               *int     `json:"limit"`
}

type filteredLogEvent struct {
	LogStreamName string `json:"logStreamName"`
	Timestamp     int64  `json:"timestamp"`
	Message       string `json:"message"`
	IngestionTime int64  `json:"ingestionTime"`
	EventID       string `json:"eventId"`
	key           eventKey
}

// logsFilterLogEvents answers FilterLogEvents: the matching events of the
// chosen streams of a group, by timestamp, a page at a time; the next
// token is the key of the last event returned.
func (s *Server) logsFilterLogEvents(c *call) (any, error) {
	var in filterLogEventsInput
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	group, err := in.name()
	if err != nil {
		return nil, err
	}
	if len(in.LogStreamNames) > 0 && in.LogStreamNamePrefix != "" {
		return nil, invalidParameter(ServiceLogs, "logStreamNames and logStreamNamePrefix are mutually exclusive parameters.")
	}
	limit, err := pageLimit(in.Limit, logsMaxFilterLimit)
	if err != nil {
		return nil, err
	}
	pattern, err := parseFilterPattern(in.FilterPattern)
	if err != nil {
		return nil, err
	}
	var after eventKey
	if in.NextToken != "" {
		var ok bool
		if after, ok = parseEventKey(in.NextToken); !ok {
			return nil, invalidParameter(ServiceLogs, "The specified nextToken is invalid.")
		}
	}
	if err := c.enter(group); err != nil {
		return nil, err
	}
	s.logs.mu.Lock()
	defer s.logs.mu.Unlock()
	g, err := s.logGroup(c, group, false)
	if err != nil {
		return nil, err
	}
	g.trim(s.now())
	type searched struct {
		LogStreamName      string `json:"logStreamName"`
		SearchedCompletely bool   `json:"searchedCompletely"`
	}
	out := struct {
		Events             []filteredLogEvent `json:"events"`
		SearchedLogStreams []searched         `json:"searchedLogStreams"`
		NextToken          string             `json:"nextToken,omitempty"`
	}{Events: []filteredLogEvent{}, SearchedLogStreams: []searched{}}
	for name, ls := range g.streams {
		if (len(in.LogStreamNames) > 0 && !slices.Contains(in.LogStreamNames, name)) || !strings.HasPrefix(name, in.LogStreamNamePrefix) {
			continue
		}
		out.SearchedLogStreams = append(out.SearchedLogStreams, searched{LogStreamName: name, SearchedCompletely: true})
		for _, e := range ls.events {
			if (in.StartTime != nil && e.Timestamp < *in.StartTime) || (in.EndTime != nil && e.Timestamp > *in.EndTime) ||
				(in.NextToken != "" && !after.less(e.key())) || !pattern.matches(e.Message) {
				continue
			}
			out.Events = append(out.Events, filteredLogEvent{LogStreamName: name, Timestamp: e.Timestamp, Message: e.Message, IngestionTime: e.IngestionTime, EventID: e.EventID, key: e.key()})
		}
	}
	slices.SortFunc(out.SearchedLogStreams, func(a, b searched) int { return strings.Compare(a.LogStreamName, b.LogStreamName) })
	slices.SortFunc(out.Events, func(a, b filteredLogEvent) int {
		if a.key.less(b.key) {
			return -1
		}
		if b.key.less(a.key) {
			return 1
		}
		return 0
	})
	if len(out.Events) > limit {
		out.Events = out.Events[:limit]
		out.NextToken = out.Events[limit-1].key.String()
	}
	return out, nil
}
