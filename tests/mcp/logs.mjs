// logs.mjs — a client's log messages from its server, awaited: for client.mjs and
// stream_client.mjs.
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

// Collects CLIENT's log messages; returns a function that resolves to the first one that
// holds text, once it came, and throws after 30 seconds.
export function awaitingLogs(client) {
  const logs = [];
  let woken = () => {};
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    logs.push(String(n.params.data));
    woken();
  });
  return async (text) => {
    const deadline = Date.now() + 30000;
    for (;;) {
      const found = logs.find((l) => l.includes(text));
      if (found !== undefined) return found;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no log message with "${text}" in 30 seconds: ${logs}`);
      await new Promise((resolve) => {
        woken = resolve;
        setTimeout(resolve, left).unref(); /* it keeps no client alive once done */
      });
    }
  };
}
