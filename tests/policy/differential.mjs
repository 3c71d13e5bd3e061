// differential.mjs — boxfs policy engine vs @cedar-policy/cedar-wasm on
// generated policy sets × requests over Box's schema (issue 3, item 6).
//
//   node differential.mjs PATH/TO/policy_driver [--cases N] [--seed S] [--verbose]
//
// For every case both engines load the same policy text; strict validation
// must agree (load ok vs refused), and for every request the decision and
// the set of determining policies must agree.  The one documented
// difference (spec/policy.md §0.3, §3.1): when Cedar reports an evaluation
// error, Box denies the whole request (cause internal_fault) and keeps
// Cedar's attribution.
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const cedar = require("@cedar-policy/cedar-wasm/nodejs");

export const SCHEMA = `
namespace Box {
  entity Agent;
  entity Resource;
  entity FsReadOperation enum ["read_content", "read_metadata", "enumerate", "read_link", "change_dir", "exec"];
  entity FsWriteOperation enum ["write_content", "create_dir", "set_permissions", "symlink"];
  entity FsDeleteOperation enum ["remove_file", "remove_dir"];
  entity FsMoveOperation enum ["rename"];
  entity FsOtherOperation enum ["other"];
  entity FsResponseResult enum ["completed", "descriptor_issued", "indeterminate"];
  type FsOutput = { result: FsResponseResult };
  type StatusOutput = { status: Long };
  action "fs:read" appliesTo { principal: Agent, resource: Resource, context: { input: { path: String, operation: FsReadOperation }, output?: FsOutput } };
  action "fs:write" appliesTo { principal: Agent, resource: Resource, context: { input: { path: String, operation: FsWriteOperation }, output?: FsOutput } };
  action "fs:delete" appliesTo { principal: Agent, resource: Resource, context: { input: { path: String, operation: FsDeleteOperation }, output?: FsOutput } };
  action "fs:move" appliesTo { principal: Agent, resource: Resource, context: { input: { path: String, operation: FsMoveOperation }, output?: FsOutput } };
  action "fs:other" appliesTo { principal: Agent, resource: Resource, context: { input: { path: String, operation: FsOtherOperation }, output?: FsOutput } };
  action "net:connect" appliesTo { principal: Agent, resource: Resource, context: { input: { host: String, ip?: String, port: Long } } };
  action "http:request" appliesTo { principal: Agent, resource: Resource, context: { input: { host: String, port: Long, method: String, path: String, body_bytes: Long, intercepted: Bool }, output?: StatusOutput } };
  action "shell:exec" appliesTo { principal: Agent, resource: Resource, context: { input: { command: String, program: String, arg1?: String, arg2?: String, arg_count: Long, cwd: String }, output?: StatusOutput } };
  action "shell:spawn" appliesTo { principal: Agent, resource: Resource, context: { input: { command: String, program: String, arg1?: String, arg2?: String, arg_count: Long, cwd: String, program_path: String, credential_reads?: Set<String> }, output?: StatusOutput } };
  action "mcp:call" appliesTo { principal: Agent, resource: Resource, context: { input: { server: String, method: String, tool?: String, prompt?: String, uri?: String } } };
}`;

