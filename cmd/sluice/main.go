// Command sluice is the event pipeline: `sluice serve` runs it, the other
// commands talk to a running sluice or inspect the event catalogue.
//
// Every flag can also be set in the environment as SLUICE_<FLAG>, with
// dashes as underscores: --data-dir is SLUICE_DATA_DIR. A flag on the
// command line wins over the environment.
package main

import "github.com/sluicehq/sluice/internal/climain"

func main() { climain.Run("sluice", newRootCommand()) }
