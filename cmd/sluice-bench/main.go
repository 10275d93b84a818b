package main

import "github.com/sluicehq/sluice/internal/climain"

func main() { climain.Run("sluice-bench", newBenchCommand()) }