// field tables: name → [type, optional]
const FS = (op) => ({ path: ["String", false], operation: [op, false] });
const EXEC = { command: ["String", false], program: ["String", false], arg1: ["String", true], arg2: ["String", true], arg_count: ["Long", false], cwd: ["String", false] };
export const ACTIONS = {
  "fs:read": FS("Box::FsReadOperation"),
  "fs:write": FS("Box::FsWriteOperation"),
  "fs:delete": FS("Box::FsDeleteOperation"),
  "fs:move": FS("Box::FsMoveOperation"),
  "fs:other": FS("Box::FsOtherOperation"),
  "net:connect": { host: ["String", false], ip: ["String", true], port: ["Long", false] },
  "http:request": { host: ["String", false], port: ["Long", false], method: ["String", false], path: ["String", false], body_bytes: ["Long", false], intercepted: ["Bool", false] },
  "shell:exec": EXEC,
  "shell:spawn": { ...EXEC, program_path: ["String", false], credential_reads: ["Set<String>", true] },
  "mcp:call": { server: ["String", false], method: ["String", false], tool: ["String", true], prompt: ["String", true], uri: ["String", true] },
};
export const ENUMS = {
  "Box::FsReadOperation": ["read_content", "read_metadata", "enumerate", "read_link", "change_dir", "exec"],
  "Box::FsWriteOperation": ["write_content", "create_dir", "set_permissions", "symlink"],
  "Box::FsDeleteOperation": ["remove_file", "remove_dir"],
  "Box::FsMoveOperation": ["rename"],
  "Box::FsOtherOperation": ["other"],
};
const NAMES = Object.keys(ACTIONS);
const STRINGS = {
  path: ["~/src/project/a.txt", "~/src/project/.env", "/tmp/x", "~", "~/notes.txt", "/etc/passwd", "~/src/project/sub/b.md"],
  program: ["git", "rm", "ls", "cat", "./x", "curl"],
  program_path: ["/usr/bin/git", "~/bin/tool", "/bin/rm"],
  command: ["git status", "rm -rf /", "ls", "cat a.txt"],
  cwd: ["/work", "~/src/project", "/tmp"],
  arg1: ["status", "-rf", "push", "commit"],
  arg2: ["-m", "x", "origin"],
  host: ["example.com", "api.example.com", "localhost"],
  ip: ["1.2.3.4", "127.0.0.1", "fd00:ec::254"],
  method: ["GET", "POST", "tools/call", "tools/list"],
  server: ["demo", "fs"],
  tool: ["add", "rm"], prompt: ["p"], uri: ["file:///x"],
  _: ["a", "b", "git", "x*y", ""],
};
const LONGS = [0, 1, 2, 80, 443, -1, 1000];
const BIG = ["9223372036854775807", "-9223372036854775808", "4611686018427387904"];

// ---- deterministic PRNG ---------------------------------------------------------
let state = 1n;
function seed(s) { state = BigInt(s) || 1n; }
function rnd() { // xorshift64*
  state ^= state >> 12n; state ^= (state << 25n) & 0xFFFFFFFFFFFFFFFFn; state ^= state >> 27n;
  return Number(((state * 0x2545F4914F6CDD1Dn) & 0xFFFFFFFFFFFFFFFFn) >> 11n) / 2 ** 53;
}
const ri = (n) => Math.floor(rnd() * n);
const pick = (a) => a[ri(a.length)];
const chance = (p) => rnd() < p;

const q = (s) => JSON.stringify(s);

// ---- expressions -------------------------------------------------------------------
// ctx: {actions: [...names], bad: probability of an ill-typed or unguarded form}
function commonFields(acts, type) {
  const first = ACTIONS[acts[0]];
  return Object.keys(first).filter((f) => acts.every((a) => ACTIONS[a][f] && ACTIONS[a][f][0] === first[f][0] && (type === undefined || first[f][0] === type)));
}
function fieldRef(ctx, type) {
  const fs = commonFields(ctx.actions, type);
  if (!fs.length) return null;
  const f = pick(fs);
  const optional = ctx.actions.some((a) => ACTIONS[a][f][1]);
  return { f, expr: `context.input.${f}`, optional };
}
function guarded(ctx, ref, body) {
  if (!ref.optional || chance(ctx.bad)) return body;
  return `(context.input has ${ref.f} && ${body})`;
}
function strLit(f) { return q(pick(STRINGS[f] || STRINGS._)); }

