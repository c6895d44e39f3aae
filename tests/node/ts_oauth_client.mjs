// The official TypeScript SDK's MCP client with its own OAuth support, headless: the
// client_credentials provider (argv: url client_id client_secret scope issuer). It meets the 401,
// reads the protected resource metadata, the issuer's metadata, gets a token for the resource,
// then lists the tools and calls query_findings; prints one JSON line of what it saw.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';

const [url, clientId, clientSecret, scope, issuer] = process.argv.slice(2);
const authProvider = new ClientCredentialsProvider({ clientId, clientSecret, scope, expectedIssuer: issuer });
const client = new Client({ name: 'groundrules-ts-oauth-test', version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(new URL(url), { authProvider }));
const tools = (await client.listTools()).tools.map((t) => t.name);
const answer = await client.callTool({ name: 'query_findings', arguments: {} });
const token = authProvider.tokens()?.access_token ?? '';
process.stdout.write(`${JSON.stringify({ tools, answer: answer.structuredContent, server: client.getServerVersion(),
  audience: JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()).aud })}\n`);
await client.close();
