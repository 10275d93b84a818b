package emulator

import (
	"slices"
)

// listDeliveryStreamsPage is the default number of delivery streams of a
// ListDeliveryStreams answer (API_ListDeliveryStreams: "The default value
// is 10").
const listDeliveryStreamsPage = 10

type listDeliveryStreamsInput struct {
	Limit                            *int   `json:"Limit"`
	DeliveryStreamType               string `json:"DeliveryStreamType"`
	ExclusiveStartDeliveryStreamName string `json:"ExclusiveStartDeliveryStreamName"`
}

// firehoseListDeliveryStreams answers ListDeliveryStreams: the names of
// the delivery streams in alphabetical order, of one DeliveryStreamType
// when given, Limit of them (default 10) after
// ExclusiveStartDeliveryStreamName, with HasMoreDeliveryStreams.
func (s *Server) firehoseListDeliveryStreams(c *call) (any, error) {
	var in listDeliveryStreamsInput
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	if after := in.ExclusiveStartDeliveryStreamName; after != "" {
		if err := checkDeliveryStreamName(after); err != nil {
			return nil, err
		}
	}
	if in.DeliveryStreamType != "" && !slices.Contains(deliveryStreamTypes, in.DeliveryStreamType) {
		return nil, constraintError(ServiceFirehose, "'"+in.DeliveryStreamType+"'", "deliveryStreamType", "must satisfy enum value set: [DirectPut, KinesisStreamAsSource, MSKAsSource, DatabaseAsSource]")
	}
	limit := listDeliveryStreamsPage
	if in.Limit != nil {
		var err error
		if limit, err = listLimit(ServiceFirehose, in.Limit, 10000); err != nil {
			return nil, err
		}
	}
	s.firehose.mu.Lock()
	defer s.firehose.mu.Unlock()
	names := make([]string, 0, len(s.firehose.streams))
	for name, ds := range s.firehose.streams {
		if name > in.ExclusiveStartDeliveryStreamName && (in.DeliveryStreamType == "" || ds.kind == in.DeliveryStreamType) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	out := struct {
		DeliveryStreamNames    []string `json:"DeliveryStreamNames"`
		HasMoreDeliveryStreams bool     `json:"HasMoreDeliveryStreams"`
	}{DeliveryStreamNames: names}
	if len(names) > limit {
		out.DeliveryStreamNames, out.HasMoreDeliveryStreams = names[:limit], true
	}
	return out, nil
}
