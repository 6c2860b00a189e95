#!/usr/bin/env node
// cardsign.mjs signs two agent cards with the official A2A JavaScript
// SDK's signer (generateAgentCardSignature of @a2a-js/sdk, pinned in
// package.json) and a fresh ES256 key, and prints them with the key's
// JWKS as one JSON object {plain, withEmpty, jwks}: `plain` has no empty
// values, `withEmpty` has an empty description and an empty tag list,
// which the SDK leaves out of what it signs (docs/a2a.md, "Signed
// cards"). pactum's verifier reads them.
//
//   node cardsign.mjs
import { webcrypto } from 'node:crypto';

import { generateAgentCardSignature } from '@a2a-js/sdk';

const { privateKey, publicKey } = await webcrypto.subtle.generateKey(
  { name: 'ECDSA', namedCurve: 'P-256' },
  true,
  ['sign', 'verify'],
);
const jwk = await webcrypto.subtle.exportKey('jwk', publicKey);
const sign = generateAgentCardSignature(privateKey, { alg: 'ES256', kid: 'a2a-js', typ: 'JOSE' });

const card = {
  name: 'js-agent',
  description: 'An agent card signed by @a2a-js/sdk.',
  version: '1.0.0',
  supportedInterfaces: [{ url: 'http://127.0.0.1:1/a2a', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
  capabilities: { streaming: true },
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [{ id: 'echo', name: 'echo', description: 'Echoes.', tags: ['echo'] }],
};
const plain = await sign(card);
const withEmpty = await sign({ ...card, description: '', skills: [{ ...card.skills[0], tags: [] }] });
console.log(JSON.stringify({ plain, withEmpty, jwks: { keys: [{ ...jwk, kid: 'a2a-js', alg: 'ES256', use: 'sig' }] } }));
