#!/usr/bin/env node
// contract.mjs runs a pactum contract served as an agent with the official
// A2A JavaScript client (@a2a-js/sdk, pinned in package.json), over
// JSON-RPC and HTTP+JSON, and reads the run's verified results: the
// "verified-results" artifact (a text summary and a data part with every
// step's verified result) and metadata.pactum.verifiedResult on the task.
// The agent is examples/contract-run's "report" (three steps: plan, draft,
// review). One PASS/FAIL line per check; exit 0 only if all passed.
//
//   node contract.mjs BASE_URL      (e.g. http://127.0.0.1:9000/agents/report)
import { randomUUID } from 'node:crypto';

import { Role, TaskState, taskStateToJSON } from '@a2a-js/sdk';
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from '@a2a-js/sdk/client';

const [base] = process.argv.slice(2);
if (!base) {
  console.error('usage: node contract.mjs BASE_URL');
  process.exit(2);
}
const CHECK_TIMEOUT_MS = 60_000;
const STEPS = ['plan', 'draft', 'review'];
let failed = 0;

async function check(name, fn) {
  try {
    const detail = await Promise.race([
      fn(),
      new Promise((_, reject) => setTimeout(() => reject(new Error(`timed out after ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS)),
    ]);
    console.log(`PASS ${name}${detail ? `: ${detail}` : ''}`);
  } catch (e) {
    failed++;
    console.log(`FAIL ${name}: ${e && e.message ? e.message : e}`);
  }
}

function assert(cond, msg) {
  if (!cond) throw new Error(msg);
}

const card = await new DefaultAgentCardResolver({ fetchImpl: fetch }).resolve(base.endsWith('/') ? base : `${base}/`);

await check('card: the contract as an agent, a skill per step', async () => {
  assert(card.name === 'report', `card name ${card.name}`);
  const ids = (card.skills || []).map((s) => s.id);
  assert(JSON.stringify(ids) === JSON.stringify(STEPS), `skills ${JSON.stringify(ids)}`);
  return `${card.name}: ${card.description}; skills ${ids.join(', ')}`;
});

const transports = {
  jsonrpc: () => new JsonRpcTransportFactory({ fetchImpl: fetch }),
  rest: () => new RestTransportFactory({ fetchImpl: fetch }),
};

async function run(kind, text) {
  const tf = transports[kind]();
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [tf], preferredTransports: [tf.protocolName] }),
  );
  const client = await factory.createFromAgentCard(card);
  const res = await client.sendMessage({
    message: { messageId: randomUUID(), role: Role.ROLE_USER, parts: [{ content: { $case: 'text', value: text } }] },
  });
  const t = res?.payload?.$case === 'task' ? res.payload.value : res;
  assert(t && t.id && t.status, `SendMessage answered ${JSON.stringify(res).slice(0, 300)}`);
  return t;
}

// dataOf returns the JSON value of a data part, whatever shape the SDK
// gives it.
function dataOf(part) {
  const c = part?.content;
  if (c?.$case !== 'data') return undefined;
  const v = c.value;
  return v && typeof v === 'object' && 'data' in v && Object.keys(v).length === 1 ? v.data : v;
}

// runResults reads the verified-results artifact: its text and its data.
function runResults(t) {
  const a = (t.artifacts || []).find((x) => x.name === 'verified-results');
  assert(a, `no verified-results artifact among ${JSON.stringify((t.artifacts || []).map((x) => x.name))}`);
  const text = a.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
  const data = a.parts.map(dataOf).find((d) => d !== undefined);
  assert(data, `verified-results has no data part: ${JSON.stringify(a).slice(0, 300)}`);
  return { text, data };
}

for (const kind of Object.keys(transports)) {
  await check(`${kind}: SendMessage runs the contract to the end; the artifact holds 3 verified results`, async () => {
    const t = await run(kind, `the ${kind} river`);
    assert(t.status.state === TaskState.TASK_STATE_COMPLETED, `state ${taskStateToJSON(t.status.state)}: ${JSON.stringify(t.metadata)}`);
    const { text, data } = runResults(t);
    assert(data.contract === 'report' && data.passed === true, `results ${JSON.stringify(data).slice(0, 300)}`);
    assert(data.steps.length === 3, `${data.steps.length} steps`);
    data.steps.forEach((s, i) => {
      assert(s.step === STEPS[i], `step ${i} is ${s.step}`);
      const vr = s.verifiedResult;
      assert(vr && vr.step === STEPS[i] && vr.verification?.passed === true, `step ${s.step}: ${JSON.stringify(vr).slice(0, 300)}`);
      assert(vr.verification.timing.totalMs > 0, `step ${s.step} has no timing`);
    });
    assert(/every step verified/.test(text), `summary ${JSON.stringify(text)}`);
    const onTask = t.metadata?.pactum?.verifiedResult;
    assert(onTask?.steps?.length === 3 && onTask.passed === true, `metadata.pactum.verifiedResult = ${JSON.stringify(onTask).slice(0, 300)}`);
    return `task ${t.id}: ${data.steps.map((s) => `${s.step} ${s.verifiedResult.verification.timing.totalMs.toFixed(1)}ms`).join(', ')}`;
  });

  await check(`${kind}: a violated step fails the run, named with its assertion in the verified results`, async () => {
    const t = await run(kind, 'a report with no title');
    assert(t.status.state === TaskState.TASK_STATE_FAILED, `state ${taskStateToJSON(t.status.state)}`);
    const p = t.metadata?.pactum || {};
    assert(p.errorCode === 'contract_violation', `errorCode ${p.errorCode}`);
    assert(/step draft/.test(p.reason) && /the draft starts with a title/.test(p.reason), `reason ${p.reason}`);
    const vr = p.verifiedResult;
    assert(vr?.passed === false && vr.steps?.length === 2, `verifiedResult ${JSON.stringify(vr).slice(0, 300)}`);
    const failedAssertions = vr.steps[1].verifiedResult?.verification?.postGate?.failedAssertions || [];
    assert(failedAssertions[0]?.message === 'the draft starts with a title', `draft's failed assertions ${JSON.stringify(failedAssertions)}`);
    return p.reason.slice(0, 120);
  });
}

process.exit(failed ? 1 : 0);
