/**
 * A staged plugin in TypeScript: `regex_replace` stages a regular-expression replacement in
 * one file and shows its diff. Nothing is written until `resolve apply`; then the `_apply_regex`
 * callback writes the new text, but only if the file still holds exactly what the preview read
 * (else it fails, and the preview stays pending). It has no reject callback: a discard gets
 * staged's default text. Run from the workspace root (staged does that).
 */

import { createHash } from "node:crypto";
import { readFileSync, realpathSync, writeFileSync } from "node:fs";
import { relative, resolve, sep } from "node:path";

import { StagedPlugin, z } from "staged-plugin";

const plugin = new StagedPlugin("regex");
const root = realpathSync(process.cwd());

/** `path` under the workspace root, refusing anything that leaves it. */
function inside(path: string): string {
  const full = realpathSync(resolve(root, path));
  const rel = relative(root, full);
  if (rel === "" || rel.startsWith("..") || rel.startsWith(sep)) {
    throw new Error(`${path} is outside the workspace`);
  }
  return full;
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

interface Payload {
  path: string;
  pattern: string;
  replacement: string;
  flags: string;
  before: string;
}

function replaceAll(text: string, p: Payload): string {
  const flags = p.flags.includes("g") ? p.flags : p.flags + "g";
  return text.replace(new RegExp(p.pattern, flags), p.replacement);
}

/** A line diff of `before` and `after` (same line count when no line is added or removed). */
function diff(path: string, before: string, after: string): string {
  const a = before.split("\n");
  const b = after.split("\n");
  const out = [`--- a/${path}`, `+++ b/${path}`];
  const n = Math.max(a.length, b.length);
  for (let i = 0; i < n; i++) {
    if (a[i] === b[i]) continue;
    out.push(`@@ line ${i + 1} @@`);
    if (a[i] !== undefined) out.push(`-${a[i]}`);
    if (b[i] !== undefined) out.push(`+${b[i]}`);
  }
  return out.join("\n");
}

const applyRegex = plugin.callback("apply_regex", ({ payload, reason }) => {
  const p = payload as Payload;
  const full = inside(p.path);
  const text = readFileSync(full, "utf8");
  if (sha256(text) !== p.before) {
    throw new Error(`${p.path} changed since the preview; nothing was written`);
  }
  const after = replaceAll(text, p);
  writeFileSync(full, after);
  return `Replaced /${p.pattern}/ in ${p.path}. Reason: ${reason}`;
});

plugin.tool(
  "regex_replace",
  {
    description:
      "Stage a regular-expression replacement in one file (JavaScript syntax; every match is replaced). Shows the diff; nothing is written until `resolve` applies it.",
    inputSchema: {
      path: z.string().describe("the file, relative to the workspace root"),
      pattern: z.string().describe("the regular expression"),
      replacement: z.string().describe("the replacement ($1 for groups)"),
      flags: z.string().optional().describe("extra flags, e.g. \"i\""),
    },
  },
  ({ path, pattern, replacement, flags }, api) => {
    const full = inside(path);
    const before = readFileSync(full, "utf8");
    const payload: Payload = { path, pattern, replacement, flags: flags ?? "", before: sha256(before) };
    const after = replaceAll(before, payload);
    if (after === before) {
      return `No match for /${pattern}/ in ${path}; nothing to stage.`;
    }
    const count = before.match(new RegExp(pattern, payload.flags.includes("g") ? payload.flags : payload.flags + "g"))?.length ?? 0;
    api.pushPendingAction({
      label: `Regex: ${count} replacement${count === 1 ? "" : "s"} in ${path}`,
      apply: applyRegex,
      payload,
      details: { path, count },
    });
    return `${diff(path, before, after)}\nCall resolve to apply or discard it.`;
  },
);

await plugin.run();
