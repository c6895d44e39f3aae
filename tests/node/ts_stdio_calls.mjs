// The official TypeScript SDK's MCP client over stdio: starts the server (argv: a JSON file of
// {command, args, calls: [[tool, arguments], ...]}), calls each tool in turn and prints one JSON line:
// the structured content of every answer, in order (the parity test compares them with the library's).
import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const plan = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const transport = new StdioClientTransport({ command: plan.command, args: plan.args, env: process.env, stderr: 'inherit' });
const client = new Client({ name: 'groundrules-ts-stdio-test', version: '1.0.0' });
await client.connect(transport);
const listed = (await client.listTools()).tools.map((t) => t.name);
const answers = [];
for (const [name, args] of plan.calls) {
  const result = await client.callTool({ name, arguments: args });
  if (JSON.stringify(JSON.parse(result.content[0].text)) !== JSON.stringify(result.structuredContent)) {
    throw new Error(`${name}: the text and the structured content differ`);
  }
  answers.push(result.structuredContent);
}
process.stdout.write(`${JSON.stringify({ listed, answers })}\n`);
await client.close();
