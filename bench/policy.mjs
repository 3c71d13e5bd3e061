// bench/policy.mjs — the workloads of bench/policy and cedar-wasm's side of it.
//   node policy.mjs gen DIR          writes DIR/policy100.dw, DIR/requests.json, DIR/policy10k.dw
//   node policy.mjs cedar DIR ROUNDS prints {"median_ns": …, "stateless_median_ns": …}
import { writeFileSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import path from "node:path";

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, "../tests/policy/package.json"));
const cedar = require("@cedar-policy/cedar-wasm/nodejs");
const { SCHEMA, cedarContext } = await import(path.join(here, "../tests/policy/differential.mjs"));

// A realistic 100-rule policy: project reads/writes, per-program exec and
// spawn rules with argument conditions, secrets forbidden, a few hosts.
function policy(n) {
  const rules = [];
  const dirs = ["src", "docs", "tests", "bench", "build", "scripts", "vendor", "tools", "data", "notes"];
  const progs = ["git", "cargo", "make", "npm", "python3", "node", "rg", "jq", "ls", "cat", "grep", "sed", "head", "tail", "sort"];
  const hosts = ["api.example.com", "crates.io", "registry.npmjs.org", "github.com", "pypi.org"];
  for (let i = 0; rules.length < n; i++) {
    const k = i % 10, d = dirs[i % dirs.length] + (i >= 10 ? i : ""), p = progs[i % progs.length] + (i >= 15 ? i : "");
    const id = `@id("r${i}")\n`;
    if (k === 0) rules.push(`${id}permit(principal, action in [Box::Action::"fs:read", Box::Action::"fs:write"], resource)\nwhen { context.input.path == "~/work/${d}" || context.input.path like "~/work/${d}/*" };`);
    else if (k === 1) rules.push(`${id}permit(principal, action == Box::Action::"fs:read", resource)\nwhen { context.input.path like "/usr/share/${d}/*" && context.input.operation != Box::FsReadOperation::"exec" };`);
    else if (k === 2) rules.push(`${id}@description("secrets stay out of reach")\nforbid(principal, action == Box::Action::"fs:read", resource)\nwhen { context.input.path like "*/.env*" || context.input.path like "~/.${d}/*" };`);
    else if (k === 3) rules.push(`${id}permit(principal, action == Box::Action::"shell:exec", resource)\nwhen { context.input.program == "${p}" };`);
    else if (k === 4) rules.push(`${id}permit(principal, action == Box::Action::"shell:spawn", resource)\nwhen { context.input.program_path == "/usr/bin/${p}" && context.input.cwd like "/work/*" };`);
    else if (k === 5) rules.push(`${id}forbid(principal, action == Box::Action::"shell:spawn", resource)\nwhen { context.input.program == "${p}" && context.input has arg1 && ["push", "publish", "upload"].contains(context.input.arg1) };`);
    else if (k === 6) rules.push(`${id}permit(principal, action == Box::Action::"net:connect", resource)\nwhen { context.input.host == "${hosts[i % hosts.length]}" && context.input.port == 443 };`);
    else if (k === 7) rules.push(`${id}permit(principal, action == Box::Action::"http:request", resource)\nwhen { context.input.host == "${hosts[i % hosts.length]}" && ["GET", "HEAD"].contains(context.input.method) && context.input.body_bytes < 1048576 };`);
    else if (k === 8) rules.push(`${id}forbid(principal, action == Box::Action::"fs:delete", resource)\nwhen { context.input.path like "~/work/${d}/.git*" };`);
    else rules.push(`${id}permit(principal, action == Box::Action::"fs:delete", resource)\nwhen { context.input.path like "/tmp/${d}/*" && context.input.operation == Box::FsDeleteOperation::"remove_file" };`);
  }
  return rules.join("\n");
}

