// node-agent.js is the agent of the edge's Node SDK acceptance test
// (node_sdk_test.go): the npm package @ngrok/ngrok, the Rust SDK's Node
// binding, connects to the edge and opens an HTTP and a TCP endpoint.
//
// Its configuration comes from the environment:
//
//	AGENT_AUTHTOKEN      the tunnel credential's token
//	AGENT_SERVER_ADDR    host:port of the edge's agents' listener
//	AGENT_CA_FILE        the PEM file of the CA that signed the edge's certificate
//	AGENT_HTTP_URL       the HTTP endpoint to bind, e.g. http://node.apps.example.test
//	AGENT_HTTP_UPSTREAM  the URL the HTTP endpoint forwards to, e.g. http://127.0.0.1:8080
//	AGENT_TCP_UPSTREAM   the URL the TCP endpoint (on a port the edge chooses) forwards to, e.g. tcp://127.0.0.1:9090
//	AGENT_LOG_LEVEL      optional: the SDK's log level (ERROR ... TRACE), logged to stderr
//	AGENT_LABELED        optional: a JSON list of labeled listeners to start,
//	                     [{"labels": {"edge": "web"}, "upstream": "http://127.0.0.1:8080"}]
//	AGENT_LABELED_ONLY   optional: "1" to start the labeled listeners only
//
// It prints one JSON line, {"http": URL, "tcp": URL, "labeled": [ID]},
// the endpoints as bound and the labeled listeners' ids, then stays up
// until its standard input closes: it then closes
// the session and exits 0. On an error it says so on stderr and exits 1.
'use strict';

const fs = require('fs');
const ngrok = require('@ngrok/ngrok');

function env(name) {
  const v = process.env[name];
  if (!v) {
    throw new Error(`${name} is not set`);
  }
  return v;
}

async function main() {
  const authtoken = env('AGENT_AUTHTOKEN');
  const serverAddr = env('AGENT_SERVER_ADDR');
  const ca = fs.readFileSync(env('AGENT_CA_FILE'));
  const labeledOnly = process.env.AGENT_LABELED_ONLY === '1';
  const labeled = JSON.parse(process.env.AGENT_LABELED || '[]');
  if (process.env.AGENT_LOG_LEVEL) {
    ngrok.loggingCallback((level, target, message) => {
      process.stderr.write(`${level} ${target}: ${message}\n`);
    }, process.env.AGENT_LOG_LEVEL);
  }

  const stopped = new Promise((resolve) => {
    process.stdin.on('end', resolve);
    process.stdin.on('close', resolve);
    process.stdin.on('error', resolve);
    process.stdin.resume();
  });

  const session = await new ngrok.SessionBuilder()
    .authtoken(authtoken)
    .serverAddr(serverAddr)
    .caCert(ca)
    .handleDisconnection((addr, error) => {
      process.stderr.write(`disconnected from ${addr}: ${error}\n`);
      return true;
    })
    .connect();

  const out = { labeled: [] };
  if (!labeledOnly) {
    const httpURL = new URL(env('AGENT_HTTP_URL'));
    const http = await session.httpEndpoint()
      .scheme(httpURL.protocol.replace(/:$/, '').toUpperCase())
      .domain(httpURL.hostname)
      .listenAndForward(env('AGENT_HTTP_UPSTREAM'));
    const tcp = await session.tcpEndpoint().listenAndForward(env('AGENT_TCP_UPSTREAM'));
    out.http = http.url();
    out.tcp = tcp.url();
  }
  for (const l of labeled) {
    let builder = session.labeledListener();
    for (const [name, value] of Object.entries(l.labels)) {
      builder = builder.label(name, value);
    }
    const listener = await builder.listenAndForward(l.upstream);
    out.labeled.push(listener.id());
  }
  process.stdout.write(JSON.stringify(out) + '\n');

  await stopped;
  await session.close();
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`node-agent: ${err && err.stack ? err.stack : err}\n`);
    process.exit(1);
  },
);
