#!/usr/bin/env node
// agent-server.mjs serves an A2A agent with the official A2A JavaScript
// SDK's server (@a2a-js/sdk, pinned in package.json): its
// DefaultRequestHandler and JsonRpcTransportHandler on node:http (no web
// framework), with the card at /.well-known/agent-card.json. The agent
// answers each message with its parts: an artifact "echo" holding them and
// a completed status carrying them. pactum's tests call it as a remote
// A2A agent (internal/e2e/bridge).
//
//   node agent-server.mjs      (prints "listening PORT" once it listens
//                               on 127.0.0.1, on a free port)
import http from 'node:http';

import { Role, TaskState } from '@a2a-js/sdk';
import {
  AgentEvent,
  DefaultRequestHandler,
  InMemoryTaskStore,
  JsonRpcTransportHandler,
  UnauthenticatedUser,
  defaultServerCallContextBuilder,
} from '@a2a-js/sdk/server';

const server = http.createServer();
let card;

const executor = {
  async execute(ctx, bus) {
    const m = ctx.userMessage;
    bus.publish(AgentEvent.task({ id: ctx.taskId, contextId: ctx.contextId, status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: undefined }, history: [m], artifacts: [], metadata: undefined }));
    bus.publish(AgentEvent.artifactUpdate({ taskId: ctx.taskId, contextId: ctx.contextId, artifact: { artifactId: 'echo-' + ctx.taskId, name: 'echo', description: '', parts: m.parts, metadata: undefined, extensions: [] }, append: false, lastChunk: true, metadata: undefined }));
    bus.publish(AgentEvent.statusUpdate({ taskId: ctx.taskId, contextId: ctx.contextId, status: { state: TaskState.TASK_STATE_COMPLETED, message: { messageId: 'r-' + ctx.taskId, role: Role.ROLE_AGENT, parts: m.parts, contextId: ctx.contextId, taskId: ctx.taskId, metadata: undefined, extensions: [], referenceTaskIds: [] }, timestamp: undefined }, metadata: undefined }));
    bus.finished();
  },
  async cancelTask() {},
};

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function send(res, status, body) {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
}

server.listen(0, '127.0.0.1', () => {
  const { port } = server.address();
  const url = `http://127.0.0.1:${port}/`;
  card = {
    name: 'js-echo', description: 'Echoes each message (the A2A JavaScript SDK server)', version: '1.0.0',
    supportedInterfaces: [{ url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    capabilities: { streaming: false, pushNotifications: false },
    defaultInputModes: ['text/plain', 'application/json'], defaultOutputModes: ['text/plain', 'application/json'], skills: [],
  };
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
  const transport = new JsonRpcTransportHandler(handler);
  server.on('request', async (req, res) => {
    try {
      if (req.method === 'GET' && req.url.startsWith('/.well-known/agent')) {
        return send(res, 200, card);
      }
      if (req.method !== 'POST') {
        return send(res, 404, { error: 'not found' });
      }
      const body = JSON.parse(await readBody(req));
      const context = defaultServerCallContextBuilder({
        user: new UnauthenticatedUser(), headers: req.headers, requestedVersion: req.headers['a2a-version'] || undefined,
      });
      const out = await transport.handle(body, context);
      if (typeof out?.[Symbol.asyncIterator] === 'function') {
        res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
        for await (const event of out) {
          res.write(`data: ${JSON.stringify(event)}\n\n`);
        }
        return res.end();
      }
      return send(res, 200, out);
    } catch (e) {
      return send(res, 500, { jsonrpc: '2.0', id: null, error: { code: -32603, message: String(e && e.message ? e.message : e) } });
    }
  });
  console.log(`listening ${port}`);
});

process.on('SIGTERM', () => server.close(() => process.exit(0)));
