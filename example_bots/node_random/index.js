// An Arena bot in Node.js that plays a random legal action in any game.
//
// It loads the protocol file at run time (no generated code): ARENA_PROTO, which the launcher sets
// (inside the sandbox the file is at /run/arena/arena.proto), else proto/arena/v1/arena.proto of
// the checkout it sits in. It reads the referee's address (HOST:PORT, or unix:PATH for a
// launched bot) and its token from ARENA_ADDRESS and ARENA_TOKEN (set by the launcher), says Hello on
// one Referee.Play stream (asking for batches), and answers each ActionRequest with one of its
// legal actions (a batch of them with one ActionReplies), drawn
// from a generator seeded with the match's bot_seed so that a replayed match replays the bot.
// Reconnects with backoff when the stream drops; exits 1 when the referee refuses it.
'use strict';

const path = require('path');
const fs = require('fs');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const PROTO = process.env.ARENA_PROTO
  || path.join(__dirname, '..', '..', 'proto', 'arena', 'v1', 'arena.proto');
const PROTOCOL_VERSION = 1;
const MAX_CONCURRENT = 16; // answering is instant, so take many requests at once

// defaults: false keeps unset oneof members absent, so a legal action can be sent back as is.
const definition = protoLoader.loadSync(PROTO, {
  keepCase: true, longs: String, enums: String, defaults: false, arrays: true, oneofs: true,
});
const arena = grpc.loadPackageDefinition(definition).arena.v1;

const address = process.env.ARENA_ADDRESS;
const token = process.env.ARENA_TOKEN;
if (!address || !token) {
  console.error('node-random: set ARENA_ADDRESS (HOST:PORT or unix:PATH) and ARENA_TOKEN');
  process.exit(2);
}
const credentials = process.env.ARENA_TLS_CA
  ? grpc.credentials.createSsl(fs.readFileSync(process.env.ARENA_TLS_CA))
  : grpc.credentials.createInsecure();
// Stay well inside a referee that allows a ping every 10 s.
const client = new arena.Referee(address, credentials, {
  'grpc.keepalive_time_ms': 20000,
  'grpc.keepalive_timeout_ms': 10000,
  'grpc.http2.max_pings_without_data': 0,
});

// mulberry32: a small seeded generator, uniform in [0, 1).
function seeded(seed) {
  let a = Number(BigInt(seed || '0') & 0xffffffffn);
  return function next() {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const matches = new Map(); // match_id -> random generator

// The reply to one ActionRequest: one of its legal actions, sent back as it came.
function answer(req) {
  const legal = req.legal_actions;
  if (!matches.has(req.match_id)) matches.set(req.match_id, seeded('0'));
  const action = legal[Math.floor(matches.get(req.match_id)() * legal.length)];
  return { match_id: req.match_id, request_id: req.request_id, action };
}
let call = null;
let attempt = 0;
let stopping = false;

function connect() {
  call = client.Play();
  const current = call;
  // batches: the referee may send several requests in one ActionRequests message.
  current.write({ hello: { token, name: 'node-random', protocol_version: PROTOCOL_VERSION,
                           max_concurrent: MAX_CONCURRENT, batches: true } });
  current.on('data', (msg) => {
    switch (msg.kind) {
      case 'welcome':
        attempt = 0;
        console.error(`node-random: connected to ${address} as ${msg.welcome.bot_name}`);
        break;
      case 'match_start':
        matches.set(msg.match_start.match_id, seeded(msg.match_start.bot_seed));
        break;
      case 'action_request':
        current.write({ action: answer(msg.action_request) });
        break;
      case 'action_requests': // several at once: answer them all in one message
        current.write({ action_replies: { replies: msg.action_requests.requests.map(answer) } });
        break;
      case 'match_end':
        matches.delete(msg.match_end.match_id);
        console.error(`node-random: match ${msg.match_end.match_id} ended: ` +
                      `${msg.match_end.reason}, ranks ${msg.match_end.ranks.join(' ')}`);
        break;
      case 'rejected':
        console.error(`node-random: match ${msg.rejected.match_id} request ` +
                      `${msg.rejected.request_id} rejected: ${msg.rejected.fault} ${msg.rejected.detail}`);
        break;
      default:
        break; // Pong, or a message newer than this bot
    }
  });
  // Every stream ends with exactly one 'status' (OK or not); decide there. 'error' repeats it.
  current.on('error', () => {});
  current.on('status', (status) => {
    if (stopping) return;
    // Refusals a retry cannot fix: an unknown, rotated or removed token, a suspended bot, a
    // protocol version the referee does not speak.
    if (status.code === grpc.status.UNAUTHENTICATED ||
        status.code === grpc.status.PERMISSION_DENIED ||
        status.code === grpc.status.FAILED_PRECONDITION) {
      console.error(`node-random: the referee at ${address} refused this bot: ${status.details}`);
      process.exit(1);
    }
    console.error(`node-random: stream ended (${status.code}: ${status.details}); reconnecting`);
    reconnect();
  });
}

function reconnect() {
  call = null;
  matches.clear();
  const delay = Math.min(30000, 500 * 2 ** attempt);
  attempt += 1;
  setTimeout(connect, delay / 2 + Math.random() * delay / 2);
}

function stop() {
  stopping = true;
  if (call) call.cancel();
  client.close();
  process.exit(0);
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

connect();