function requests() {
  const fs = (action, p, op) => ({ action, input: { path: p, operation: op } });
  const exec = (action, program, args, extra = {}) => {
    const input = { command: [program, ...args].join(" "), program, arg_count: args.length, cwd: "/work/src", ...extra };
    if (args[0]) input.arg1 = args[0];
    if (args[1]) input.arg2 = args[1];
    return { action, input };
  };
  return [
    fs("fs:read", "~/work/src/main.c", "read_content"), fs("fs:read", "~/work/docs/README.md", "read_metadata"),
    fs("fs:read", "~/work/src/.env", "read_content"), fs("fs:read", "/etc/passwd", "read_content"),
    fs("fs:write", "~/work/build/out.o", "write_content"), fs("fs:write", "~/elsewhere/x", "write_content"),
    fs("fs:delete", "/tmp/data/x", "remove_file"), fs("fs:delete", "~/work/src/.git/index", "remove_file"),
    fs("fs:move", "~/work/src/a", "rename"), fs("fs:read", "/usr/share/docs/x", "enumerate"),
    exec("shell:exec", "ls", ["-la"]), exec("shell:exec", "rm", ["-rf", "/"]), exec("shell:exec", "grep", ["-n", "TODO"]),
    exec("shell:spawn", "git", ["push", "origin"], { program_path: "/usr/bin/git" }),
    exec("shell:spawn", "cargo", ["build"], { program_path: "/usr/bin/cargo" }),
    exec("shell:spawn", "evil", [], { program_path: "/tmp/evil" }),
    { action: "net:connect", input: { host: "crates.io", port: 443 } },
    { action: "net:connect", input: { host: "evil.example", ip: "6.6.6.6", port: 80 } },
    { action: "http:request", input: { host: "api.example.com", port: 443, method: "GET", path: "/v1", body_bytes: 0, intercepted: true } },
    { action: "http:request", input: { host: "api.example.com", port: 443, method: "POST", path: "/v1", body_bytes: 10, intercepted: true } },
  ];
}

const median = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)]; };

const [cmd, dir, roundsArg] = process.argv.slice(2);
if (cmd === "gen") {
  writeFileSync(path.join(dir, "policy100.dw"), policy(100) + "\n");
  writeFileSync(path.join(dir, "requests.json"), JSON.stringify(requests()));
  writeFileSync(path.join(dir, "policy10k.dw"), policy(10000) + "\n");
} else if (cmd === "cedar") {
  const rounds = Number(roundsArg);
  const text = readFileSync(path.join(dir, "policy100.dw"), "utf8");
  const reqs = JSON.parse(readFileSync(path.join(dir, "requests.json"), "utf8"));
  const v = cedar.validate({ schema: SCHEMA, policies: { staticPolicies: text }, validationSettings: { mode: "strict" } });
  if (v.type !== "success" || v.validationErrors.length) throw new Error("cedar refuses the bench policy: " + JSON.stringify(v));
  cedar.preparsePolicySet("bench", { staticPolicies: text });
  cedar.preparseSchema("box", SCHEMA);
  const per = [], stateless = [];
  for (const r of reqs) {
    const call = {
      principal: { type: "Box::Agent", id: "self" }, action: { type: "Box::Action", id: r.action },
      resource: { type: "Box::Resource", id: "unused" }, context: cedarContext(r.action, r.input), entities: [],
    };
    const samples = [], samples2 = [];
    for (let k = 0; k < 10; k++) cedar.statefulIsAuthorized({ ...call, preparsedPolicySetId: "bench", preparsedSchemaName: "box", validateRequest: true });
    for (let k = 0; k < rounds; k++) {
      const t = process.hrtime.bigint();
      const a = cedar.statefulIsAuthorized({ ...call, preparsedPolicySetId: "bench", preparsedSchemaName: "box", validateRequest: true });
      samples.push(Number(process.hrtime.bigint() - t));
      if (a.type !== "success") throw new Error(JSON.stringify(a));
    }
    for (let k = 0; k < Math.max(20, rounds / 20); k++) {
      const t = process.hrtime.bigint();
      cedar.isAuthorized({ ...call, policies: { staticPolicies: text }, schema: SCHEMA, validateRequest: true });
      samples2.push(Number(process.hrtime.bigint() - t));
    }
    per.push(median(samples));
    stateless.push(median(samples2));
  }
  console.log(JSON.stringify({ median_ns: median(per), stateless_median_ns: median(stateless) }));
}
