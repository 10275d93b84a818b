package emulator

import (
	"fmt"
	"strconv"
)

type streamRetentionInput struct {
	streamRef
	RetentionPeriodHours *int `json:"RetentionPeriodHours"`
}

func (s *Server) kinesisIncreaseStreamRetentionPeriod(c *call) (any, error) {
	return s.changeStreamRetention(c, true)
}

func (s *Server) kinesisDecreaseStreamRetentionPeriod(c *call) (any, error) {
	return s.changeStreamRetention(c, false)
}

// changeStreamRetention sets a stream's retention period, as
// IncreaseStreamRetentionPeriod (increase) or DecreaseStreamRetentionPeriod
// do: to at least 24 hours and at most 8760, and not shorter (longer) than
// it is. A shorter one trims the records past it at once.
func (s *Server) changeStreamRetention(c *call, increase bool) (any, error) {
	var in streamRetentionInput
	name, err := c.decodeResource(&in)
	if err != nil {
		return nil, err
	}
	hours := in.RetentionPeriodHours
	switch {
	case hours == nil:
		return nil, constraintError(ServiceKinesis, "null", "retentionPeriodHours", "must not be null")
	case *hours < 1:
		return nil, constraintError(ServiceKinesis, strconv.Itoa(*hours), "retentionPeriodHours", "must have value greater than or equal to 1")
	case *hours > kinesisMaxRetention:
		return nil, constraintError(ServiceKinesis, strconv.Itoa(*hours), "retentionPeriodHours", fmt.Sprintf("must have value less than or equal to %d", kinesisMaxRetention))
	}
	s.kinesis.mu.Lock()
	defer s.kinesis.mu.Unlock()
	st, err := s.kinesis.stream(c, name)
	if err != nil {
		return nil, err
	}
	switch {
	case *hours < kinesisRetentionHours:
		return nil, clientError("InvalidArgumentException", "Minimum allowed retention period is %d hours. Requested retention period (%d hours) is too short.", kinesisRetentionHours, *hours)
	case increase && *hours < st.retentionHours:
		return nil, clientError("InvalidArgumentException", "Requested retention period (%d hours) for stream %s can not be shorter than existing retention period (%d hours). Use DecreaseRetentionPeriod API.", *hours, name, st.retentionHours)
	case !increase && *hours > st.retentionHours:
		return nil, clientError("InvalidArgumentException", "Requested retention period (%d hours) for stream %s can not be longer than existing retention period (%d hours). Use IncreaseRetentionPeriod API.", *hours, name, st.retentionHours)
	}
	st.retentionHours = *hours
	st.trim(s.now(), s.bounds())
	return nil, nil
}
