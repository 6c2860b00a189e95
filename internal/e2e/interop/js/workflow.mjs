#!/usr/bin/env node
// workflow.mjs runs pactum workflows with the official A2A JavaScript
// client (@a2a-js/sdk, pinned in package.json). A run of workflow NAME is
// a task of the agent workflow.NAME; the custom workflow takes its agents
// from the message's metadata {"pactum": {"agents": [...]}}.
//
//   node workflow.mjs SERVER_URL RUN...
//
// Each RUN is TRANSPORT:WORKFLOW[:AGENTS] (AGENTS comma-separated, for
// custom), e.g. jsonrpc:feature, rest:review, jsonrpc:custom:explorer,code-reviewer.
// For each run it resolves the workflow's card, prints it as a line
// "CARD <json>" ({name, skills: [ids]}), sends one blocking message whose
// text is the task description, and prints the final task as a line
// "RUN <json>" ({run, id, state, artifacts: [{artifactId, name, text,
// data}]}). The Go test (TestJSClientWorkflow) judges these lines; this
// script exits non-zero only when a call fails.
import { randomUUID } from 'node:crypto';

import { Role, taskStateToJSON } from '@a2a-js/sdk';
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from '@a2a-js/sdk/client';

const [server, ...runs] = process.argv.slice(2);
if (!server || runs.length === 0) {
  console.error('usage: node workflow.mjs SERVER_URL TRANSPORT:WORKFLOW[:AGENTS]...');
  process.exit(2);
}
const RUN_TIMEOUT_MS = 120_000;

const transports = {
  jsonrpc: () => new JsonRpcTransportFactory({ fetchImpl: fetch }),
  rest: () => new RestTransportFactory({ fetchImpl: fetch }),
};

// dataOf returns the JSON value of a data part, whatever shape the SDK
// gives it.
function dataOf(part) {
  const c = part?.content;
  if (c?.$case !== 'data') return undefined;
  const v = c.value;
  return v && typeof v === 'object' && 'data' in v && Object.keys(v).length === 1 ? v.data : v;
}

async function run(spec) {
  const [kind, workflow, agents] = spec.split(':');
  if (!transports[kind]) throw new Error(`unknown transport ${kind} in ${spec}`);
  const base = `${server}/agents/workflow.${workflow}/`;
  const card = await new DefaultAgentCardResolver({ fetchImpl: fetch }).resolve(base);
  console.log(`CARD ${JSON.stringify({ run: spec, name: card.name, skills: (card.skills || []).map((s) => s.id) })}`);

  const tf = transports[kind]();
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [tf], preferredTransports: [tf.protocolName] }),
  );
  const client = await factory.createFromAgentCard(card);
  const message = {
    messageId: randomUUID(),
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: `Add a --json flag to tasks list (${spec})` } }],
  };
  if (agents) message.metadata = { pactum: { agents: agents.split(',') } };
  const res = await Promise.race([
    client.sendMessage({ message }),
    new Promise((_, reject) => setTimeout(() => reject(new Error(`timed out after ${RUN_TIMEOUT_MS} ms`)), RUN_TIMEOUT_MS)),
  ]);
  const t = res?.payload?.$case === 'task' ? res.payload.value : res;
  if (!t || !t.id || !t.status) throw new Error(`SendMessage answered ${JSON.stringify(res).slice(0, 300)}`);
  const artifacts = (t.artifacts || []).map((a) => ({
    artifactId: a.artifactId,
    name: a.name,
    text: a.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join(''),
    data: a.parts.map(dataOf).find((d) => d !== undefined) ?? null,
  }));
  console.log(`RUN ${JSON.stringify({ run: spec, id: t.id, state: taskStateToJSON(t.status.state), metadata: t.metadata ?? null, artifacts })}`);
}

let failed = 0;
for (const spec of runs) {
  try {
    await run(spec);
  } catch (e) {
    failed++;
    console.log(`FAIL ${spec}: ${e && e.message ? e.message : e}`);
  }
}
process.exit(failed ? 1 : 0);