function genLong(ctx, d) {
  const r = ri(d <= 0 ? 2 : 7);
  if (r === 0) return String(pick(LONGS));
  if (r === 1) { const ref = fieldRef(ctx, "Long"); return ref ? ref.expr : chance(0.3) ? pick(BIG) : String(pick(LONGS)); }
  if (r === 2) return `(${genLong(ctx, d - 1)} + ${genLong(ctx, d - 1)})`;
  if (r === 3) return `(${genLong(ctx, d - 1)} - ${genLong(ctx, d - 1)})`;
  if (r === 4) return `(${genLong(ctx, d - 1)} * ${chance(0.3) ? pick(BIG) : genLong(ctx, d - 1)})`;
  if (r === 5) return `(-${genLong(ctx, d - 1)})`;
  return `(if ${genBool(ctx, d - 1)} then ${genLong(ctx, d - 1)} else ${genLong(ctx, d - 1)})`;
}
function genStr(ctx, d) {
  const r = ri(d <= 0 ? 2 : 4);
  if (r === 0) return strLit("_");
  if (r === 1 || r === 3) {
    const ref = fieldRef(ctx, "String");
    if (!ref) return strLit("_");
    return ref.optional && !chance(ctx.bad) ? `(if context.input has ${ref.f} then ${ref.expr} else ${strLit(ref.f)})` : ref.expr;
  }
  return `(if ${genBool(ctx, d - 1)} then ${genStr(ctx, d - 1)} else ${genStr(ctx, d - 1)})`;
}
function genBool(ctx, d) {
  const r = ri(d <= 0 ? 3 : 22);
  switch (r) {
    case 0: return pick(["true", "false"]);
    case 1: { const f = pick(Object.keys(ACTIONS[pick(ctx.actions)])); return `context.input has ${f}`; }
    case 2: return `action == Box::Action::${q(pick(NAMES))}`;
    case 3: return `(!${genBool(ctx, d - 1)})`;
    case 4: return `(${genBool(ctx, d - 1)} && ${genBool(ctx, d - 1)})`;
    case 5: return `(${genBool(ctx, d - 1)} || ${genBool(ctx, d - 1)})`;
    case 6: return `(if ${genBool(ctx, d - 1)} then ${genBool(ctx, d - 1)} else ${genBool(ctx, d - 1)})`;
    case 7: return `(${genLong(ctx, d - 1)} ${pick(["<", "<=", ">", ">=", "==", "!="])} ${genLong(ctx, d - 1)})`;
    case 8: case 9: {
      const ref = fieldRef(ctx, "String");
      if (!ref) return "true";
      return guarded(ctx, ref, `${ref.expr} ${pick(["==", "!="])} ${strLit(ref.f)}`);
    }
    case 10: {
      const ref = fieldRef(ctx, "String");
      if (!ref) return "false";
      const base = pick(STRINGS[ref.f] || STRINGS._);
      const pat = pick([base, base.slice(0, 3) + "*", "*" + base.slice(-2), "*", "~/src/*", "*\\**"]);
      return guarded(ctx, ref, `${ref.expr} like ${q(pat).replace(/\\\\\*/g, "\\*")}`);
    }
    case 11: {
      const ref = fieldRef(ctx, "String");
      if (!ref) return "true";
      const items = [strLit(ref.f), strLit(ref.f), strLit(ref.f)].slice(0, 1 + ri(3));
      return guarded(ctx, ref, `[${items.join(", ")}].contains(${ref.expr})`);
    }
    case 12: {
      const ref = fieldRef(ctx, "Set<String>");
      if (!ref) return `[${genLong(ctx, 0)}, ${genLong(ctx, 0)}].contains(${genLong(ctx, d - 1)})`;
      const m = pick(["contains", "containsAll", "containsAny", "isEmpty"]);
      const arg = m === "contains" ? strLit("_") : m === "isEmpty" ? "" : `[${strLit("_")}]`;
      return guarded(ctx, ref, `${ref.expr}.${m}(${arg})`);
    }
    case 13: {
      const ops = ctx.actions.map((a) => ACTIONS[a].operation && ACTIONS[a].operation[0]).filter(Boolean);
      if (ops.length !== ctx.actions.length) return `principal == Box::Agent::"self"`;
      const t = ops[0];
      if (!ops.every((o) => o === t)) return `context.input.operation == ${t}::${q(pick(ENUMS[t]))}`; // statically false elsewhere? no: a type error Cedar also sees
      return `context.input.operation ${pick(["==", "!="])} ${t}::${q(pick(ENUMS[t]))}`;
    }
    case 14: return pick([`principal == Box::Agent::"self"`, `resource == Box::Resource::"unused"`, `principal is Box::Agent`, `resource is Box::Agent`, `principal in Box::Agent::"self"`]);
    case 15: return `action in [${[pick(NAMES), pick(NAMES)].map((a) => `Box::Action::${q(a)}`).join(", ")}]`;
    case 16: return pick([`ip("127.0.0.1").isLoopback()`, `ip("10.0.0.0/8").isInRange(ip("10.0.0.0/16"))`, `ip("10.1.2.3").isInRange(ip("10.0.0.0/8"))`,
      `ip("ff02::1").isMulticast()`, `ip("::1").isIpv6()`, `decimal("1.5").lessThan(decimal("2.25"))`, `decimal("-0.5") == decimal("-0.50")`,
      `decimal("3.0").greaterThanOrEqual(decimal("3.0001"))`, `datetime("2024-01-01").offset(duration("1d")) == datetime("2024-01-02T00:00:00Z")`,
      `duration("1h30m").toMinutes() == 90`, `datetime("2024-02-29T12:00:00+0100").toTime() == duration("11h")`, `duration("-1ms") < duration("0ms")`]);
    case 17: return `{a: ${genLong(ctx, d - 1)}, "b c": ${genStr(ctx, d - 1)}}${pick([".a == 1", ` has a`, `["b c"] == "a"`, " has d"])}`;
    case 18: if (chance(ctx.bad * 3)) return pick([`context.input.bogus == "x"`, `${genStr(ctx, 0)} == ${genLong(ctx, 0)}`, `${genStr(ctx, 0)} < 3`, `[1, "a"].contains(1)`, `[].isEmpty()`, `ip("1.2.3") == ip("1.2.3.4")`, `(${genLong(ctx, 0)} && true)`, `principal.name == "x"`]);
      return genBool(ctx, d - 1);
    case 19: return `(${genStr(ctx, d - 1)} ${pick(["==", "!="])} ${genStr(ctx, d - 1)})`;
    case 20: return `(${genLong(ctx, d - 1)} + ${pick(BIG)} > 0)`;
    default: {
      const ref = fieldRef(ctx, "Bool");
      return ref ? `${ref.expr} == ${pick(["true", "false"])}` : "true";
    }
  }
}

