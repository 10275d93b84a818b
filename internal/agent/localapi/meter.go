package localapi

// Meter counts a tunnel's connections and requests.
type Meter struct{}
