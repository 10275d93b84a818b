// The npm package ngrok (4.3.3), unchanged, driving sluice-agent: its
// binPath points at a directory where "ngrok" is sluice-agent. It saves
// the authtoken in the configuration (`ngrok authtoken TOKEN --config`),
// starts the agent (`start --none --log=stdout --config`), reads the local
// API's address and readiness from its log, opens a tunnel through the
// local API, and, once the Go test has sent a request through it, lists,
// shows and replays the captured request, closes the tunnel and stops the
// agent. Each step's result is a JSON line on stdout; the test sends
// "requested\n" on stdin when its request went through.
//
// Environment: BIN_DIR, CONFIG, TOKEN, UPSTREAM_PORT.
const ngrok = require("ngrok");
const readline = require("readline");

const out = (step, value) => console.log(JSON.stringify({ step, value }));
const statuses = [];

async function main() {
  const url = await ngrok.connect({
    proto: "http",
    addr: Number(process.env.UPSTREAM_PORT),
    schemes: ["http"],
    authtoken: process.env.TOKEN,
    configPath: process.env.CONFIG,
    binPath: () => process.env.BIN_DIR,
    onStatusChange: (s) => statuses.push(s),
  });
  out("connected", { url, api: ngrok.getUrl(), statuses });

  const api = ngrok.getApi();
  out("tunnels", await api.listTunnels());

  // Wait for the test's request through the tunnel.
  const rl = readline.createInterface({ input: process.stdin });
  for await (const line of rl) {
    if (line.trim() === "requested") break;
  }
  // The agent keeps a capture once its handler returns, which may be a
  // moment after the client has the whole answer: wait for it.
  let listed = await api.listRequests({ limit: 10 });
  for (let i = 0; i < 100 && listed.requests.length < 1; i++) {
    await new Promise((r) => setTimeout(r, 50));
    listed = await api.listRequests({ limit: 10 });
  }
  out("requests", listed);
  const first = listed.requests[0];
  out("detail", await api.requestDetail(first.id));
  out("replayed", await api.replayRequest(first.id, first.tunnel_name));
  let after = listed;
  for (let i = 0; i < 100 && after.requests.length < 2; i++) {
    await new Promise((r) => setTimeout(r, 50));
    after = await api.listRequests({ limit: 10 });
  }
  out("after-replay", after);
  out("cleared", await api.deleteAllRequests());
  await ngrok.disconnect(url);
  out("disconnected", await api.listTunnels());
  await ngrok.kill();
  out("killed", true);
}

main().then(
  () => process.exit(0),
  (err) => {
    out("error", { message: String(err && err.message), body: err && err.body });
    process.exit(1);
  },
);