function genRule(i) {
  const effect = chance(0.55) ? "permit" : "forbid";
  let actions, scope;
  const k = ri(10);
  if (k < 5) {
    let a = pick(NAMES);
    if (a === "fs:other") a = "fs:read";
    actions = [a];
    scope = `action == Box::Action::${q(a)}`;
  } else if (k < 8) {
    const fam = pick([["fs:read", "fs:write", "fs:delete", "fs:move"], ["shell:exec", "shell:spawn"], ["net:connect", "http:request"], NAMES.filter((a) => a !== "fs:other")]);
    actions = [...new Set([pick(fam), pick(fam), pick(fam)])].slice(0, 1 + ri(3));
    scope = `action in [${actions.map((a) => `Box::Action::${q(a)}`).join(", ")}]`;
  } else {
    actions = NAMES.slice();
    scope = "action";
  }
  const principal = pick(["principal", "principal", "principal == Box::Agent::\"self\"", "principal is Box::Agent"]);
  const resource = pick(["resource", "resource", "resource == Box::Resource::\"unused\"", "resource is Box::Resource in Box::Resource::\"unused\""]);
  const ctx = { actions, bad: 0.04 };
  let text = `${effect}(${principal}, ${scope}, ${resource})`;
  const nclauses = ri(3);
  for (let c = 0; c < nclauses; c++) text += `\n  ${chance(0.8) ? "when" : "unless"} { ${genBool(ctx, 1 + ri(3))} }`;
  return text + ";";
}

function genValue(action, f) {
  const [type] = ACTIONS[action][f];
  if (type === "String") return pick(STRINGS[f] || STRINGS._);
  if (type === "Long") return pick(LONGS);
  if (type === "Bool") return chance(0.5);
  if (type === "Set<String>") return [pick(STRINGS._), pick(STRINGS._)].slice(0, ri(3));
  return pick(ENUMS[type]);
}
function genRequest() {
  const action = pick(NAMES);
  const input = {};
  for (const [f, [type, optional]] of Object.entries(ACTIONS[action])) {
    if (optional && chance(0.5)) continue;
    input[f] = genValue(action, f);
  }
  return { action, input };
}

export function cedarContext(action, input) {
  const out = {};
  for (const [f, v] of Object.entries(input)) {
    const type = ACTIONS[action][f][0];
    out[f] = ENUMS[type] ? { __entity: { type, id: v } } : v;
  }
  return { input: out };
}

