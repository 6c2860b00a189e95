#!/usr/bin/env node
// cardsig.mjs checks the signatures of a pactum card with the official A2A
// JavaScript SDK's own verifier (verifyAgentCardSignature of @a2a-js/sdk,
// pinned in package.json), which canonicalises the card its own way
// (docs/a2a.md, "Signed cards"): it must accept pactum's signatures, and
// refuse them once a member of the card is changed. The keys come from the
// JWKS the signatures' jku names, which must be JWKS_URL. One PASS/FAIL
// line per check; exit 0 only if all passed.
//
//   node cardsig.mjs CARD_URL JWKS_URL
import { verifyAgentCardSignature } from '@a2a-js/sdk';

const [cardURL, jwksURL] = process.argv.slice(2);
if (!cardURL || !jwksURL) {
  console.error('usage: node cardsig.mjs CARD_URL JWKS_URL');
  process.exit(2);
}
let failed = 0;
// The SDK logs each refused signature at debug level; the FAIL lines say it.
console.debug = () => {};

async function check(name, fn) {
  try {
    await fn();
    console.log(`PASS ${name}`);
  } catch (e) {
    failed++;
    console.log(`FAIL ${name}: ${e && e.message ? e.message : e}`);
  }
}

async function getJSON(url) {
  const res = await fetch(url);
  if (!res.ok) {
    throw new Error(`GET ${url}: HTTP ${res.status}`);
  }
  return res.json();
}

const card = await getJSON(cardURL);
const jwks = await getJSON(jwksURL);
const used = [];
const verify = verifyAgentCardSignature(async (kid, jku) => {
  if (jku !== jwksURL) {
    throw new Error(`jku ${jku}, want ${jwksURL}`);
  }
  const key = jwks.keys.find((k) => k.kid === kid);
  if (!key) {
    throw new Error(`no key ${kid} in the JWKS`);
  }
  used.push(kid);
  return key;
});

// The SDK's verifier is satisfied by one good signature: check each alone.
for (const sig of card.signatures ?? []) {
  await check(`a2a-js verifies signature ${sig.protected.slice(0, 16)}…`, () => verify({ ...card, signatures: [sig] }));
}
await check('the card has two signatures, by two keys', async () => {
  if ((card.signatures ?? []).length !== 2 || new Set(used).size !== 2) {
    throw new Error(`${(card.signatures ?? []).length} signatures, keys used ${used.join(', ')}`);
  }
});
await check('a2a-js refuses the card with its name changed', async () => {
  let accepted = false;
  try {
    await verify({ ...card, name: `${card.name}-evil` });
    accepted = true;
  } catch {
    // refused, as it must be
  }
  if (accepted) {
    throw new Error('accepted');
  }
});
process.exit(failed === 0 ? 0 : 1);
