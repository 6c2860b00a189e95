#!/usr/bin/env node
// interop.mjs drives a running pactum server with the official A2A
// JavaScript client (@a2a-js/sdk, pinned in package.json) and prints one
// PASS/FAIL line per check. It exits 0 only if every check passed.
//
//   node interop.mjs [--transport all|jsonrpc|rest] [--slow-url URL] [--verbose] BASE_URL
//
// BASE_URL is an echo agent's base URL, e.g. http://127.0.0.1:9000/agents/echo
// (its card is BASE_URL/.well-known/agent-card.json). The slow agent (echo
// with a 2s delay and the prefix "slow: ") defaults to the sibling
// .../agents/slow-echo; --slow-url (or PACTUM_SLOW_URL) overrides it.
//
// Push checks start a webhook receiver on 127.0.0.1, so the server must allow
// private push addresses (internal/e2e/interop/pactum-interop.yaml: push.allow_private).
//
// A failed check (a MUST of the A2A 1.0 specification, a pactum promise
// marked [pactum], or the echo agents' documented behaviour) fails the run;
// SHOULD-level observations are printed as NOTE lines and do not.

import http from 'node:http';
import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';

import { Role, StreamResponse, TaskState, taskStateToJSON } from '@a2a-js/sdk';
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from '@a2a-js/sdk/client';

// The SDK version actually installed (package-lock.json pins 1.3.0).
const SDK_VERSION = (() => {
  try {
    return JSON.parse(readFileSync(new URL('./node_modules/@a2a-js/sdk/package.json', import.meta.url), 'utf8')).version;
  } catch {
    return 'unknown';
  }
})();
const CALL_TIMEOUT_MS = 15_000; // one client call or stream
const CHECK_TIMEOUT_MS = 30_000; // one check, all its calls included
const RUN_TIMEOUT_MS = 240_000; // the whole run
const PUSH_WAIT_MS = 20_000; // how long the receiver waits for a final event
const slowPrefix = 'slow: '; // internal/e2e/interop/pactum-interop.yaml

const TERMINAL = new Set([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
]);

// ---------------------------------------------------------------- arguments

function usage(msg) {
  if (msg) console.error(`interop.mjs: ${msg}`);
  console.error('usage: node interop.mjs [--transport all|jsonrpc|rest] [--slow-url URL] [--verbose] BASE_URL');
  process.exit(2);
}

const opts = { transport: 'all', slowURL: process.env.PACTUM_SLOW_URL || '', verbose: false, base: '' };
{
  const args = process.argv.slice(2);
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--transport') opts.transport = args[++i];
    else if (a.startsWith('--transport=')) opts.transport = a.slice('--transport='.length);
    else if (a === '--slow-url') opts.slowURL = args[++i];
    else if (a.startsWith('--slow-url=')) opts.slowURL = a.slice('--slow-url='.length);
    else if (a === '--verbose' || a === '-v') opts.verbose = true;
    else if (a === '--help' || a === '-h') usage();
    else if (a.startsWith('-')) usage(`unknown flag ${a}`);
    else if (!opts.base) opts.base = a;
    else usage(`unexpected argument ${a}`);
  }
  if (!opts.base) usage('missing BASE_URL');
  if (!['all', 'jsonrpc', 'rest'].includes(opts.transport)) usage(`bad --transport ${opts.transport}`);
  opts.base = opts.base.replace(/\/+$/, '');
  if (!opts.slowURL) opts.slowURL = siblingAgent(opts.base, 'slow-echo');
  opts.slowURL = opts.slowURL.replace(/\/+$/, '');
}

