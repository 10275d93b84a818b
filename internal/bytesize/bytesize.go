// Package bytesize reads sizes as people write them on command lines:
// 512MiB, 2GiB or 1073741824.
package bytesize

import (
	"errors"
	"strconv"
	"strings"
)

// Parse reads a size in bytes: a whole number, with no unit or one of B,
// KB, MB, GB (powers of 1000) and KiB, MiB, GiB (powers of 1024).
func Parse(s string) (int64, error) {
	units := []struct {
		suffix string
		factor int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1}}
	factor := int64(1)
	for _, u := range units {
		if rest, ok := strings.CutSuffix(s, u.suffix); ok {
			s, factor = rest, u.factor
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n < 0 || n > (1<<62)/factor {
		return 0, errors.New("give a size such as 512MiB, 2GiB or 1073741824")
	}
	return n * factor, nil
}
