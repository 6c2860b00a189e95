// A real OpenID provider (oidc-provider, pinned in package-lock.json) for
// pactum's auth: oidc tests: client credentials, JWT access tokens whose
// audience is pactum and whose scope holds the granted pactum:ACTION
// scopes. Started by internal/oidctest (StartNode) on loopback:
//   PORT        the port to listen on (127.0.0.1)
//   JWKS_FILE   the private JWKS it signs with (its first key signs)
//   CLIENTS     JSON: [{client_id, client_secret, scope}]
//   AUDIENCE    the aud of its access tokens
//   PACTUM_OIDC_TOKEN_TTL  the access tokens' lifetime in seconds (default 300)
// It prints "listening" once it accepts connections.
import fs from 'node:fs';
import Provider from 'oidc-provider';

const port = Number(process.env.PORT);
const issuer = `http://127.0.0.1:${port}`;
const jwks = JSON.parse(fs.readFileSync(process.env.JWKS_FILE, 'utf8'));
const clients = JSON.parse(process.env.CLIENTS).map((c) => ({
  client_id: c.client_id,
  client_secret: c.client_secret,
  scope: c.scope,
  grant_types: ['client_credentials'],
  redirect_uris: [],
  response_types: [],
}));
const scopes = new Set();
for (const c of clients) for (const s of c.scope.split(' ')) scopes.add(s);
const audience = process.env.AUDIENCE;

const provider = new Provider(issuer, {
  clients,
  jwks,
  scopes: [...scopes],
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => 'urn:pactum',
      useGrantedResource: () => true,
      getResourceServerInfo: () => ({
        scope: [...scopes].join(' '),
        audience,
        accessTokenTTL: Number(process.env.PACTUM_OIDC_TOKEN_TTL || 300),
        accessTokenFormat: 'jwt',
        jwt: { sign: { alg: 'RS256' } },
      }),
    },
  },
});
provider.listen(port, '127.0.0.1', () => console.log('listening'));
