// A real OAuth 2.1 authorization server on loopback for the tests: the certified `oidc-provider`,
// configured from a JSON file (argv[2]): { port, keys: [private JWKs, the first signs],
// clients: [{ client_id, client_secret, projects, ttl }], scopes }. It serves its metadata
// (OpenID Connect discovery), its JWKS and a token endpoint for the client_credentials grant with
// resource indicators (RFC 8707): a token is a JWT (RFC 9068) whose aud is the resource asked for.
// Each client's `projects` becomes the token's `groundrules_projects` claim. Stops on SIGTERM.
import { readFileSync } from 'node:fs';
import Provider from 'oidc-provider';

const config = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const issuer = `http://127.0.0.1:${config.port}`;
const byClient = new Map(config.clients.map((c) => [c.client_id, c]));
const alg = config.keys[0].alg;

const provider = new Provider(issuer, {
  clients: config.clients.map(({ client_id, client_secret }) => ({
    client_id, client_secret, grant_types: ['client_credentials'], response_types: [], redirect_uris: [],
    token_endpoint_auth_method: 'client_secret_basic',
  })),
  jwks: { keys: config.keys },
  scopes: config.scopes,
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: (_ctx, _client, oneOf) => oneOf,
      useGrantedResource: () => true,
      getResourceServerInfo: (_ctx, resource, client) => ({
        scope: config.scopes.join(' '),
        audience: resource,
        accessTokenTTL: byClient.get(client.clientId).ttl ?? 600,
        accessTokenFormat: 'jwt',
        jwt: { sign: { alg } },
      }),
    },
  },
  extraTokenClaims: (_ctx, token) => {
    const client = byClient.get(token.clientId);
    return client && client.projects ? { groundrules_projects: client.projects } : undefined;
  },
});
provider.proxy = false;

const server = provider.listen(config.port, '127.0.0.1', () => {
  process.stdout.write(`listening ${issuer}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
