package main

import "strconv"

// count returns n and the noun that agrees with it, for the messages that
// count things: "1 rule", "0 rules", "2 mistakes". many is the plural,
// given whole as English plurals are not one rule ("1 retry", "2 retries").
func count(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.FormatInt(n, 10) + " " + many
}
