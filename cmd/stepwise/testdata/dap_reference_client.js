// Drives `stepwise dap` with Microsoft's reference DAP client,
// @vscode/debugadapter-testsupport, as an editor would: TestDAPReferenceClient
// runs it with node, NODE_PATH pointing at the package.
//
// usage: node dap_reference_client.js STEPWISE PROJECT_DIR
// It debugs the demo's triage_queue over one item, and exits 0 when every
// check holds, or 1 with what failed.
'use strict';

const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { DebugClient } = require('@vscode/debugadapter-testsupport');

const [stepwise, project] = process.argv.slice(2);
const plan = path.join(project, '.stepwise', 'plans', 'triage_queue.yaml');
const lines = fs.readFileSync(plan, 'utf8').split('\n');
const lineOf = (text) => {
  const i = lines.findIndex((l) => l.includes(text));
  assert.ok(i >= 0, `${plan} has no line with ${text}`);
  return i + 1;
};
const cardLine = lineOf('- id: card');
const verdictLine = lineOf('- id: verdict');

async function main() {
  // The client spawns `stepwise dap` and speaks to it over stdio.
  const dc = new DebugClient(stepwise, 'dap', 'stepwise', { cwd: project }, true);
  // The machine may be loaded; the library's 5 s is for a program's stops.
  dc.defaultTimeout = 60000;
  const output = [];
  dc.on('output', (e) => output.push(e.body.output));
  await dc.start();
  // The library keeps the adapter's process to itself; its end is awaited
  // here, so that the test's project is not removed while the adapter
  // still writes its record.
  const adapter = dc._adapterProcess;
  const adapterExited = new Promise((resolve) => adapter.on('exit', resolve));
  try {
    await session(dc);
  } finally {
    await dc.stop();
    await adapterExited;
  }
  const text = output.join('');
  assert.ok(text.includes('▶ assess'), `the console does not show the run's progress:\n${text}`);
  // The editor's breakpoints were its own: the plan's kept file has none.
  const kept = path.join(project, '.stepwise', 'breakpoints', 'triage_queue.json');
  const keptText = fs.existsSync(kept) ? fs.readFileSync(kept, 'utf8') : '';
  assert.ok(!keptText.includes('verdict'), `the editor's breakpoints were kept in ${kept}:\n${keptText}`);
}

// stop waits for the next stopped event and returns it with its stack.
async function stop(dc, reasons) {
  const ev = await dc.waitForEvent('stopped');
  assert.ok(reasons.includes(ev.body.reason), `stopped by ${ev.body.reason} (${ev.body.description}), want one of ${reasons}`);
  assert.strictEqual(ev.body.allThreadsStopped, true);
  const st = await dc.stackTraceRequest({ threadId: ev.body.threadId });
  return { ev, frames: st.body.stackFrames };
}

// scope returns the variables of the named scope of the innermost frame.
async function scope(dc, frames, name) {
  const scopes = (await dc.scopesRequest({ frameId: frames[0].id })).body.scopes;
  const s = scopes.find((x) => x.name === name);
  assert.ok(s, `no ${name} scope among ${scopes.map((x) => x.name)}`);
  const vars = (await dc.variablesRequest({ variablesReference: s.variablesReference })).body.variables;
  return { ref: s.variablesReference, vars: Object.fromEntries(vars.map((v) => [v.name, v])) };
}

async function evaluate(dc, frames, expression, context) {
  return (await dc.evaluateRequest({ expression, context, frameId: frames[0].id })).body.result;
}

async function move(dc, request, threadId, reasons) {
  const stopped = stop(dc, reasons);
  await dc[request + 'Request']({ threadId });
  return stopped;
}

