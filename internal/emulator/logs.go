package emulator

import (
	"cmp"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// logsGroupPattern is a log group name; logsARNPattern a log group ARN, as
// logGroupIdentifier takes it.
var (
	logsGroupPattern  = regexp.MustCompile(`^[.\-_/#A-Za-z0-9]{1,512}$`)
	logsStreamPattern = regexp.MustCompile(`^[^:*]{1,512}$`)
	logsARNPattern    = regexp.MustCompile(`^arn:aws[a-z-]*:logs:[a-z0-9-]+:\d{12}:log-group:([.\-_/#A-Za-z0-9]{1,512})(:\*)?$`)
)

// retentionDays are the values PutRetentionPolicy takes.
var retentionDaysValues = []int{1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653}

// LogEvent is a log event a log stream keeps.
type LogEvent struct {
	Timestamp     int64  `json:"timestamp"`
	Message       string `json:"message"`
	IngestionTime int64  `json:"ingestionTime"`
	EventID       string `json:"eventId"`
	// seq orders the events of a group put with the same timestamp.
	seq uint64
}

// logsStore holds the log groups.
type logsStore struct {
	mu     sync.Mutex
	groups map[string]*logGroup
}

func newLogsStore() *logsStore { return &logsStore{groups: map[string]*logGroup{}} }

// logGroup is a log group and its streams.
type logGroup struct {
	name          string
	arn           string // without the ":*" suffix
	created       time.Time
	retentionDays int // 0: never expire
	streams       map[string]*logStream
	seq           uint64 // of the last event put in any stream
	// storedEvents and storedBytes count the events its streams keep and
	// the size of their messages, for the server's bounds.
	storedEvents int
	storedBytes  int64
}

// logStream is a log stream and the events it keeps: events, sorted by
// timestamp and then by the order they were put, and pending, the events
// put since the last read that do not come after all of events, in the
// order they were put. A read merges pending into events (sorted), so that
// a put costs the same whatever order the timestamps come in.
type logStream struct {
	name          string
	arn           string
	created       time.Time
	events        []LogEvent
	pending       []LogEvent
	storedBytes   int64
	firstEvent    int64 // timestamps of the first and last events ever put
	lastEvent     int64
	lastIngestion int64
}

func (s *Server) logsOperations() map[string]operation {
	return map[string]operation{
		"CreateLogGroup":     s.logsCreateLogGroup,
		"DescribeLogGroups":  s.logsDescribeLogGroups,
		"PutRetentionPolicy": s.logsPutRetentionPolicy,
		"CreateLogStream":    s.logsCreateLogStream,
		"DeleteLogStream":    s.logsDeleteLogStream,
		"DescribeLogStreams": s.logsDescribeLogStreams,
		"PutLogEvents":       s.logsPutLogEvents,
		"GetLogEvents":       s.logsGetLogEvents,
		"FilterLogEvents":    s.logsFilterLogEvents,
	}
}

// groupRef is how a call names its log group: logGroupName, or
// logGroupIdentifier (a name or an ARN).
type groupRef struct {
	LogGroupName       string `json:"logGroupName"`
	LogGroupIdentifier string `json:"logGroupIdentifier"`
}

// name returns the log group's name.
func (r groupRef) name() (string, error) {
	if r.LogGroupName != "" && r.LogGroupIdentifier != "" {
		return "", invalidParameter(ServiceLogs, "LogGroup name and LogGroup ARN are mutually exclusive parameters.")
	}
	name := r.LogGroupName
	if r.LogGroupIdentifier != "" {
		name = r.LogGroupIdentifier
		if m := logsARNPattern.FindStringSubmatch(name); m != nil {
			name = m[1]
		}
	}
	if !logsGroupPattern.MatchString(name) {
		return "", constraintError(ServiceLogs, "'"+name+"'", "logGroupName", "must satisfy regular expression pattern: [\\.\\-_/#A-Za-z0-9]+ and have length between 1 and 512")
	}
	return name, nil
}

// checkStreamName checks a log stream name.
func checkStreamName(name string) error {
	if !logsStreamPattern.MatchString(name) {
		return constraintError(ServiceLogs, "'"+name+"'", "logStreamName", "must satisfy regular expression pattern: [^:*]* and have length between 1 and 512")
	}
	return nil
}

// createGroup creates a log group; the store's lock is held.
func (l *logsStore) createGroup(name, arn string, now time.Time) (*logGroup, error) {
	if _, ok := l.groups[name]; ok {
		return nil, ErrExists
	}
	g := &logGroup{name: name, arn: arn, created: now, streams: map[string]*logStream{}}
	l.groups[name] = g
	return g, nil
}

// createStream creates a log stream in g; the store's lock is held.
func (g *logGroup) createStream(name string, now time.Time) (*logStream, error) {
	if _, ok := g.streams[name]; ok {
		return nil, ErrExists
	}
	ls := &logStream{name: name, arn: g.arn + ":log-stream:" + name, created: now}
	g.streams[name] = ls
	return ls, nil
}

// group returns the log group named name, creating it when create is true
// and Config.AutoCreate says so; the store's lock is held.
func (s *Server) logGroup(c *call, name string, create bool) (*logGroup, error) {
	if g, ok := s.logs.groups[name]; ok {
		return g, nil
	}
	if !create || !s.cfg.AutoCreate {
		return nil, clientError("ResourceNotFoundException", "The specified log group does not exist.")
	}
	s.log.Info("emulator: creating a log group on its first use", "log_group", name)
	return s.logs.createGroup(name, c.arn("log-group:"+name), s.now())
}

// logStream returns the log stream named name of g, creating it when
// create is true and Config.AutoCreate says so; the store's lock is held.
func (s *Server) logStream(g *logGroup, name string, create bool) (*logStream, error) {
	if ls, ok := g.streams[name]; ok {
		return ls, nil
	}
	if !create || !s.cfg.AutoCreate {
		return nil, clientError("ResourceNotFoundException", "The specified log stream does not exist.")
	}
	return g.createStream(name, s.now())
}

type createLogGroupInput struct {
	LogGroupName string `json:"logGroupName"`
}

func (in createLogGroupInput) name() (string, error) {
	return groupRef{LogGroupName: in.LogGroupName}.name()
}

func (s *Server) logsCreateLogGroup(c *call) (any, error) {
	var in createLogGroupInput
	name, err := c.decodeResource(&in)
	if err != nil {
		return nil, err
	}
	s.logs.mu.Lock()
	defer s.logs.mu.Unlock()
	if _, err := s.logs.createGroup(name, c.arn("log-group:"+name), s.now()); err != nil {
		return nil, clientError("ResourceAlreadyExistsException", "The specified log group already exists")
	}
	return nil, nil
}

type describeLogGroupsInput struct {
	LogGroupNamePrefix string `json:"logGroupNamePrefix"`
	NextToken          string `json:"nextToken"`
	Limit              *int   `json:"limit"`
}

func (s *Server) logsDescribeLogGroups(c *call) (any, error) {
	var in describeLogGroupsInput
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	limit, err := pageLimit(in.Limit, 50)
	if err != nil {
		return nil, err
	}
	s.logs.mu.Lock()
	defer s.logs.mu.Unlock()
	names := make([]string, 0, len(s.logs.groups))
	for name := range s.logs.groups {
		if strings.HasPrefix(name, in.LogGroupNamePrefix) && name > in.NextToken {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	type groupOutput struct {
		LogGroupName    string `json:"logGroupName"`
		CreationTime    int64  `json:"creationTime"`
		RetentionInDays int    `json:"retentionInDays,omitempty"`
		Arn             string `json:"arn"`
		LogGroupArn     string `json:"logGroupArn"`
		StoredBytes     int64  `json:"storedBytes"`
		LogGroupClass   string `json:"logGroupClass"`
	}
	out := struct {
		LogGroups []groupOutput `json:"logGroups"`
		NextToken string        `json:"nextToken,omitempty"`
	}{LogGroups: []groupOutput{}}
	for _, name := range names {
		if len(out.LogGroups) == limit {
			out.NextToken = out.LogGroups[limit-1].LogGroupName
			break
		}
		g := s.logs.groups[name]
		g.trim(s.now())
		out.LogGroups = append(out.LogGroups, groupOutput{LogGroupName: name, CreationTime: g.created.UnixMilli(), RetentionInDays: g.retentionDays,
			Arn: g.arn + ":*", LogGroupArn: g.arn, StoredBytes: g.storedBytes, LogGroupClass: "STANDARD"})
	}
	return out, nil
}

// pageLimit returns the limit of a page: given, in [1, most], or most.
func pageLimit(given *int, most int) (int, error) {
	if given == nil {
		return most, nil
	}
	if *given < 1 || *given > most {
		return 0, constraintError(ServiceLogs, strconv.Itoa(*given), "limit", "must have value between 1 and "+strconv.Itoa(most))
	}
	return *given, nil
}

type putRetentionPolicyInput struct {
	LogGroupName    string `json:"logGroupName"`
	RetentionInDays int    `json:"retentionInDays"`
}

func (in putRetentionPolicyInput) name() (string, error) {
	return groupRef{LogGroupName: in.LogGroupName}.name()
}

func (s *Server) logsPutRetentionPolicy(c *call) (any, error) {
	var in putRetentionPolicyInput
	name, err := c.decodeResource(&in)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(retentionDaysValues, in.RetentionInDays) {
		return nil, constraintError(ServiceLogs, strconv.Itoa(in.RetentionInDays), "retentionInDays", "must satisfy enum value set: [1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653]")
	}
	s.logs.mu.Lock()
	defer s.logs.mu.Unlock()
	g, err := s.logGroup(c, name, false)
	if err != nil {
		return nil, err
	}
	g.retentionDays = in.RetentionInDays
	g.trim(s.now())
	return nil, nil
}

type logStreamInput struct {
	LogGroupName  string `json:"logGroupName"`
	LogStreamName string `json:"logStreamName"`
}

// name checks the log group and log stream a call names, and returns the
// group, the resource of the call.
func (in logStreamInput) name() (string, error) {
	group, err := groupRef{LogGroupName: in.LogGroupName}.name()
	if err != nil {
		return "", err
	}
	return group, checkStreamName(in.LogStreamName)
}

func (s *Server) logsCreateLogStream(c *call) (any, error) {
	var in logStreamInput
	group, err := c.decodeResource(&in)
	if err != nil {
		return nil, err
	}
	stream := in.LogStreamName
	s.logs.mu.Lock()
	defer s.logs.mu.Unlock()
	g, err := s.logGroup(c, group, true)
	if err != nil {
		return nil, err
	}
	if _, err := g.createStream(stream, s.now()); err != nil {
		return nil, clientError("ResourceAlreadyExistsException", "The specified log stream already exists")
	}
	return nil, nil
}

func (s *Server) logsDeleteLogStream(c *call) (any, error) {
	var in logStreamInput
	group, err := c.decodeResource(&in)
	if err != nil {
		return nil, err
	}
	return nil, s.DeleteLogStream(group, in.LogStreamName)
}

type describeLogStreamsInput struct {
	groupRef
	LogStreamNamePrefix string `json:"logStreamNamePrefix"`
	OrderBy             string `json:"orderBy"`
	Descending          bool   `json:"descending"`
	NextToken           string `json:"nextToken"`
	Limit               *int   `json:"limit"`
}

type logStreamOutput struct {
	LogStreamName       string `json:"logStreamName"`
	CreationTime        int64  `json:"creationTime"`
	FirstEventTimestamp int64  `json:"firstEventTimestamp,omitempty"`
	LastEventTimestamp  int64  `json:"lastEventTimestamp,omitempty"`
	LastIngestionTime   int64  `json:"lastIngestionTime,omitempty"`
	UploadSequenceToken string `json:"uploadSequenceToken"`
	Arn                 string `json:"arn"`
	StoredBytes         int64  `json:"storedBytes"`
}

func (s *Server) logsDescribeLogStreams(c *call) (any, error) {
	var in describeLogStreamsInput
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	name, err := in.name()
	if err != nil {
		return nil, err
	}
	limit, err := pageLimit(in.Limit, 50)
	if err != nil {
		return nil, err
	}
	switch in.OrderBy {
	case "", "LogStreamName":
	case "LastEventTime":
		if in.LogStreamNamePrefix != "" {
			return nil, invalidParameter(ServiceLogs, "Cannot order by LastEventTime with a logStreamNamePrefix.")
		}
	default:
		return nil, constraintError(ServiceLogs, "'"+in.OrderBy+"'", "orderBy", "must satisfy enum value set: [LogStreamName, LastEventTime]")
	}
	if err := c.enter(name); err != nil {
		return nil, err
	}
	all, err := s.DescribeLogStreams(name)
	if err != nil {
		return nil, err
	}
	streams := slices.DeleteFunc(all, func(ls LogStreamInfo) bool { return !strings.HasPrefix(ls.Name, in.LogStreamNamePrefix) })
	if in.OrderBy == "LastEventTime" {
		slices.SortStableFunc(streams, func(a, b LogStreamInfo) int { return cmp.Compare(a.LastEventTimestamp, b.LastEventTimestamp) })
	}
	if in.Descending {
		slices.Reverse(streams)
	}
	skip, err := strconv.Atoi(strings.TrimPrefix(in.NextToken, "streams/"))
	if in.NextToken != "" && (err != nil || skip < 0 || skip > len(streams)) {
		return nil, invalidParameter(ServiceLogs, "The specified nextToken is invalid.")
	}
	out := struct {
		LogStreams []logStreamOutput `json:"logStreams"`
		NextToken  string            `json:"nextToken,omitempty"`
	}{LogStreams: []logStreamOutput{}}
	for i, ls := range streams[skip:] {
		if i == limit {
			out.NextToken = "streams/" + strconv.Itoa(skip+limit)
			break
		}
		out.LogStreams = append(out.LogStreams, logStreamOutput{
			LogStreamName:       ls.Name,
			CreationTime:        ls.Created.UnixMilli(),
			FirstEventTimestamp: ls.FirstEventTimestamp,
			LastEventTimestamp:  ls.LastEventTimestamp,
			LastIngestionTime:   ls.LastIngestionTime,
			UploadSequenceToken: "1",
			Arn:                 ls.ARN,
			StoredBytes:         ls.StoredBytes,
		})
	}
	return out, nil
}