// siblingAgent returns the base URL of agent name next to base
// (…/agents/echo → …/agents/slow-echo; a bare server URL gets /agents/name).
function siblingAgent(base, name) {
  const u = new URL(base);
  if (/\/agents\/[^/]+$/.test(u.pathname)) u.pathname = u.pathname.replace(/[^/]+$/, name);
  else u.pathname = u.pathname.replace(/\/*$/, '') + '/agents/' + name;
  return u.toString().replace(/\/+$/, '');
}

// ------------------------------------------------------------- wire capture

// Every HTTP exchange the SDK makes goes through recordingFetch, so a failing
// check can show the raw request and response it was judged on.
const wire = [];

async function recordingFetch(input, init = {}) {
  const rec = {
    method: init.method || 'GET',
    url: String(input instanceof Request ? input.url : input),
    reqHeaders: headersObject(init.headers),
    reqBody: typeof init.body === 'string' ? init.body : '',
    status: 0,
    resHeaders: {},
    resBody: '',
    error: '',
  };
  wire.push(rec);
  let res;
  try {
    res = await fetch(input, init);
  } catch (e) {
    rec.error = String(e?.cause?.message || e?.message || e);
    throw e;
  }
  rec.status = res.status;
  rec.resHeaders = headersObject(res.headers);
  const ct = res.headers.get('content-type') || '';
  // Read a copy of the body alongside the SDK (for SSE as it streams).
  const copy = res.clone();
  rec.done = (async () => {
    try {
      const reader = copy.body?.getReader();
      if (!reader) return;
      const dec = new TextDecoder();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        rec.resBody += dec.decode(value, { stream: true });
      }
    } catch (e) {
      rec.resBody += `\n[body read ended: ${e?.name || e}]`;
    }
  })();
  if (!ct.startsWith('text/event-stream')) await rec.done;
  return res;
}

function headersObject(h) {
  const out = {};
  if (!h) return out;
  if (typeof h.forEach === 'function') h.forEach((v, k) => (out[k.toLowerCase()] = v));
  else for (const [k, v] of Object.entries(h)) out[k.toLowerCase()] = String(v);
  return out;
}

function showExchange(r) {
  const clip = (s, n = 1500) => (s.length > n ? s.slice(0, n) + `…(${s.length} bytes)` : s);
  const lines = [`    > ${r.method} ${r.url}`];
  if (r.reqHeaders['a2a-version']) lines.push(`    > A2A-Version: ${r.reqHeaders['a2a-version']}`);
  if (r.reqBody) lines.push(`    > ${clip(r.reqBody)}`);
  if (r.error) lines.push(`    < (network error) ${r.error}`);
  else {
    lines.push(`    < ${r.status} ${r.resHeaders['content-type'] || ''}`);
    if (r.resBody) lines.push('    < ' + clip(r.resBody).replace(/\n/g, '\n    < '));
  }
  return lines.join('\n');
}

// lastJSON returns the parsed body of the most recent non-streaming exchange
// whose URL matches re, unwrapping a JSON-RPC envelope.
function lastJSON(re) {
  for (let i = wire.length - 1; i >= 0; i--) {
    const r = wire[i];
    if (!re.test(r.url) && !re.test(r.reqBody)) continue;
    const body = JSON.parse(r.resBody);
    return body && body.jsonrpc ? body.result : body;
  }
  throw new Error(`no recorded exchange matching ${re}`);
}

// ------------------------------------------------------------------ results

let failures = 0;
let passes = 0;
const notes = [];

class CheckError extends Error {}
class Skip extends Error {}

function assert(cond, msg) {
  if (!cond) throw new CheckError(msg);
}

function note(label, msg) {
  notes.push(`${label}: ${msg}`);
  console.log(`NOTE ${label} — ${msg}`);
}

async function check(label, fn) {
  const mark = wire.length;
  let timer;
  try {
    const detail = await Promise.race([
      fn(),
      new Promise((_, rej) => {
        timer = setTimeout(() => rej(new CheckError(`check timed out after ${CHECK_TIMEOUT_MS}ms`)), CHECK_TIMEOUT_MS);
      }),
    ]);
    passes++;
    console.log(`PASS ${label}${detail ? ' — ' + detail : ''}`);
    if (opts.verbose) for (const r of wire.slice(mark)) console.log(showExchange(r));
    return true;
  } catch (e) {
    if (e instanceof Skip) {
      console.log(`SKIP ${label} — ${e.message}`);
      return false;
    }
    failures++;
    console.log(`FAIL ${label} — ${describeError(e)}`);
    await Promise.allSettled(wire.slice(mark).map((r) => r.done));
    for (const r of wire.slice(mark).slice(-4)) console.log(showExchange(r));
    return false;
  } finally {
    clearTimeout(timer);
  }
}

function describeError(e) {
  if (e instanceof CheckError) return e.message;
  const parts = [`${e?.name || 'Error'}: ${e?.message || e}`];
  if (e?.envelopeCode !== undefined) parts.push(`jsonrpc code ${e.envelopeCode}`);
  if (e?.statusCode !== undefined) parts.push(`http ${e.statusCode}`);
  if (e?.cause) parts.push(`cause: ${e.cause?.name || ''} ${e.cause?.message || e.cause}`);
  return parts.join('; ');
}

// errorName names the A2A error class behind e (SSE error events arrive
// wrapped in a plain Error whose cause is the typed error).
function errorName(e) {
  for (let x = e; x; x = x.cause) {
    if (x.name && x.name !== 'Error' && x.name !== 'A2AError') return x.name;
    if (x.reason && x.reason !== 'INTERNAL_ERROR') return x.reason;
  }
  return e?.name || String(e);
}

async function expectError(promiseFn, wantName) {
  let got;
  try {
    await promiseFn();
  } catch (e) {
    got = e;
  }
  assert(got, `expected ${wantName}, the call succeeded`);
  if (got instanceof CheckError) throw got;
  const name = errorName(got);
  assert(name === wantName, `expected ${wantName}, got ${describeError(got)}`);
  let code = '';
  for (let x = got; x && !code; x = x.cause) {
    if (x.envelopeCode !== undefined) code = `jsonrpc code ${x.envelopeCode}`;
    else if (x.statusCode !== undefined) code = `http ${x.statusCode}`;
  }
  if (got.cause) code += `${code ? ', ' : ''}in the SSE stream`;
  return `${name}${code ? ' (' + code + ')' : ''}`;
}

// ------------------------------------------------------------------ helpers

const call = () => ({ signal: AbortSignal.timeout(CALL_TIMEOUT_MS) });
const stateName = (s) => (s === undefined ? 'undefined' : taskStateToJSON(s));
const textOf = (parts = []) =>
  parts.filter((p) => p.content?.$case === 'text').map((p) => p.content.value).join('');
const artifactsText = (arts = []) => arts.map((a) => textOf(a.parts)).join('|');

function userMessage(text, { idempotencyKey = randomUUID(), taskId = '', contextId = '' } = {}) {
  return {
    messageId: randomUUID(),
    contextId,
    taskId,
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
    metadata: { pactum: { actor: 'interop-js', idempotencyKey } },
    extensions: [],
    referenceTaskIds: [],
  };
}

function sendRequest(message, configuration = {}) {
  return {
    tenant: '',
    message,
    configuration: {
      acceptedOutputModes: ['text/plain'],
      taskPushNotificationConfig: undefined,
      historyLength: undefined,
      returnImmediately: false,
      ...configuration,
    },
    metadata: undefined,
  };
}

function asTask(result, what) {
  assert(result && typeof result === 'object', `${what}: empty result`);
  assert(!('messageId' in result && !('status' in result)), `${what}: got a Message, want a Task`);
  assert(result.id, `${what}: task has no id`);
  assert(result.status, `${what}: task has no status`);
  return result;
}

// collect reads a stream to its end (or until stop(event) says so) and
// returns the events and whether the server closed the stream.
async function collect(iterable, stop = () => false) {
  const events = [];
  let closedByServer = true;
  for await (const ev of iterable) {
    events.push(ev);
    if (stop(ev)) {
      closedByServer = false;
      break;
    }
  }
  return { events, closedByServer };
}

const kinds = (events) => events.map((e) => e.payload?.$case || 'empty').join(',');

function eventTaskId(ev) {
  const p = ev.payload;
  if (!p) return '';
  if (p.$case === 'task') return p.value.id;
  if (p.$case === 'message') return p.value.taskId;
  return p.value.taskId;
}

function eventState(ev) {
  const p = ev.payload;
  if (p?.$case === 'task' || p?.$case === 'statusUpdate') return p.value.status?.state;
  return undefined;
}

// assembleArtifacts rebuilds the text of each artifact a stream carried:
// the Task snapshot seeds them, an artifactUpdate replaces its artifact
// unless append is set, in which case its parts are added (§4.2.2).
function assembleArtifacts(events) {
  const byId = new Map();
  for (const ev of events) {
    const p = ev.payload;
    if (p?.$case === 'task') for (const a of p.value.artifacts) byId.set(a.artifactId, textOf(a.parts));
    if (p?.$case !== 'artifactUpdate' || !p.value.artifact) continue;
    const a = p.value.artifact;
    const t = textOf(a.parts);
    byId.set(a.artifactId, p.value.append && byId.has(a.artifactId) ? byId.get(a.artifactId) + t : t);
  }
  return [...byId.values()].join('|');
}

// checkLifecycleStream asserts the A2A 1.0 task lifecycle stream shape
// (§3.1.2 / §3.1.6): a Task first, then status/artifact updates for that
// task, ending in a terminal state, after which the server closes the
// stream. A Task that is already terminal may be the whole stream (the agent
// finished before the stream attached) unless requireUpdates is set.
function checkLifecycleStream({ events, closedByServer }, { taskId, wantText, wantState = TaskState.TASK_STATE_COMPLETED, requireUpdates = false }) {
  assert(events.length > 0, 'stream produced no events');
  assert(events[0].payload?.$case === 'task', `first event is ${events[0].payload?.$case}, spec §3.1.2/§3.1.6 require a Task first (events: ${kinds(events)})`);
  const id = taskId || events[0].payload.value.id;
  for (const [i, ev] of events.entries()) {
    assert(ev.payload, `event ${i} has no payload (none of task/message/statusUpdate/artifactUpdate)`);
    assert(eventTaskId(ev) === id, `event ${i} (${ev.payload.$case}) is for task ${eventTaskId(ev)}, want ${id}`);
  }
  assert(closedByServer, 'server did not close the stream after the terminal state');
  const states = events.map(eventState).filter((s) => s !== undefined);
  const finalState = states[states.length - 1];
  assert(finalState === wantState, `last state in stream is ${stateName(finalState)}, want ${stateName(wantState)} (events: ${kinds(events)})`);
  const text = assembleArtifacts(events);
  if (wantText !== undefined) assert(text.includes(wantText), `artifact text ${JSON.stringify(text)} does not contain ${JSON.stringify(wantText)} (events: ${kinds(events)})`);
  const detail = (how) => `events ${kinds(events)}; ${how} ${stateName(finalState)}; artifact ${JSON.stringify(text)}`;
  if (events.length === 1 && !requireUpdates) return { id, detail: detail('terminal Task snapshot only:') };
  const lastStatusIdx = events.findLastIndex((e) => e.payload.$case === 'statusUpdate');
  assert(lastStatusIdx >= 0, `no statusUpdate event in stream (events: ${kinds(events)})`);
  assert(eventState(events[lastStatusIdx]) === wantState, `final statusUpdate is ${stateName(eventState(events[lastStatusIdx]))}, want ${stateName(wantState)}`);
  for (const ev of events.slice(lastStatusIdx + 1)) {
    assert(ev.payload.$case === 'task' && TERMINAL.has(eventState(ev)), `event after the final status: ${ev.payload.$case}`);
  }
  if (requireUpdates) assert(events.some((e) => e.payload.$case === 'artifactUpdate'), `no artifactUpdate event in stream (events: ${kinds(events)})`);
  return { id, detail: detail('final status') };
}

// ------------------------------------------------------------ push receiver

function startReceiver() {
  const received = []; // { path, headers, body, json }
  const waiters = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      let json;
      try {
        json = JSON.parse(body);
      } catch {
        json = undefined;
      }
      received.push({ method: req.method, path: req.url, headers: req.headers, body, json });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
      for (const w of [...waiters]) w();
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      resolve({
        url: `http://127.0.0.1:${port}`,
        received,
        // until resolves with the deliveries to path once pred(deliveries)
        // holds, or rejects after ms.
        until(path, pred, ms) {
          const mine = () => received.filter((r) => r.path === path);
          return new Promise((res, rej) => {
            const tryNow = () => {
              if (pred(mine())) {
                cleanup();
                res(mine());
                return true;
              }
              return false;
            };
            const w = () => tryNow();
            const timer = setTimeout(() => {
              cleanup();
              rej(new CheckError(`receiver ${path}: no final event within ${ms}ms; got ${mine().length} deliveries: ${mine().map((r) => r.body.slice(0, 200)).join(' | ') || '(none)'}`));
            }, ms);
            const cleanup = () => {
              clearTimeout(timer);
              const i = waiters.indexOf(w);
              if (i >= 0) waiters.splice(i, 1);
            };
            waiters.push(w);
            tryNow();
          });
        },
        close: () => new Promise((r) => { server.closeAllConnections?.(); server.close(() => r()); }),
      });
    });
  });
}

// pushKind returns the single StreamResponse member of a push body.
function pushKind(json) {
  if (!json || typeof json !== 'object' || Array.isArray(json)) return { err: 'body is not a JSON object' };
  const members = ['task', 'message', 'statusUpdate', 'artifactUpdate'].filter((k) => k in json);
  if (members.length !== 1) return { err: `body has ${members.length} StreamResponse members (keys: ${Object.keys(json).join(',')})` };
  const k = members[0];
  const v = json[k];
  const taskId = k === 'task' ? v.id : v.taskId;
  const state = k === 'task' || k === 'statusUpdate' ? v.status?.state : undefined;
  return { kind: k, taskId, state };
}

const pushDone = (taskId) => (deliveries) =>
  deliveries.some((d) => {
    const k = pushKind(d.json);
    return k.taskId === taskId && ['TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED'].includes(k.state);
  });

// checkPushDeliveries checks that each webhook request was a POST whose
// body is a StreamResponse about taskId, that the last state delivered is
// COMPLETED, and that the artifact reassembled from the deliveries holds
// wantText (no chunk went missing).
function checkPushDeliveries(deliveries, taskId, wantText) {
  assert(deliveries.length > 0, 'receiver got no deliveries');
  const ks = [];
  for (const [i, d] of deliveries.entries()) {
    assert(d.method === 'POST', `delivery ${i} used ${d.method}, want POST`);
    const k = pushKind(d.json);
    assert(!k.err, `delivery ${i} is not a StreamResponse: ${k.err}: ${d.body.slice(0, 300)}`);
    assert(k.taskId === taskId, `delivery ${i} (${k.kind}) is for task ${k.taskId}, want ${taskId}`);
    ks.push(k.state ? `${k.kind}:${k.state.replace('TASK_STATE_', '')}` : k.kind);
  }
  const states = deliveries.map((d) => pushKind(d.json).state).filter(Boolean);
  assert(states[states.length - 1] === 'TASK_STATE_COMPLETED', `the last state delivered is ${states[states.length - 1]}, want TASK_STATE_COMPLETED (deliveries: ${ks.join(',')})`);
  const text = assembleArtifacts(deliveries.map((d) => StreamResponse.fromJSON(d.json)));
  assert(text.includes(wantText), `the artifact reassembled from the deliveries is ${JSON.stringify(text)}, want it to contain ${JSON.stringify(wantText)} (deliveries: ${ks.join(',')}; bodies: ${deliveries.map((d) => d.body).join(' | ').slice(0, 1500)})`);
  return ks.join(',');
}

// ------------------------------------------------------------------- checks

async function discover(label, base) {
  const resolver = new DefaultAgentCardResolver({ fetchImpl: recordingFetch });
  let card;
  await check(`${label} card discovery ${base}`, async () => {
    // AGENT_CARD_PATH is relative (".well-known/agent-card.json"), so the
    // base needs its trailing slash to keep the /agents/{name} prefix.
    card = await resolver.resolve(base + '/');
    const raw = lastJSON(/agent-card\.json/);
    for (const f of ['name', 'description', 'version', 'supportedInterfaces', 'capabilities', 'defaultInputModes', 'defaultOutputModes', 'skills']) {
      assert(raw[f] !== undefined, `card lacks required field ${f}`);
    }
    assert(Array.isArray(raw.supportedInterfaces) && raw.supportedInterfaces.length > 0, 'card has no supportedInterfaces');
    for (const i of raw.supportedInterfaces) {
      assert(i.url && i.protocolBinding && i.protocolVersion, `interface lacks url/protocolBinding/protocolVersion: ${JSON.stringify(i)}`);
    }
    const v10 = raw.supportedInterfaces.filter((i) => i.protocolVersion === '1.0');
    const bindings = v10.map((i) => i.protocolBinding);
    assert(bindings.includes('JSONRPC'), `no JSONRPC 1.0 interface (interfaces: ${JSON.stringify(raw.supportedInterfaces)})`);
    assert(bindings.includes('HTTP+JSON'), `no HTTP+JSON 1.0 interface (interfaces: ${JSON.stringify(raw.supportedInterfaces)})`);
    assert(raw.capabilities?.streaming === true, 'capabilities.streaming is not true');
    assert(raw.capabilities?.pushNotifications === true, 'capabilities.pushNotifications is not true (push checks need it)');
    if (base === opts.base) {
      const rec = wire.findLast((r) => /agent-card\.json/.test(r.url));
      if (!/max-age/.test(rec.resHeaders['cache-control'] || '')) note('[card]', `agent card response has no Cache-Control max-age (§8.6.1 SHOULD); headers: ${Object.keys(rec.resHeaders).join(', ')}`);
      if (!rec.resHeaders.etag) note('[card]', 'agent card response has no ETag (§8.6.1 SHOULD)');
    }
    return `${raw.name}: ${raw.supportedInterfaces.map((i) => `${i.protocolBinding}@${i.protocolVersion} ${i.url}`).join(', ')}`;
  });
  return card;
}

async function clientFor(card, transport) {
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl: recordingFetch }), new RestTransportFactory({ fetchImpl: recordingFetch })],
      preferredTransports: [transport],
    }),
  );
  const client = await factory.createFromAgentCard(card);
  assert(client.transport.protocolName === transport, `factory picked ${client.transport.protocolName}, want ${transport}`);
  return client;
}

async function suite(transport, tag, echoCard, slowCard, receiver) {
  const L = (s) => `[${tag}] ${s}`;
  let echo, slow;
  const ok = await check(L('client from card'), async () => {
    echo = await clientFor(echoCard, transport);
    slow = await clientFor(slowCard, transport);
    return `${echo.transport.protocolName} ${echo.protocolVersion} via ClientFactory.createFromAgentCard`;
  });
  if (!ok) return;

  // createFromUrl is the SDK's one-call discovery path; make sure it lands on
  // the same agent (it resolves the card relative to the URL given).
  await check(L('ClientFactory.createFromUrl'), async () => {
    const factory = new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory({ fetchImpl: recordingFetch }), new RestTransportFactory({ fetchImpl: recordingFetch })],
        preferredTransports: [transport],
        cardResolver: new DefaultAgentCardResolver({ fetchImpl: recordingFetch }),
      }),
    );
    const c = await factory.createFromUrl(opts.base + '/');
    const card = await c.getAgentCard(call());
    assert(card.name === echoCard.name, `createFromUrl resolved card ${card.name}, want ${echoCard.name}`);
    return `${card.name} over ${c.transport.protocolName}`;
  });

  // --- blocking send
  const input = `hello from @a2a-js/sdk ${tag} ${randomUUID().slice(0, 8)}`;
  let done; // a completed echo task
  await check(L('blocking SendMessage → completed task with echoed artifact'), async () => {
    const res = await echo.sendMessage(sendRequest(userMessage(input)), call());
    const t = asTask(res, 'SendMessage');
    assert(t.status.state === TaskState.TASK_STATE_COMPLETED, `state ${stateName(t.status.state)}, want TASK_STATE_COMPLETED (blocking send waits for a terminal state, §3.2.2)`);
    const text = artifactsText(t.artifacts);
    assert(t.artifacts.length > 0, 'completed task has no artifacts');
    assert(text.includes(input), `artifact text ${JSON.stringify(text)} does not contain the input`);
    if (text !== input) note(L('echo'), `artifact text ${JSON.stringify(text)} differs from input ${JSON.stringify(input)}`);
    assert(t.contextId, 'task has no contextId (server-generated contextId MUST be returned, §3.4.1)');
    if (transport === 'HTTP+JSON') {
      const ct = wire.findLast((r) => r.url.endsWith('/message:send'))?.resHeaders['content-type'] || '';
      if (!ct.startsWith('application/a2a+json')) note(L('content type'), `HTTP+JSON responses use Content-Type ${ct} (§11.1: application/a2a+json SHOULD be used)`);
    }
    done = t;
    return `task ${t.id} ${stateName(t.status.state)} artifact ${JSON.stringify(text)}`;
  });

  // --- pactum envelope: idempotency key replays the same task
  await check(L('[pactum] idempotencyKey replays the same task'), async () => {
    const key = randomUUID();
    const a = asTask(await echo.sendMessage(sendRequest(userMessage('idem ' + key, { idempotencyKey: key })), call()), 'first send');
    const b = asTask(await echo.sendMessage(sendRequest(userMessage('idem ' + key, { idempotencyKey: key })), call()), 'second send');
    assert(a.id === b.id, `same actor+idempotencyKey gave tasks ${a.id} and ${b.id}`);
    return `both sends → task ${a.id}`;
  });

  // --- streaming send
  await check(L('SendStreamingMessage (echo) → Task first, final completed, stream closed'), async () => {
    const sinput = input + ' (stream)';
    const r = await collect(echo.sendMessageStream(sendRequest(userMessage(sinput)), call()));
    return checkLifecycleStream(r, { wantText: sinput }).detail;
  });

  await check(L('SendStreamingMessage (slow-echo) → task, status and artifact events, final completed'), async () => {
    const sinput = 'stream ' + randomUUID().slice(0, 8);
    const r = await collect(slow.sendMessageStream(sendRequest(userMessage(sinput)), call()));
    return checkLifecycleStream(r, { wantText: slowPrefix + sinput, requireUpdates: true }).detail;
  });

  // --- get task
  await check(L('GetTask with historyLength'), async () => {
    if (!done) throw new Skip('no completed task');
    const t = await echo.getTask({ tenant: '', id: done.id, historyLength: 1 }, call());
    assert(t.id === done.id, `GetTask returned task ${t.id}, want ${done.id}`);
    assert(t.status?.state === TaskState.TASK_STATE_COMPLETED, `state ${stateName(t.status?.state)}, want TASK_STATE_COMPLETED`);
    assert(artifactsText(t.artifacts).includes(input), `artifacts ${JSON.stringify(artifactsText(t.artifacts))} lack the echoed text`);
    assert(t.history.length <= 1, `historyLength=1 returned ${t.history.length} history messages (§3.2.4: at most historyLength)`);
    const full = await echo.getTask({ tenant: '', id: done.id }, call());
    const hasUser = full.history.some((m) => m.role === Role.ROLE_USER && textOf(m.parts) === input);
    if (!hasUser) note(L('GetTask'), `history without historyLength does not contain the user message (history: ${full.history.length} messages)`);
    const zero = await echo.getTask({ tenant: '', id: done.id, historyLength: 0 }, call());
    if (zero.history.length) note(L('GetTask'), `historyLength=0 returned ${zero.history.length} history messages (§3.2.4: SHOULD be omitted)`);
    return `historyLength=1 → ${t.history.length} message(s); unbounded → ${full.history.length}; historyLength=0 → ${zero.history.length}`;
  });

  await check(L('GetTask unknown id → TaskNotFoundError'), async () =>
    expectError(() => echo.getTask({ tenant: '', id: 'no-such-task-' + randomUUID() }, call()), 'TaskNotFoundError'));

  // --- list tasks
  await check(L('ListTasks finds the task'), async () => {
    if (!done) throw new Skip('no completed task');
    const all = await echo.listTasks({ tenant: '', contextId: '', status: TaskState.TASK_STATE_UNSPECIFIED, pageSize: 100, pageToken: '', statusTimestampAfter: undefined }, call());
    const raw = lastJSON(/ListTasks|\/tasks(\?|$)/);
    assert(Array.isArray(raw?.tasks), `response has no tasks array: ${JSON.stringify(raw).slice(0, 300)}`);
    assert(typeof raw.nextPageToken === 'string', 'response lacks nextPageToken (§3.1.4: MUST always be present)');
    for (const f of ['pageSize', 'totalSize']) assert(raw[f] !== undefined, `response lacks required ${f}`);
    assert(all.tasks.some((t) => t.id === done.id), `task ${done.id} not in ListTasks (${all.tasks.length} tasks)`);
    const withArtifacts = raw.tasks.filter((t) => 'artifacts' in t).length;
    assert(withArtifacts === 0, `${withArtifacts} task(s) carry "artifacts" although includeArtifacts is false (§3.1.4: MUST be omitted)`);
    const ts = all.tasks.map((t) => Date.parse(t.status?.timestamp || ''));
    for (let i = 1; i < ts.length; i++) {
      assert(!(ts[i] > ts[i - 1]), `tasks not sorted by status timestamp descending at index ${i} (§3.1.4)`);
    }
    const byCtx = await echo.listTasks({ tenant: '', contextId: done.contextId, status: TaskState.TASK_STATE_UNSPECIFIED, pageToken: '', statusTimestampAfter: undefined, includeArtifacts: true }, call());
    assert(byCtx.tasks.some((t) => t.id === done.id), `contextId filter did not return task ${done.id}`);
    assert(byCtx.tasks.every((t) => t.contextId === done.contextId), 'contextId filter returned tasks of other contexts');
    const mine = byCtx.tasks.find((t) => t.id === done.id);
    assert(artifactsText(mine.artifacts).includes(input), 'includeArtifacts=true did not return the artifact');
    return `${all.tasks.length} task(s), totalSize ${all.totalSize}; contextId filter → ${byCtx.tasks.length}`;
  });

  await check(L('ListTasks pagination (pageSize=1, nextPageToken)'), async () => {
    const p1 = await echo.listTasks({ tenant: '', contextId: '', status: TaskState.TASK_STATE_UNSPECIFIED, pageSize: 1, pageToken: '', statusTimestampAfter: undefined }, call());
    assert(p1.tasks.length === 1, `pageSize=1 returned ${p1.tasks.length} tasks`);
    assert(p1.nextPageToken, 'more than one task exists but nextPageToken is empty');
    const p2 = await echo.listTasks({ tenant: '', contextId: '', status: TaskState.TASK_STATE_UNSPECIFIED, pageSize: 1, pageToken: p1.nextPageToken, statusTimestampAfter: undefined }, call());
    assert(p2.tasks.length === 1, `second page returned ${p2.tasks.length} tasks`);
    assert(p2.tasks[0].id !== p1.tasks[0].id, 'second page repeats the first page');
    return `page1 ${p1.tasks[0].id}, page2 ${p2.tasks[0].id}`;
  });

  // --- cancel
  await check(L('CancelTask on a running slow task → TASK_STATE_CANCELED'), async () => {
    const res = await slow.sendMessage(sendRequest(userMessage('cancel me'), { returnImmediately: true }), call());
    const t = asTask(res, 'SendMessage returnImmediately');
    assert(!TERMINAL.has(t.status.state), `returnImmediately send returned ${stateName(t.status.state)}, want a non-terminal state (§3.2.2)`);
    const c = await slow.cancelTask({ tenant: '', id: t.id, metadata: undefined }, call());
    assert(c.id === t.id, `CancelTask returned task ${c.id}, want ${t.id}`);
    assert(c.status?.state === TaskState.TASK_STATE_CANCELED, `CancelTask returned state ${stateName(c.status?.state)}, want TASK_STATE_CANCELED`);
    const g = await slow.getTask({ tenant: '', id: t.id }, call());
    assert(g.status?.state === TaskState.TASK_STATE_CANCELED, `GetTask after cancel: ${stateName(g.status?.state)}`);
    return `task ${t.id}: ${stateName(t.status.state)} → ${stateName(c.status.state)}`;
  });

  await check(L('CancelTask on a completed task → TaskNotCancelableError'), async () => {
    if (!done) throw new Skip('no completed task');
    return expectError(() => echo.cancelTask({ tenant: '', id: done.id, metadata: undefined }, call()), 'TaskNotCancelableError');
  });

  await check(L('CancelTask unknown id → TaskNotFoundError'), async () =>
    expectError(() => echo.cancelTask({ tenant: '', id: 'no-such-task-' + randomUUID(), metadata: undefined }, call()), 'TaskNotFoundError'));

  // --- subscribe
  await check(L('SubscribeToTask on a running slow task → final completed'), async () => {
    const sinput = 'subscribe ' + randomUUID().slice(0, 8);
    const t = asTask(await slow.sendMessage(sendRequest(userMessage(sinput), { returnImmediately: true }), call()), 'SendMessage returnImmediately');
    assert(!TERMINAL.has(t.status.state), `task already ${stateName(t.status.state)} before subscribing`);
    const r = await collect(slow.resubscribeTask({ tenant: '', id: t.id }, call()));
    return checkLifecycleStream(r, { taskId: t.id, wantText: slowPrefix + sinput, requireUpdates: true }).detail;
  });

  await check(L('stream, disconnect, resubscribe → final completed'), async () => {
    const sinput = 'reconnect ' + randomUUID().slice(0, 8);
    const ac = new AbortController();
    const first = await collect(
      slow.sendMessageStream(sendRequest(userMessage(sinput)), { signal: AbortSignal.any([ac.signal, AbortSignal.timeout(CALL_TIMEOUT_MS)]) }),
      () => true,
    );
    ac.abort();
    assert(first.events[0]?.payload?.$case === 'task', `first streamed event is ${first.events[0]?.payload?.$case}, want task`);
    const id = first.events[0].payload.value.id;
    assert(!TERMINAL.has(eventState(first.events[0])), `task already terminal in first event`);
    const r = await collect(slow.resubscribeTask({ tenant: '', id }, call()));
    return checkLifecycleStream(r, { taskId: id, wantText: slowPrefix + sinput, requireUpdates: true }).detail;
  });

  await check(L('SubscribeToTask on a terminal task → UnsupportedOperationError'), async () => {
    if (!done) throw new Skip('no completed task');
    return expectError(async () => {
      const r = await collect(echo.resubscribeTask({ tenant: '', id: done.id }, call()));
      throw new CheckError(`expected UnsupportedOperationError (§3.1.6), the stream yielded ${r.events.length} event(s): ${kinds(r.events)}`);
    }, 'UnsupportedOperationError');
  });

  // --- push notification configs
  if (!receiver) return;
  await check(L('push config create/get/list/delete + webhook receives StreamResponse events'), async () => {
    const pinput = 'push ' + randomUUID().slice(0, 8);
    const t = asTask(await slow.sendMessage(sendRequest(userMessage(pinput), { returnImmediately: true }), call()), 'SendMessage returnImmediately');
    assert(!TERMINAL.has(t.status.state), `task already ${stateName(t.status.state)}`);
    const path = `/hook/${tag}/${t.id}`;
    const token = 'tok-' + randomUUID();
    const created = await slow.createTaskPushNotificationConfig(
      { tenant: '', id: '', taskId: t.id, url: receiver.url + path, token, authentication: undefined },
      call(),
    );
    assert(created.id, 'created config has no id (§3.1.7: created configuration with assigned ID)');
    assert(created.taskId === t.id, `created config taskId ${created.taskId}, want ${t.id}`);
    assert(created.url === receiver.url + path, `created config url ${created.url}`);
    const got = await slow.getTaskPushNotificationConfig({ tenant: '', taskId: t.id, id: created.id }, call());
    assert(got.id === created.id && got.url === created.url, `GetTaskPushNotificationConfig returned ${JSON.stringify(got)}`);
    if (got.token !== token) note(L('push'), `GetTaskPushNotificationConfig token ${JSON.stringify(got.token)} differs from the one set`);
    const list = await slow.listTaskPushNotificationConfig({ tenant: '', taskId: t.id, pageSize: 0, pageToken: '' }, call());
    assert(list.configs.some((c) => c.id === created.id), `ListTaskPushNotificationConfigs lacks ${created.id}: ${JSON.stringify(list.configs)}`);

    const deliveries = await receiver.until(path, pushDone(t.id), PUSH_WAIT_MS);
    // The config exists before the slow agent answers, so every artifact
    // chunk must reach the webhook.
    const summary = checkPushDeliveries(deliveries, t.id, slowPrefix + pinput);
    const h = deliveries[0].headers;
    const tokenHeader = Object.entries(h).find(([, v]) => v === token);
    if (!tokenHeader) note(L('push'), `no request header carries the config token (headers: ${Object.keys(h).join(', ')})`);
    if (!String(h['content-type'] || '').startsWith('application/a2a+json')) note(L('push'), `webhook Content-Type is ${h['content-type']} (spec §4.3.3 example: application/a2a+json)`);

    await slow.deleteTaskPushNotificationConfig({ tenant: '', taskId: t.id, id: created.id }, call());
    const after = await slow.listTaskPushNotificationConfig({ tenant: '', taskId: t.id, pageSize: 0, pageToken: '' }, call());
    assert(!after.configs.some((c) => c.id === created.id), `config ${created.id} still listed after delete`);
    let getErr = '';
    try {
      await slow.getTaskPushNotificationConfig({ tenant: '', taskId: t.id, id: created.id }, call());
    } catch (e) {
      getErr = errorName(e);
    }
    assert(getErr, 'GetTaskPushNotificationConfig of a deleted config succeeded (§3.1.8: MUST fail)');
    if (getErr !== 'TaskNotFoundError') note(L('push'), `GetTaskPushNotificationConfig of a deleted config failed with ${getErr} (§3.1.8 lists TaskNotFoundError)`);
    try {
      await slow.deleteTaskPushNotificationConfig({ tenant: '', taskId: t.id, id: created.id }, call());
    } catch (e) {
      note(L('push'), `second delete of the same config failed with ${describeError(e)} (§3.1.10: delete MUST be idempotent)`);
    }
    return `config ${created.id}; webhook got ${deliveries.length} event(s): ${summary}; token header ${tokenHeader ? tokenHeader[0] : '(none)'}; after delete: get → ${getErr}`;
  });

  await check(L('push config in SendMessage configuration → webhook receives events'), async () => {
    const path = `/hook/${tag}/inline-${randomUUID().slice(0, 8)}`;
    const pinput = 'inline push ' + randomUUID().slice(0, 8);
    const res = await echo.sendMessage(
      sendRequest(userMessage(pinput), {
        taskPushNotificationConfig: { tenant: '', id: '', taskId: '', url: receiver.url + path, token: 'inline-' + randomUUID(), authentication: undefined },
      }),
      call(),
    );
    const t = asTask(res, 'SendMessage');
    const deliveries = await receiver.until(path, pushDone(t.id), PUSH_WAIT_MS);
    // The config comes with the message that creates the task, so the
    // webhook must see every update of it, the first artifact chunk included.
    const summary = checkPushDeliveries(deliveries, t.id, pinput);
    const first = pushKind(deliveries[0].json);
    if (first.state !== 'TASK_STATE_SUBMITTED') note(L('push'), `first delivery for a config sent with the message is ${first.kind}/${first.state}, not the submitted task`);
    return `task ${t.id}: webhook got ${summary}`;
  });
}

// --------------------------------------------------------------------- main

async function main() {
  console.log(`# pactum interop with @a2a-js/sdk ${SDK_VERSION} (node ${process.version})`);
  console.log(`# echo agent ${opts.base}`);
  console.log(`# slow agent ${opts.slowURL}`);

  const echoCard = await discover('[card]', opts.base);
  const slowCard = await discover('[card]', opts.slowURL);

  await check('[card] default agent card at the server root', async () => {
    const root = new URL('/.well-known/agent-card.json', opts.base).toString();
    const res = await recordingFetch(root, { headers: { 'A2A-Version': '1.0' }, signal: AbortSignal.timeout(CALL_TIMEOUT_MS) });
    assert(res.ok, `GET ${root} → ${res.status}`);
    const raw = await res.json();
    assert(raw.name && Array.isArray(raw.supportedInterfaces), 'root card is not an A2A 1.0 agent card');
    return `${root} → ${raw.name}`;
  });

  if (!echoCard || !slowCard) {
    console.log('FAIL cannot continue without both agent cards');
    failures++;
    return;
  }

  let receiver;
  await check('[push] start webhook receiver on 127.0.0.1', async () => {
    receiver = await startReceiver();
    return receiver.url;
  });

  try {
    const transports = { jsonrpc: ['JSONRPC', 'jsonrpc'], rest: ['HTTP+JSON', 'rest'] };
    const which = opts.transport === 'all' ? ['jsonrpc', 'rest'] : [opts.transport];
    for (const w of which) {
      const [transport, tag] = transports[w];
      console.log(`# --- ${transport}`);
      await suite(transport, tag, echoCard, slowCard, receiver);
    }
  } finally {
    await receiver?.close();
  }
}

const watchdog = setTimeout(() => {
  console.log(`FAIL run timed out after ${RUN_TIMEOUT_MS}ms`);
  process.exit(1);
}, RUN_TIMEOUT_MS);
watchdog.unref();

main()
  .catch((e) => {
    failures++;
    console.log(`FAIL unexpected error — ${e?.stack || e}`);
  })
  .finally(() => {
    console.log(`# ${passes} passed, ${failures} failed, ${notes.length} note(s)`);
    process.exitCode = failures ? 1 : 0;
    // Streams or sockets left open by a failed check must not hold the exit.
    setTimeout(() => process.exit(process.exitCode), 100).unref();
  });
