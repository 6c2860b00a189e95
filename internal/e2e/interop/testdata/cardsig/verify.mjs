// verify.mjs CARD_URL JWKS_URL: checks the signatures of an A2A agent
// card with code that shares nothing with pactum's Go implementation:
// RFC 8785 from npm canonicalize, JWS from npm jose (both pinned in
// package.json). It fetches the card and the JWKS, removes the card's
// `signatures` member, canonicalises the rest, and verifies each
// signature as a flattened JWS over that payload (A2A §8.4), accepting
// EdDSA and ES256 only. Each signature prints a PASS or FAIL line; the
// exit status is 0 when there is at least one signature and every one
// verifies, 1 otherwise, 2 on a usage error.
import canonicalize from 'canonicalize';
import * as jose from 'jose';

const [cardURL, jwksURL] = process.argv.slice(2);
if (!cardURL || !jwksURL) {
  console.error('usage: node verify.mjs CARD_URL JWKS_URL');
  process.exit(2);
}

async function getJSON(url) {
  const res = await fetch(url, { headers: { accept: 'application/json' } });
  if (!res.ok) {
    throw new Error(`GET ${url}: HTTP ${res.status}`);
  }
  return res.json();
}

const card = await getJSON(cardURL);
const jwks = jose.createLocalJWKSet(await getJSON(jwksURL));
const signatures = card.signatures ?? [];
if (!Array.isArray(signatures) || signatures.length === 0) {
  console.log(`FAIL ${cardURL}: no signatures`);
  process.exit(1);
}
const { signatures: _, ...unsigned } = card;
const payload = jose.base64url.encode(new TextEncoder().encode(canonicalize(unsigned)));

let failed = 0;
for (const [i, sig] of signatures.entries()) {
  try {
    const header = jose.decodeProtectedHeader(sig);
    if (!header.kid || header.typ !== 'JOSE') {
      throw new Error(`protected header lacks kid or typ JOSE: ${JSON.stringify(header)}`);
    }
    if (header.jku !== undefined && header.jku !== jwksURL) {
      throw new Error(`jku ${header.jku} is not the JWKS ${jwksURL}`);
    }
    await jose.flattenedVerify(
      { payload, protected: sig.protected, signature: sig.signature, header: sig.header },
      jwks,
      { algorithms: ['EdDSA', 'ES256'] },
    );
    console.log(`PASS signature ${i + 1}/${signatures.length}: kid ${header.kid} (${header.alg})`);
  } catch (err) {
    failed++;
    console.log(`FAIL signature ${i + 1}/${signatures.length}: ${err.message}`);
  }
}
process.exit(failed === 0 ? 0 : 1);