// policies and schema are preparsed once per case (statefulIsAuthorized):
// the same answers as isAuthorized, without reparsing on every request
function cedarAnswer(psetId, req) {
  const ans = cedar.statefulIsAuthorized({
    principal: { type: "Box::Agent", id: "self" },
    action: { type: "Box::Action", id: req.action },
    resource: { type: "Box::Resource", id: "unused" },
    context: cedarContext(req.action, req.input),
    preparsedSchemaName: "box",
    validateRequest: true,
    preparsedPolicySetId: psetId,
    entities: [],
  });
  if (ans.type !== "success") throw new Error("cedar failure: " + JSON.stringify(ans.errors));
  const r = ans.response;
  return {
    decision: r.decision,
    reason: r.diagnostics.reason.map((id) => id.replace(/^policy(\d+)$/, "policy_$1")).sort(),
    errors: r.diagnostics.errors.length,
  };
}

export function cedarValid(policy) {
  const v = cedar.validate({ schema: SCHEMA, policies: { staticPolicies: policy }, validationSettings: { mode: "strict" } });
  if (v.type !== "success") return { ok: false, why: JSON.stringify(v.errors) };
  if (v.validationErrors.length) return { ok: false, why: v.validationErrors.map((e) => e.error.message).join("; ") };
  return { ok: true };
}

export function generate(n, s) {
  seed(s);
  const cases = [];
  for (let i = 0; i < n; i++) {
    const rules = [];
    const nr = 1 + ri(5);
    for (let r = 0; r < nr; r++) rules.push(genRule(r));
    const requests = [];
    for (let r = 0; r < 6; r++) requests.push(genRequest());
    cases.push({ policy: rules.join("\n"), requests });
  }
  return cases;
}

function main() {
  const args = process.argv.slice(2);
  const driver = args[0];
  let n = 2500, s = 20240601, verbose = false;
  for (let i = 1; i < args.length; i++) {
    if (args[i] === "--cases") n = Number(args[++i]);
    else if (args[i] === "--seed") s = Number(args[++i]);
    else if (args[i] === "--verbose") verbose = true;
  }
  const cases = generate(n, s);
  const input = cases.map((c) => JSON.stringify(c)).join("\n") + "\n";
  const run = spawnSync(driver, ["decide"], { input, maxBuffer: 1 << 30 });
  if (run.status !== 0) {
    console.error("policy_driver failed:", run.stderr.toString());
    process.exit(1);
  }
  const answers = run.stdout.toString().trim().split("\n").map((l) => JSON.parse(l));
  cedar.preparseSchema("box", SCHEMA);
  let loaded = 0, refusedBoth = 0, decisions = 0, documented = 0, permits = 0, forbids = 0;
  const disagreements = [];
  cases.forEach((c, i) => {
    const ours = answers[i];
    const valid = cedarValid(c.policy);
    if (!valid.ok || ours.load !== "ok") {
      if (valid.ok !== (ours.load === "ok"))
        disagreements.push({ kind: "validation", policy: c.policy, cedar: valid.ok ? "valid" : valid.why, box: ours.load === "ok" ? "loaded" : ours.error });
      else refusedBoth++;
      return;
    }
    loaded++;
    const pre = cedar.preparsePolicySet(`case${i}`, { staticPolicies: c.policy });
    if (pre.type !== "success") throw new Error("cedar cannot preparse " + c.policy);
    c.requests.forEach((req, k) => {
      const ce = cedarAnswer(`case${i}`, req);
      const bx = ours.results[k];
      decisions++;
      let expect = ce.decision;
      if (ce.errors) {
        documented++;
        expect = "deny";
        if (bx.cause !== "internal_fault") disagreements.push({ kind: "error-not-fault", policy: c.policy, req, cedar: ce, box: bx });
      }
      if (expect === "allow") permits++;
      else if (ce.reason.length) forbids++;
      const ids = [...bx.determining].sort();
      if (bx.decision !== expect || JSON.stringify(ids) !== JSON.stringify(ce.reason))
        disagreements.push({ kind: "decision", policy: c.policy, req, cedar: ce, box: bx });
    });
  });
  for (const d of disagreements.slice(0, verbose ? 1000 : 5)) console.log("DISAGREEMENT", JSON.stringify(d, null, 1));
  console.log(`differential: ${cases.length} policy sets (${loaded} loaded by both, ${refusedBoth} refused by both), ` +
    `${decisions} requests decided (${permits} permits, ${forbids} forbidden, ${documented} evaluation errors = documented difference); ` +
    `${disagreements.length} disagreements`);
  process.exit(disagreements.length ? 1 : 0);
}

if (import.meta.url === `file://${process.argv[1]}`) main();
