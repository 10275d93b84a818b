package loadgen

import (
	"fmt"
	"strings"

	"github.com/sluicehq/sluice/schemas"
)

// paddingHeader is the request header that pads the drain benchmark's
// events to the size asked for.
const paddingHeader = "X-Sluice-Bench-Padding"

// newPaddedBacklog returns the delivery benchmarks' backlog with each
// event's request given a paddingHeader, so that it is stored in about
// eventBytes bytes; events already that large are left as they are.
func newPaddedBacklog(eventBytes int) (*backlog, error) {
	b, err := newBacklog()
	if err != nil {
		return nil, err
	}
	cat := schemas.Default()
	for i, ev := range b.samples {
		enc, err := cat.Encode(withBenchIDs(ev))
		if err != nil {
			return nil, fmt.Errorf("sample %d: %w", i, err)
		}
		n := eventBytes - len(enc.Data) - len(`,"`+paddingHeader+`":[""]`)
		if n <= 0 {
			continue
		}
		if b.samples[i].Object, err = withPadding(ev.Object, n); err != nil {
			return nil, fmt.Errorf("sample %d: %w", i, err)
		}
	}
	return b, nil
}

// withBenchIDs returns ev with an event id and an account id of the
// lengths the backlog's events have, for measuring its stored size.
func withBenchIDs(ev schemas.Event) schemas.Event {
	ev.ID = schemas.NewID(schemas.PrefixEvent)
	ev.AccountID = "ac_" + strings.Repeat("0", 27)
	return ev
}

// withPadding returns the object with a request header of n bytes.
func withPadding(object []byte, n int) ([]byte, error) {
	return editObject(object, func(obj map[string]any) error {
		httpGroup, _ := obj["http"].(map[string]any)
		request, _ := httpGroup["request"].(map[string]any)
		headers, ok := request["headers"].(map[string]any)
		if !ok {
			return fmt.Errorf("the object has no request headers")
		}
		headers[paddingHeader] = []string{strings.Repeat("p", n)}
		return nil
	})
}