async function session(dc) {
  const initialized = dc.waitForEvent('initialized');
  await dc.launch({ program: 'triage_queue', cwd: project, inputs: { on_call: 'Priya', limit: 1 } });
  await initialized;

  // A line breakpoint in the map's body, and a function breakpoint on the
  // verdict agent's first round; asks take their unattended path.
  const bps = (await dc.setBreakpointsRequest({ source: { path: plan }, breakpoints: [{ line: cardLine }] })).body.breakpoints;
  assert.ok(bps[0].verified, `the map body's line breakpoint: ${JSON.stringify(bps[0])}`);
  assert.strictEqual(bps[0].line, cardLine);
  const fbs = (await dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'assess/do.*/verdict/agent.1 round' }, { name: 'assess result' }] })).body.breakpoints;
  assert.ok(fbs.every((b) => b.verified), `function breakpoints: ${JSON.stringify(fbs)}`);
  await dc.setExceptionBreakpointsRequest({ filters: ['error'] });
  const first = stop(dc, ['function breakpoint']);
  await dc.configurationDoneRequest();

  // The round: its stack, its Model scope, an evaluate.
  let { ev, frames } = await first;
  assert.match(frames[0].name, /^assess\/do\.0\/verdict\/agent\.1 \(round\)/);
  assert.strictEqual(frames[0].source.path, plan);
  assert.strictEqual(frames[0].line, verdictLine);
  const model = await scope(dc, frames, 'Model');
  assert.ok(model.vars.messages.indexedVariables >= 2, `the round's messages: ${JSON.stringify(model.vars.messages)}`);
  assert.match(await evaluate(dc, frames, 'item.id', 'hover'), /^"CHK-\d+"$/);
  const thread = ev.body.threadId;

  // next, stepIn and stepOut each come to a stop.
  ({ frames } = await move(dc, 'next', thread, ['step']));
  assert.strictEqual(await evaluate(dc, frames, 'stop.kind', 'watch'), '"reply"');
  // A reply set in the model's place is checked as it is set, and a
  // command the debug console refuses is an error.
  await assert.rejects(dc.send('setExpression', { expression: 'stop.output', value: '{"text": 5}', frameId: frames[0].id }), /text must be a string/);
  await assert.rejects(dc.evaluateRequest({ expression: 'frobnicate 3', context: 'repl', frameId: frames[0].id }), /unknown command 'frobnicate'/);
  ({ ev, frames } = await move(dc, 'stepIn', thread, ['step']));
  ({ ev, frames } = await move(dc, 'stepOut', ev.body.threadId, ['step', 'breakpoint']));

  // On to the card's line, then into its result, which the editor sets.
  while (!(ev.body.reason === 'breakpoint' && frames[0].line === cardLine)) {
    ({ ev, frames } = await move(dc, 'continue', ev.body.threadId, ['breakpoint', 'step', 'function breakpoint']));
  }
  assert.strictEqual(await evaluate(dc, frames, 'stop.kind', 'watch'), '"step"');
  ({ ev, frames } = await move(dc, 'stepIn', ev.body.threadId, ['step']));
  assert.strictEqual(await evaluate(dc, frames, 'stop.kind', 'watch'), '"result"');
  const result = await scope(dc, frames, 'Result');
  assert.strictEqual(result.vars.severity.value, '"sev1"');
  const set = await dc.setVariableRequest({ variablesReference: result.ref, name: 'severity', value: '"sev2"' });
  assert.strictEqual(set.body.value, '"sev2"');
  // The Result scope the editor holds stays valid, and shows the value set.
  const after = (await dc.variablesRequest({ variablesReference: result.ref })).body.variables;
  assert.strictEqual(after.find((v) => v.name === 'severity').value, '"sev2"');
  await assert.rejects(dc.setVariableRequest({ variablesReference: (await scope(dc, frames, 'Result')).ref, name: 'severity', value: 'loud' }), /not JSON/);
  assert.strictEqual(await evaluate(dc, frames, 'card.severity', 'watch'), '"sev2"');

  // The map's result holds the value set; the run goes on to its end.
  ({ ev, frames } = await move(dc, 'continue', ev.body.threadId, ['function breakpoint']));
  assert.strictEqual(await evaluate(dc, frames, 'assess.results.0.severity', 'repl'), '"sev2"');
  const exited = dc.waitForEvent('exited');
  const terminated = dc.waitForEvent('terminated');
  await dc.continueRequest({ threadId: ev.body.threadId });
  assert.strictEqual((await exited).body.exitCode, 0);
  await terminated;
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`${err.stack || err}\n`);
    process.exit(1);
  },
);
