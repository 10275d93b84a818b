package bytesize

import "testing"

func TestParse(t *testing.T) {
	for in, want := range map[string]int64{
		"512MiB": 512 << 20, "2GiB": 2 << 30, "100KiB": 100 << 10, "500MB": 500e6, "1GB": 1e9,
		"1048576": 1 << 20, "64B": 64, "0": 0,
	} {
		if got, err := Parse(in); err != nil || got != want {
			t.Errorf("Parse(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "lots", "-1MiB", "1.5GiB", "10TiB", "99999999999GiB"} {
		if _, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) took it", in)
		}
	}
}
