// packaging/kubernetes/*.yaml against the Kubernetes API's OpenAPI schemas,
// as kubectl's strict schema check would: kubernetes-models (generated from
// the Kubernetes project's published OpenAPI definitions) validates types,
// required fields and enums; the same package's declarations list every
// field an object may have, so an unknown field, which the API server drops
// without a word, fails here.  The box's policy in its ConfigMap must load.
//
// Usage: node validate.mjs MANIFEST_DIR [BOX_BINARY]
import { readFileSync, readdirSync, existsSync, mkdtempSync, writeFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { execFileSync } from "node:child_process";
import { tmpdir } from "node:os";
import { parseAllDocuments } from "yaml";

const here = dirname(fileURLToPath(import.meta.url));
const modules = join(here, "node_modules");
const [dir, box] = process.argv.slice(2);
const failures = [];

// --- the fields each API type declares, read from its .d.ts ---------------
const declared = new Map(); // file -> its text without comments
function source(file) {
  if (!declared.has(file))
    declared.set(file, readFileSync(file, "utf8").replace(/\/\*[\s\S]*?\*\//g, "").replace(/\/\/.*$/gm, ""));
  return declared.get(file);
}

function moduleFile(spec, from) {
  const base = spec.startsWith(".") ? join(dirname(from), spec) : join(modules, spec);
  return base.replace(/\.js$/, "") + ".d.ts";
}

// the text between the brace at `open` and its match
function braced(text, open) {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === "{" || text[i] === "<") depth++;
    else if (text[i] === "}" || text[i] === ">") depth--;
    if (depth === 0) return text.slice(open + 1, i);
  }
  throw new Error("unbalanced declaration");
}

// one level of members: "name"?: TYPE;
function members(body) {
  const out = new Map();
  let depth = 0, start = 0;
  for (let i = 0; i <= body.length; i++) {
    const c = body[i];
    if (c === "{" || c === "<" || c === "(") depth++;
    else if (c === "}" || c === ">" || c === ")") depth--;
    else if ((c === ";" || i === body.length) && depth === 0) {
      const m = body.slice(start, i).trim().match(/^"?([^"?:]+)"?\??:\s*([\s\S]+)$/);
      if (m) out.set(m[1], m[2].trim());
      start = i + 1;
    }
  }
  return out;
}

// A type: {kind: "object", fields: Map(name -> type)} | {kind: "array", of}
// | {kind: "map", of} | {kind: "leaf"}
function resolveName(name, file) {
  const text = source(file);
  const alias = text.match(new RegExp(`export type \\{[^}]*\\b(\\w+) as ${name}\\b`));
  if (alias) return resolveName(alias[1], file);
  const iface = text.match(new RegExp(`export interface ${name}(?: extends ([\\w, ]+))? \\{`));
  if (iface) {
    const fields = new Map();
    for (const parent of (iface[1] || "").split(",").map((s) => s.trim()).filter(Boolean)) {
      if (parent === "TypeMeta") {
        fields.set("apiVersion", { kind: "leaf" });
        fields.set("kind", { kind: "leaf" });
      } else {
        for (const [k, v] of resolveName(parent, file).fields) fields.set(k, v);
      }
    }
    const body = braced(text, iface.index + iface[0].length - 1);
    for (const [k, t] of members(body)) fields.set(k, { lazy: t, file });
    return { kind: "object", fields };
  }
  const typeAlias = text.match(new RegExp(`export type ${name} = ([^;]+);`));
  if (typeAlias) return resolveType(typeAlias[1].trim(), file);
  const imported = text.match(new RegExp(`import \\{[^}]*\\b${name}\\b[^}]*\\} from "([^"]+)"`));
  if (imported) return resolveName(name, moduleFile(imported[1], file));
  throw new Error(`no declaration of ${name} in ${file}`);
}

function resolveType(t, file) {
  let m;
  if ((m = t.match(/^Array<([\s\S]+)>$/))) return { kind: "array", of: { lazy: m[1], file } };
  if ((m = t.match(/^\{\s*\[key: string\]:\s*([\s\S]+?);?\s*\}$/))) return { kind: "map", of: { lazy: m[1], file } };
  if (/^[A-Z]\w*$/.test(t)) return resolveName(t, file);
  return { kind: "leaf" }; // string, number, boolean, literal unions, any
}

