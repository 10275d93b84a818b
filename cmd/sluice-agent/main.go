// Command sluice-agent puts a local service online through a sluice
// edge: `sluice-agent http 3000` forwards a public URL to localhost:3000.
// It runs tunnels from the command line or from its configuration file
// (version 2), and serves a local API and an inspector on web_addr
// (127.0.0.1:4040) that the tools which drive agents already speak.
//
// It links none of the server's parts: no NATS, no AWS SDK, no store.
package main

import "github.com/sluicehq/sluice/internal/climain"

func main() { climain.Run("sluice-agent", newRootCommand()) }
