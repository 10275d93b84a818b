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
//
// It prints one JSON line, {"http": URL, "tcp": URL}, the endpoints as
// bound, then stays up until its standard input closes: it then closes
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
  const httpURL = new URL(env('AGENT_HTTP_URL'));
  const httpUpstream = env('AGENT_HTTP_UPSTREAM');
  const tcpUpstream = env('AGENT_TCP_UPSTREAM');
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

  const http = await session.httpEndpoint()
    .scheme(httpURL.protocol.replace(/:$/, '').toUpperCase())
    .domain(httpURL.hostname)
    .listenAndForward(httpUpstream);
  const tcp = await session.tcpEndpoint().listenAndForward(tcpUpstream);
  process.stdout.write(JSON.stringify({ http: http.url(), tcp: tcp.url() }) + '\n');

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
