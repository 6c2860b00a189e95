// Baseline for docs/benchmarks.md, not part of pactum: the official JS A2A
// SDK (@a2a-js/sdk 1.3.0) serving an in-memory echo agent over JSON-RPC.
// npm install && node server.mjs 9931
import express from 'express';
import { TaskState, Role } from '@a2a-js/sdk';
import { DefaultRequestHandler, InMemoryTaskStore, AgentEvent } from '@a2a-js/sdk/server';
import { jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';

const port = Number(process.argv[2] || 9931);
const card = {
  name: 'echo', description: 'echo', version: '1.0.0',
  supportedInterfaces: [{ url: `http://127.0.0.1:${port}/`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
  capabilities: { streaming: true, pushNotifications: false },
  defaultInputModes: ['text/plain'], defaultOutputModes: ['text/plain'], skills: [],
};
const executor = {
  async execute(ctx, bus) {
    const m = ctx.userMessage;
    bus.publish(AgentEvent.task({ id: ctx.taskId, contextId: ctx.contextId, status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: undefined }, history: [m], artifacts: [], metadata: undefined }));
    bus.publish(AgentEvent.artifactUpdate({ taskId: ctx.taskId, contextId: ctx.contextId, artifact: { artifactId: 'a1', name: 'echo', description: '', parts: m.parts, metadata: undefined, extensions: [] }, append: false, lastChunk: true, metadata: undefined }));
    bus.publish(AgentEvent.statusUpdate({ taskId: ctx.taskId, contextId: ctx.contextId, status: { state: TaskState.TASK_STATE_COMPLETED, message: { messageId: 'r-' + ctx.taskId, role: Role.ROLE_AGENT, parts: m.parts, contextId: ctx.contextId, taskId: ctx.taskId, metadata: undefined, extensions: [], referenceTaskIds: [] }, timestamp: undefined }, metadata: undefined }));
    bus.finished();
  },
  async cancelTask() {},
};
const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
const app = express();
app.use(express.json());
app.use('/', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
app.listen(port, '127.0.0.1', () => console.log('listening', port));
