// SPDX-License-Identifier: Apache-2.0
// tests/mcp/client.mjs -- an MCP agent made of the official TypeScript SDK
// (@modelcontextprotocol/sdk, pinned in package.json), driving `kf mcp`
// over stdio the way Claude Desktop or any other MCP host does.
//
// Run by tests/e2e/test_mcp.py (which installs the SDK with `npm ci` and
// starts the cluster):  node client.mjs CONFIG_JSON
// CONFIG: {kf, args: [...kf mcp arguments], env: {...}, mode: "agent" |
//          "worker", problem, campaign_id (worker mode), wait_s}
// Every check throws with a message naming what was wrong; on success the
// last stdout line is one JSON object with what the python side checks
// against the database.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";

const cfg = JSON.parse(process.argv[2]);
const log = (...a) => console.error("[client]", ...a);

function check(cond, msg) {
  if (!cond) throw new Error("check failed: " + msg);
}

// The long calls: generous, a loaded CI machine is slow.
const LONG = { timeout: 600000 };

async function connect() {
  const transport = new StdioClientTransport({
    command: cfg.kf,
    args: ["mcp", ...cfg.args],
    env: cfg.env,
    stderr: "inherit", // kf mcp logs to stderr: it lands in the test log
  });
  const client = new Client({ name: "kf-e2e-agent", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

// A tool's answer as an object: structuredContent, which must equal the
// JSON text content (older clients read only the text).
function payload(res, name) {
  check(!res.isError, `${name} failed: ${JSON.stringify(res.content)}`);
  check(Array.isArray(res.content) && res.content[0].type === "text",
        `${name}: no text content`);
  const fromText = JSON.parse(res.content[0].text);
  check(res.structuredContent, `${name}: no structuredContent`);
  check(JSON.stringify(fromText) === JSON.stringify(res.structuredContent),
        `${name}: text and structuredContent differ`);
  return res.structuredContent;
}

async function call(client, name, args, opts) {
  const t0 = Date.now();
  const res = await client.callTool({ name, arguments: args }, undefined, opts);
  log(`${name} -> ${res.isError ? "isError" : "ok"} in ${Date.now() - t0} ms`);
  return res;
}

async function expectRpcError(client, name, args, code, pattern) {
  try {
    await client.callTool({ name, arguments: args });
  } catch (e) {
    check(e instanceof McpError, `${name}: expected an McpError, got ${e}`);
    check(e.code === code, `${name}: error code ${e.code}, wanted ${code}: ${e.message}`);
    check(pattern.test(e.message), `${name}: error '${e.message}' lacks ${pattern}`);
    return e.message;
  }
  throw new Error(`${name} ${JSON.stringify(args)}: expected a JSON-RPC error`);
}

// Waits until the candidate's evaluation is final, in short calls (each
// below the SDK's 60 s default, as an agent would).
async function waitFinal(client, campaign_id, candidate_id) {
  const deadline = Date.now() + cfg.wait_s * 1000;
  let progressed = 0;
  for (;;) {
    const r = payload(await call(client, "wait_evaluation",
      { campaign_id, candidate_id, timeout_seconds: 20 },
      { ...LONG, onprogress: () => { progressed++; } }), "wait_evaluation");
    check(r.candidate_id === candidate_id, "wait_evaluation: wrong candidate");
    if (r.final) return r;
    check(r.timed_out === true, "not final but not timed out");
    check(Date.now() < deadline,
          `candidate ${candidate_id} not evaluated after ${cfg.wait_s} s: ${JSON.stringify(r)}`);
  }
}

// A kernel that writes zeros: compiles, links, runs -- and is wrong.
const BROKEN = `#include "kf_candidate.h"
#include <string.h>
/* proposed by tests/mcp/client.mjs: all-zero outputs, must fail verify */
int kf_launch(const kf_args *a) {
  static const size_t esz[] = {4, 8, 2, 2, 4, 8};
  for (int i = 0; i < a->n_outputs; i++)
    memset(a->outputs[i].data, 0,
           (size_t)a->outputs[i].numel * esz[a->outputs[i].dtype]);
  return 0;
}
`;

async function agent() {
  const client = await connect();
  const sv = client.getServerVersion();
  check(sv && sv.name === "kernelfleet", `server info ${JSON.stringify(sv)}`);
  check(client.getServerCapabilities().tools, "no tools capability");
  check(/list_problems/.test(client.getInstructions() || ""), "no instructions");

  const tools = (await client.listTools()).tools;
  const names = tools.map((t) => t.name).sort();
  const want = ["best", "campaign_status", "create_campaign",
                "describe_problem", "list_problems", "propose_candidate",
                "wait_evaluation"];
  check(JSON.stringify(names) === JSON.stringify(want), `tools ${names}`);
  for (const t of tools) {
    check(t.inputSchema && t.inputSchema.type === "object",
          `${t.name}: inputSchema ${JSON.stringify(t.inputSchema)}`);
    check(t.description && t.description.length > 20, `${t.name}: description`);
  }

  const probs = payload(await call(client, "list_problems", {}), "list_problems");
  const ids = probs.problems.map((p) => p.problem);
  check(ids.includes(cfg.problem), `list_problems lacks ${cfg.problem}: ${ids}`);
  check(ids.includes("cpu/softmax") && ids.some((i) => i.startsWith("cuda/")),
        `list_problems: ${ids}`);

  const d = payload(await call(client, "describe_problem",
                               { problem: cfg.problem }), "describe_problem");
  check(d.spec && d.spec.name && Array.isArray(d.spec.inputs), "describe: spec");
  check(/int \(\*kf_launch_fn\)/.test(d.abi.source), "describe: ABI header");
  check(/kf_launch/.test(d.reference.source), "describe: reference source");
  check(d.templates.length > 0 && d.templates[0].source.length > 0,
        "describe: template sources");
  check(d.language === "c" && d.backend === "cpu", "describe: backend");

  // Tool errors the agent can read and fix (isError, not a protocol error).
  const nope = await call(client, "describe_problem", { problem: "cpu/nope" });
  check(nope.isError && /no such problem/.test(nope.content[0].text),
        `unknown problem: ${JSON.stringify(nope)}`);
  // Protocol errors through the SDK: unknown tool, arguments that break
  // the inputSchema.
  await expectRpcError(client, "no_such_tool", {}, -32602, /unknown tool/);
  await expectRpcError(client, "wait_evaluation",
                       { campaign_id: "one", candidate_id: 1 }, -32602,
                       /campaign_id: expected an integer/);
  await expectRpcError(client, "create_campaign",
                       { problem: cfg.problem, evalz: 3 }, -32602,
                       /unknown field/);

  const camp = payload(await call(client, "create_campaign",
    { problem: cfg.problem, name: "mcp-e2e", evals: cfg.evals, minutes: 30 }),
    "create_campaign");
  const campaign_id = camp.campaign_id;
  check(Number.isInteger(campaign_id) && campaign_id > 0, "campaign id");

  // While wait_evaluation blocks, the server answers pings, reports
  // progress, and a cancellation ends the wait.  Candidate 987654321 is
  // in no campaign, so only the cancellation (or the 600 s timeout) can
  // end this wait; the campaign is young and waits for our proposals.
  {
    const ac = new AbortController();
    let gotProgress;
    const progressed = new Promise((r) => { gotProgress = r; });
    const pending = client.callTool(
      { name: "wait_evaluation",
        arguments: { campaign_id, candidate_id: 987654321, timeout_seconds: 600 } },
      undefined,
      { signal: ac.signal, timeout: 900000, onprogress: (p) => gotProgress(p) });
    const first = await Promise.race([progressed,
                                      pending.then((r) => ({ returned: r }))]);
    check(!first.returned, `the wait ended by itself: ${JSON.stringify(first)}`);
    check(typeof first.progress === "number" && /waiting for candidate/.test(first.message),
          `progress notification ${JSON.stringify(first)}`);
    await client.ping(); // answered in the middle of the wait
    ac.abort("the test cancels the wait");
    let aborted = false;
    try { await pending; } catch (e) { aborted = true; log("wait cancelled:", String(e)); }
    check(aborted, "the cancelled call resolved");
    // The server is free again; had it ignored the cancellation it would
    // block this call for ten minutes and the 300 s timeout would fail it.
    payload(await call(client, "campaign_status", { campaign_id },
                       { timeout: 300000 }), "campaign_status");
  }

  // A good kernel of our own: the first template, knobs at their first
  // values, with a comment so it is not the template's source.
  const t = d.templates[0];
  const knobs = {};
  for (const [k, vals] of Object.entries(t.knobs)) knobs[k] = vals[vals.length - 1];
  const good = "/* proposed by tests/mcp/client.mjs */\n" + t.source;
  const pg = payload(await call(client, "propose_candidate",
    { campaign_id, source: good, knobs, template: t.name, proposer: "e2e" }),
    "propose_candidate");
  const pb = payload(await call(client, "propose_candidate",
    { campaign_id, source: BROKEN, proposer: "e2e" }), "propose_candidate");
  check(pg.candidate_id > 0 && pb.candidate_id > 0 &&
        pg.candidate_id !== pb.candidate_id, "candidate ids");
  check(pg.proposer === "mcp-e2e", `proposer ${pg.proposer}`);
  // Knobs outside the rules are refused before they travel.
  const badKnob = await call(client, "propose_candidate",
    { campaign_id, source: good, knobs: { "KF_X": "1" } });
  check(badKnob.isError && /knobs\.KF_X/.test(badKnob.content[0].text),
        "a KF_ knob was not refused");
  // A campaign that does not exist: the coordinator says so.
  const ghost = await call(client, "propose_candidate",
    { campaign_id: 987654321, source: good });
  check(ghost.isError && /ProposeCandidate/.test(ghost.content[0].text),
        `propose to a missing campaign: ${JSON.stringify(ghost)}`);

  const wg = await waitFinal(client, campaign_id, pg.candidate_id);
  const wb = await waitFinal(client, campaign_id, pb.candidate_id);
  check(wg.evaluations.length >= 1 && wb.evaluations.length >= 1,
        "no evaluations");
  const eg = wg.evaluations[0], eb = wb.evaluations[0];
  check(eg.outcome === "ok" && eg.passed === true && eg.time_ns_median > 0,
        `good candidate: ${JSON.stringify(eg)}`);
  check(eg.proposer === "mcp-e2e", `evaluation proposer ${eg.proposer}`);
  check(eb.outcome === "wrong_answer" && eb.passed === false &&
        eb.stage === "verify" && eb.reason.length > 0,
        `broken candidate: ${JSON.stringify(eb)}`);
  for (const e of [eg, eb])
    check("profile" in e && "diagnosis" in e, "profile/diagnosis keys");

  const st = payload(await call(client, "campaign_status",
                                { campaign_id, top: 3 }), "campaign_status");
  check(st.campaign_id === campaign_id && st.evals_done >= 2 &&
        st.outcomes.wrong_answer >= 1, `status ${JSON.stringify(st)}`);
  check(st.top.length >= 1 && st.top.length <= 3, "status: top");
  check(st.recent_failures.some((f) => f.candidate_id === pb.candidate_id &&
                                       f.stage === "verify"),
        `status: recent failures ${JSON.stringify(st.recent_failures)}`);

  const best = payload(await call(client, "best", { campaign_id }), "best");
  check(best.found === true && best.best.outcome === "ok" &&
        best.source.length > 0, `best ${JSON.stringify(best).slice(0, 400)}`);

  await client.close();
  return { campaign_id, good: pg.candidate_id, broken: pb.candidate_id,
           good_outcome: eg.outcome, broken_outcome: eb.outcome,
           broken_reason: eb.reason, best_candidate: best.best.candidate_id };
}

// With a worker's credential: reading the local problems works, anything
// that reaches the coordinator is refused by it.
async function worker() {
  const client = await connect();
  payload(await call(client, "list_problems", {}), "list_problems");
  const p = await call(client, "propose_candidate",
    { campaign_id: cfg.campaign_id, source: BROKEN });
  check(p.isError && /permission denied/.test(p.content[0].text) &&
        /worker credential may not call ProposeCandidate/.test(p.content[0].text),
        `worker propose: ${JSON.stringify(p)}`);
  const c = await call(client, "create_campaign", { problem: cfg.problem });
  check(c.isError && /may not call CreateCampaign/.test(c.content[0].text),
        `worker create: ${JSON.stringify(c)}`);
  const s = await call(client, "campaign_status", { campaign_id: cfg.campaign_id });
  check(s.isError && /permission denied/.test(s.content[0].text),
        `worker status: ${JSON.stringify(s)}`);
  await client.close();
  return { refused: [p.content[0].text, c.content[0].text] };
}

try {
  const out = cfg.mode === "worker" ? await worker() : await agent();
  console.log(JSON.stringify(out));
  process.exit(0);
} catch (e) {
  console.error("[client] FAILED:", e && e.stack ? e.stack : e);
  process.exit(1);
}
