// A test plugin on the TypeScript helper (its build in crates/plugin/helpers/typescript/dist):
// `stage_note {text}` stages appending a line to notes.txt, and its apply takes a second first.
// Every callback run is logged to STAGED_PLUGIN_LOG by the helper.

import { appendFileSync } from "node:fs";

import { StagedPlugin, z } from "../../../helpers/typescript/dist/index.js";

const plugin = new StagedPlugin("lab");

const apply = plugin.callback("apply_note", async ({ payload, reason, pendingId }) => {
  await new Promise((resolve) => setTimeout(resolve, 1000));
  appendFileSync("notes.txt", `${payload.text}\n`);
  return `Noted ${payload.text} (${pendingId}). Reason: ${reason}`;
});

plugin.tool(
  "stage_note",
  { description: "Stage appending a line to notes.txt.", inputSchema: { text: z.string(), mode: z.string().optional() } },
  (args, api) => {
    api.pushPendingAction({ label: `Note: ${args.text}`, apply, payload: { text: args.text } });
    return "staged";
  },
);

await plugin.run();
