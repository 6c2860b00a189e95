#!/usr/bin/env node
// auth.mjs checks a pactum server that runs with `auth: bearer` (or
// `auth: {mode: oidc, …}`, SCHEME oidc) using the official A2A JavaScript
// client (@a2a-js/sdk, pinned in package.json): the public card declares
// the scheme, and over JSON-RPC and HTTP+JSON a call with the token
// succeeds while one without it, or with a wrong one, is refused. One
// PASS/FAIL line per check; exit 0 only if all passed.
//
//   node auth.mjs BASE_URL TOKEN [bearer|oidc]
import { randomUUID } from 'node:crypto';

import { Role, TaskState } from '@a2a-js/sdk';
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from '@a2a-js/sdk/client';

const [base, token, mode = 'bearer'] = process.argv.slice(2);
if (!base || !token) {
  console.error('usage: node auth.mjs BASE_URL TOKEN');
  process.exit(2);
}
const CALL_TIMEOUT_MS = 15_000;
let failed = 0;

async function check(name, fn) {
  try {
    const detail = await Promise.race([
      fn(),
      new Promise((_, reject) => setTimeout(() => reject(new Error(`timed out after ${CALL_TIMEOUT_MS} ms`)), CALL_TIMEOUT_MS)),
    ]);
    console.log(`PASS ${name}${detail ? `: ${detail}` : ''}`);
  } catch (e) {
    failed++;
    console.log(`FAIL ${name}: ${e && e.message ? e.message : e}`);
  }
}

// fetchWith sends the given bearer token (none when empty) on every call.
const fetchWith = (bearer) => (input, init = {}) => {
  const headers = new Headers(init.headers || {});
  if (bearer) headers.set('Authorization', `Bearer ${bearer}`);
  return fetch(input, { ...init, headers });
};

const card = await new DefaultAgentCardResolver({ fetchImpl: fetch }).resolve(base.endsWith('/') ? base : `${base}/`);

await check(`card declares the ${mode} scheme, without a token`, async () => {
  if (mode === 'oidc') {
    const scheme = card.securitySchemes?.oidc?.scheme;
    if (scheme?.$case !== 'openIdConnectSecurityScheme' || !scheme.value.openIdConnectUrl?.endsWith('/.well-known/openid-configuration')) {
      throw new Error(`securitySchemes = ${JSON.stringify(card.securitySchemes)}`);
    }
    if (!card.securityRequirements?.some((r) => r.schemes && 'oidc' in r.schemes)) {
      throw new Error(`securityRequirements = ${JSON.stringify(card.securityRequirements)}`);
    }
    return `openIdConnectSecurityScheme ${scheme.value.openIdConnectUrl}, required`;
  }
  const scheme = card.securitySchemes?.bearer?.scheme;
  if (scheme?.$case !== 'httpAuthSecurityScheme' || scheme.value.scheme !== 'Bearer') {
    throw new Error(`securitySchemes = ${JSON.stringify(card.securitySchemes)}`);
  }
  if (!card.securityRequirements?.some((r) => r.schemes && 'bearer' in r.schemes)) {
    throw new Error(`securityRequirements = ${JSON.stringify(card.securityRequirements)}`);
  }
  return 'httpAuthSecurityScheme Bearer, required';
});

const transports = {
  jsonrpc: (f) => new JsonRpcTransportFactory({ fetchImpl: f }),
  rest: (f) => new RestTransportFactory({ fetchImpl: f }),
};

async function send(kind, bearer) {
  const tf = transports[kind](fetchWith(bearer));
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [tf], preferredTransports: [tf.protocolName] }),
  );
  const client = await factory.createFromAgentCard(card);
  return client.sendMessage({
    message: { messageId: randomUUID(), role: Role.ROLE_USER, parts: [{ content: { $case: 'text', value: `auth over ${kind}` } }] },
  });
}

for (const kind of Object.keys(transports)) {
  await check(`${kind}: SendMessage with the token`, async () => {
    const task = await send(kind, token);
    if (task?.status?.state !== TaskState.TASK_STATE_COMPLETED) {
      throw new Error(`answer ${JSON.stringify(task).slice(0, 300)}`);
    }
    return `task ${task.id} completed`;
  });
  for (const [what, bearer] of [['without a token', ''], ['with a wrong token', `${token}-wrong`]]) {
    await check(`${kind}: SendMessage ${what} is refused`, async () => {
      let res;
      try {
        res = await send(kind, bearer);
      } catch (e) {
        const msg = String(e && e.message ? e.message : e);
        if (!/401|Bearer|token/i.test(msg)) throw new Error(`refused, but not for authentication: ${msg}`);
        return msg.slice(0, 120);
      }
      throw new Error(`accepted: ${JSON.stringify(res).slice(0, 200)}`);
    });
  }
}

process.exit(failed ? 1 : 0);
