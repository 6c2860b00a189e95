#!/usr/bin/env node
// extensions.mjs checks pactum's contracts extension with the official A2A
// JavaScript client (@a2a-js/sdk, pinned in package.json): it reads the
// extension from an agent's card, fetches the contract the card names and
// checks its digest, activates the extension with the A2A-Extensions
// service parameter (withA2AExtensions) over JSON-RPC and HTTP+JSON and
// reads the verified result under the extension's key, and, against an
// agent that requires the extension, is refused without it. One PASS/FAIL
// line per check; exit 0 only if all passed.
//
//   node extensions.mjs OPTIONAL_AGENT_URL REQUIRED_AGENT_URL
import { createHash, randomUUID } from 'node:crypto';

import { Role, taskStateToJSON } from '@a2a-js/sdk';
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
  ServiceParameters,
  withA2AExtensions,
} from '@a2a-js/sdk/client';

const URI = 'https://pactum.dev/ext/contracts/v1';
const [optionalURL, requiredURL] = process.argv.slice(2);
if (!optionalURL || !requiredURL) {
  console.error('usage: node extensions.mjs OPTIONAL_AGENT_URL REQUIRED_AGENT_URL');
  process.exit(2);
}
const CHECK_TIMEOUT_MS = 60_000;
let failed = 0;

async function check(name, fn) {
  try {
    const detail = await Promise.race([
      fn(),
      new Promise((_, reject) => setTimeout(() => reject(new Error(`timed out after ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS)),
    ]);
    console.log(`PASS ${name}${detail ? `: ${detail}` : ''}`);
  } catch (e) {
    failed++;
    console.log(`FAIL ${name}: ${e && e.message ? e.message : e}`);
  }
}

function assert(cond, msg) {
  if (!cond) throw new Error(msg);
}

const slash = (u) => (u.endsWith('/') ? u : `${u}/`);
const resolver = new DefaultAgentCardResolver({ fetchImpl: fetch });
const card = await resolver.resolve(slash(optionalURL));
const strictCard = await resolver.resolve(slash(requiredURL));
const extOf = (c) => (c.capabilities?.extensions || []).find((e) => e.uri === URI);

let declared;
await check('card: declares the contracts extension, optional', async () => {
  declared = extOf(card);
  assert(declared, `no extension ${URI} in ${JSON.stringify(card.capabilities)}`);
  assert(!declared.required, 'the extension is required on the optional agent');
  const c = declared.params?.contracts?.[0];
  assert(c && c.id === 'checked' && /^sha256:[0-9a-f]{64}$/.test(c.digest), `contracts ${JSON.stringify(declared.params?.contracts)}`);
  assert(JSON.stringify(c.steps) === '["checked"]', `steps ${JSON.stringify(c.steps)}`);
  return `${c.id} ${c.version} ${c.digest}`;
});

await check('card: the contract at its URL has the digest the card names', async () => {
  const c = declared.params.contracts[0];
  const res = await fetch(c.url);
  assert(res.ok, `GET ${c.url}: ${res.status}`);
  const body = Buffer.from(await res.arrayBuffer());
  const digest = 'sha256:' + createHash('sha256').update(body).digest('hex');
  assert(digest === c.digest, `digest of ${c.url} is ${digest}, the card says ${c.digest}`);
  const embedded = JSON.stringify(c.contract);
  assert(embedded === body.toString('utf8'), 'the embedded contract differs from the one served');
  return `${body.length} bytes`;
});

await check('card: the strict agent declares the extension required', async () => {
  const e = extOf(strictCard);
  assert(e && e.required === true, `extension ${JSON.stringify(e)}`);
});

const transports = {
  jsonrpc: () => new JsonRpcTransportFactory({ fetchImpl: fetch }),
  rest: () => new RestTransportFactory({ fetchImpl: fetch }),
};

async function client(kind, c) {
  const tf = transports[kind]();
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [tf], preferredTransports: [tf.protocolName] }),
  );
  return factory.createFromAgentCard(c);
}

function message(text) {
  return { message: { messageId: randomUUID(), role: Role.ROLE_USER, parts: [{ content: { $case: 'text', value: text } }] } };
}

const activated = { serviceParameters: ServiceParameters.create(withA2AExtensions(URI)) };

for (const kind of Object.keys(transports)) {
  await check(`${kind}: activated, the verified result is under the extension's key`, async () => {
    const cl = await client(kind, card);
    const res = await cl.sendMessage(message('hello'), activated);
    const t = res?.payload?.$case === 'task' ? res.payload.value : res;
    assert(taskStateToJSON(t.status.state) === 'TASK_STATE_COMPLETED', `state ${taskStateToJSON(t.status.state)}`);
    const vr = t.metadata?.[URI]?.verifiedResult;
    assert(vr && vr.verification?.passed === true && vr.contractDigest === declared.params.contracts[0].digest,
      `metadata[${URI}] = ${JSON.stringify(t.metadata?.[URI])}`);
    const art = t.artifacts?.at(-1)?.metadata?.[URI]?.verifiedResult;
    assert(art && art.step === 'checked', `artifact metadata ${JSON.stringify(t.artifacts?.at(-1)?.metadata)}`);
    return `passed ${vr.verification.passed}, step ${vr.step}`;
  });

  await check(`${kind}: not activated, no verified result under the extension's key`, async () => {
    const cl = await client(kind, card);
    const res = await cl.sendMessage(message('hello'));
    const t = res?.payload?.$case === 'task' ? res.payload.value : res;
    assert(taskStateToJSON(t.status.state) === 'TASK_STATE_COMPLETED', `state ${taskStateToJSON(t.status.state)}`);
    assert(t.metadata?.[URI] === undefined, `metadata[${URI}] = ${JSON.stringify(t.metadata?.[URI])}`);
    assert(t.metadata?.pactum?.verifiedResult, 'no metadata.pactum.verifiedResult');
  });

  await check(`${kind}: the strict agent refuses a client that does not activate the extension`, async () => {
    const cl = await client(kind, strictCard);
    let err;
    try {
      await cl.sendMessage(message('hello'));
    } catch (e) {
      err = e;
    }
    assert(err, 'the call succeeded');
    const text = `${err.name} ${err.message}`;
    assert(/extension/i.test(text) && text.includes(URI), `error: ${text}`);
    return text.slice(0, 160);
  });

  await check(`${kind}: the strict agent answers a client that activates it`, async () => {
    const cl = await client(kind, strictCard);
    const res = await cl.sendMessage(message('hello'), activated);
    const t = res?.payload?.$case === 'task' ? res.payload.value : res;
    assert(taskStateToJSON(t.status.state) === 'TASK_STATE_COMPLETED', `state ${taskStateToJSON(t.status.state)}`);
    assert(t.metadata?.[URI]?.verifiedResult?.verification?.passed === true, `metadata ${JSON.stringify(t.metadata)}`);
  });
}

if (failed) {
  console.log(`${failed} check(s) failed`);
  process.exit(1);
}
