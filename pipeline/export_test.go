package pipeline

// CheckRetained exposes checkRetained to the package's external tests.
var CheckRetained = checkRetained

// DeliveryRetry exposes deliveryRetry to the package's external tests.
var DeliveryRetry = deliveryRetry