function force(ref) {
  if (!ref.lazy) return ref;
  const r = resolveType(ref.lazy, ref.file);
  delete ref.lazy;
  return Object.assign(ref, r);
}

function unknownFields(value, type, path) {
  type = force(type);
  if (value === null || typeof value !== "object") return;
  if (type.kind === "array" && Array.isArray(value))
    value.forEach((v, i) => unknownFields(v, type.of, `${path}[${i}]`));
  else if (type.kind === "map")
    for (const [k, v] of Object.entries(value)) unknownFields(v, type.of, `${path}.${k}`);
  else if (type.kind === "object")
    for (const [k, v] of Object.entries(value)) {
      if (!type.fields.has(k)) failures.push(`${path}: unknown field "${k}"`);
      else unknownFields(v, type.fields.get(k), `${path}.${k}`);
    }
}

// --- the manifests ----------------------------------------------------------
const seen = [];
for (const name of readdirSync(dir).filter((f) => /\.ya?ml$/.test(f)).sort()) {
  const docs = parseAllDocuments(readFileSync(join(dir, name), "utf8"));
  for (const doc of docs) {
    if (doc.errors.length) {
      failures.push(`${name}: ${doc.errors[0].message}`);
      continue;
    }
    const obj = doc.toJSON();
    if (!obj) continue;
    const where = `${name}: ${obj.kind}/${obj.metadata?.name}`;
    const group = obj.apiVersion?.includes("/") ? obj.apiVersion : `v1`;
    const modPath = join(modules, "kubernetes-models", group, `${obj.kind}.js`);
    if (!obj.apiVersion || !obj.kind || !existsSync(modPath)) {
      failures.push(`${where}: no such API type ${obj.apiVersion} ${obj.kind}`);
      continue;
    }
    const Model = (await import(modPath))[obj.kind];
    try {
      new Model(obj).validate();
    } catch (e) {
      failures.push(`${where}: ${e.message}`);
    }
    unknownFields(obj, resolveName(`I${obj.kind}`, modPath.replace(/\.js$/, ".d.ts")), where);
    seen.push(obj);
    console.log(`checked ${where}`);
  }
}

// --- what the manifests say to each other -------------------------------------
const byKind = (kind, name) => seen.find((o) => o.kind === kind && o.metadata.name === name);
for (const o of seen.filter((o) => o.kind === "Deployment")) {
  const sel = o.spec.selector.matchLabels, labels = o.spec.template.metadata.labels;
  for (const [k, v] of Object.entries(sel))
    if (labels[k] !== v) failures.push(`Deployment/${o.metadata.name}: its selector does not match its Pods`);
  for (const v of o.spec.template.spec.volumes ?? [])
    if (v.configMap && !byKind("ConfigMap", v.configMap.name))
      failures.push(`Deployment/${o.metadata.name}: no ConfigMap ${v.configMap.name}`);
}
const config = byKind("ConfigMap", "box-config");
if (!config) failures.push("no ConfigMap box-config");
else {
  const toml = config.data["box.toml"];
  const target = toml.match(/destination = "http:\/\/([^:/"]+):(\d+)"/);
  const svc = target && byKind("Service", target[1]);
  if (!svc || !svc.spec.ports.some((p) => p.port === Number(target[2])))
    failures.push(`box.toml exports to ${target?.[1]}:${target?.[2]}, which no Service serves`);
  if (box) {
    const tmp = mkdtempSync(join(tmpdir(), "box-k8s-"));
    writeFileSync(join(tmp, "policy.dw"), config.data["policy.dw"]);
    try {
      const out = execFileSync(box, ["policy", "check", join(tmp, "policy.dw")], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
      if (out.trim() !== "ok") failures.push(`policy.dw: ${out}`);
    } catch (e) {
      failures.push(`policy.dw does not load: ${e.stdout}${e.stderr}`);
    } finally {
      rmSync(tmp, { recursive: true });
    }
  }
}

for (const f of failures) console.log(`FAIL: ${f}`);
console.log(failures.length ? `${failures.length} failures` : `ok: ${seen.length} objects`);
process.exit(failures.length ? 1 : 0);
