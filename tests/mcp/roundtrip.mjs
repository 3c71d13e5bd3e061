// roundtrip.mjs — mean milliseconds of a tools/call round trip (echo) over stdio to PROGRAM,
// after one warm-up session: used by bench/mcp for the box's alias and the server itself.
// Usage: node roundtrip.mjs PROGRAM CALLS
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [program, calls = "200"] = process.argv.slice(2);
const client = new Client({ name: "boxfs-bench", version: "1.0.0" });
await client.connect(new StdioClientTransport({ command: program, args: [], stderr: "ignore" }));
for (let i = 0; i < 20; i++) await client.callTool({ name: "echo", arguments: { message: "warm" } });
const n = Number(calls);
const t0 = process.hrtime.bigint();
for (let i = 0; i < n; i++) await client.callTool({ name: "echo", arguments: { message: `m${i}` } });
const ms = Number(process.hrtime.bigint() - t0) / 1e6 / n;
console.log(ms.toFixed(4));
await client.close();
