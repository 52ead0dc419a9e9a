/**
 * Write staged plugins in TypeScript, on the official MCP SDK (`@modelcontextprotocol/sdk`).
 *
 * A staged plugin is an MCP server that staged starts as a child process. A tool stages a
 * preview with `api.pushPendingAction({label, apply, reject})`, shaped like the reference's
 * `pushPendingAction`; staged keeps it on the workspace's durable stack, and `resolve` later
 * calls the `apply` or `reject` callback, perhaps in another process and after a restart.
 * This module hides the `_meta["staged/pending"]` convention (`crates/plugin/PROTOCOL.md`,
 * version 1).
 *
 * Callbacks are tools named `_<name>`: staged calls them, and never offers them to a model or
 * an MCP client. A callback receives `{payload, reason, extra, pendingId}` and returns the
 * resolve result's text, a `CallToolResult`, or nothing (for a reject: staged's default
 * `Discarded: ...` text). A thrown error becomes an error result, which keeps the preview
 * pending.
 *
 * The pending id is an idempotency key, and this helper honours it for you: a callback that
 * returned a result for a pending id is not run again for that id. staged may call it again
 * when it could not see the answer (the plugin was stopped after a timeout, or staged itself
 * was killed, after the callback had done its work); the helper then answers with the result
 * recorded the first time, in the folder staged names in `STAGED_PLUGIN_STATE`
 * (`.staged/plugins/<plugin>/`). Two runs for the same id never overlap. A run that was stopped
 * half-way is run again: write callbacks so that finishing an interrupted run is safe.
 *
 * Set `STAGED_PLUGIN_LOG` to a file path to append one JSON line per callback run (with
 * `"replayed": true` when the recorded result was returned).
 */

import { createHash } from "node:crypto";
import {
  appendFileSync,
  closeSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";

import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

export { z };

/** The version of the `staged/pending` convention this helper writes. */
export const PROTOCOL_VERSION = 1;

/** The `_meta` key of a staged preview. */
export const PENDING_META_KEY = "staged/pending";

/** What a callback receives when the preview is resolved. */
export interface CallbackInput {
  /** The payload the tool pushed. */
  payload: unknown;
  /** The reason given to `resolve`. */
  reason: string;
  /** The `extra` object given to `resolve`, or null. */
  extra: Record<string, unknown> | null;
  /** `pending-action:<tool>:<seq>`: an idempotency key. */
  pendingId: string | null;
}

/** What a tool or a callback returns: text, a whole result, or nothing. */
export type Reply = string | CallToolResult | undefined | void;

/** A registered callback; staged stores and calls it by name. */
export interface Callback {
  readonly name: string;
}

/** A preview, as a tool pushes it. */
export interface PendingAction {
  /** A short human summary, e.g. `Rename: 2 files`. */
  label: string;
  /** The callback that applies the preview. */
  apply: Callback | string;
  /** The callback that cleans up after a discard, if any. */
  reject?: Callback | string;
  /**
   * The callback that reverts the apply for `staged undo` (and redoes it), if any. It gets
   * `extra["staged/undo"] = {redo, applied, entry}`: `redo` is true when it should apply again,
   * `applied` is the apply's structured content.
   */
  undo?: Callback | string;
  /** Any JSON the callbacks get back. */
  payload?: unknown;
  /** Details for listings and renderers. */
  details?: unknown;
}

/** What a tool handler gets besides its arguments. */
export interface ToolApi {
  /** Stages a preview; call it at most once per tool call. */
  pushPendingAction(action: PendingAction): void;
}

/** The environment variable naming the plugin's state folder (set by staged). */
export const STATE_ENV = "STAGED_PLUGIN_STATE";

/** Records older than this many days are removed when a new one is written. */
const RECORD_DAYS = 30;

function errorCode(err: unknown): string | undefined {
  return typeof err === "object" && err !== null && "code" in err ? String((err as { code: unknown }).code) : undefined;
}

/** Whether the process `pid` still runs. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return errorCode(err) === "EPERM";
  }
}

/**
 * The callback runs already done, one JSON file per idempotency key, in the folder staged names
 * in `STAGED_PLUGIN_STATE`. A run in progress holds `<key>.running` (its pid): a second run of
 * the same key waits for it (in this process) or is refused while that process lives.
 */
class Ledger {
  private readonly inProcess = new Map<string, Promise<unknown>>();

  constructor(private readonly folder: string) {}

  static key(callback: string, pendingId: string, extra: Record<string, unknown> | null): string {
    // An undo (and its redo) is keyed by the log entry it reverts too.
    const undo = extra?.["staged/undo"];
    const entry = typeof undo === "object" && undo !== null ? ((undo as Record<string, unknown>).entry ?? null) : null;
    return createHash("sha256").update(JSON.stringify([callback, pendingId, entry])).digest("hex");
  }

  private ready(): void {
    try {
      if (lstatSync(this.folder).isSymbolicLink()) {
        throw new Error(`${this.folder} is a symlink; the plugin state folder must be a real folder`);
      }
    } catch (err) {
      if (errorCode(err) !== "ENOENT") {
        throw err;
      }
    }
    mkdirSync(this.folder, { recursive: true });
  }

  /** Runs `fn` with the key held, one run at a time. */
  async hold<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const before = this.inProcess.get(key) ?? Promise.resolve();
    const mine = before.catch(() => undefined).then(() => this.holdFile(key, fn));
    this.inProcess.set(key, mine);
    try {
      return await mine;
    } finally {
      if (this.inProcess.get(key) === mine) {
        this.inProcess.delete(key);
      }
    }
  }

  private async holdFile<T>(key: string, fn: () => Promise<T>): Promise<T> {
    this.ready();
    const marker = join(this.folder, `${key}.running`);
    for (;;) {
      try {
        const fd = openSync(marker, "wx", 0o600);
        writeSync(fd, String(process.pid));
        closeSync(fd);
        break;
      } catch (err) {
        if (errorCode(err) !== "EEXIST") {
          throw err;
        }
        const pid = Number.parseInt(readFileSync(marker, "utf8"), 10);
        if (Number.isInteger(pid) && pid !== process.pid && alive(pid)) {
          throw new Error(`an earlier run of this callback for the same pending id is still running (pid ${pid})`);
        }
        // Left by a run that was stopped: it may have done part of its work.
        unlinkSync(marker);
      }
    }
    try {
      return await fn();
    } finally {
      try {
        unlinkSync(marker);
      } catch {
        // already gone
      }
    }
  }

  get(key: string): { result: CallToolResult } | undefined {
    try {
      return JSON.parse(readFileSync(join(this.folder, `${key}.json`), "utf8")) as { result: CallToolResult };
    } catch (err) {
      if (errorCode(err) === "ENOENT") {
        return undefined;
      }
      throw err;
    }
  }

  put(key: string, record: unknown): void {
    const temp = join(this.folder, `.${key}.${process.pid}.tmp`);
    const fd = openSync(temp, "wx", 0o600);
    try {
      writeSync(fd, JSON.stringify(record));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, join(this.folder, `${key}.json`));
    this.prune();
  }

  private prune(): void {
    const cutoff = Date.now() - RECORD_DAYS * 86400 * 1000;
    try {
      for (const name of readdirSync(this.folder)) {
        if (!name.endsWith(".json")) {
          continue;
        }
        const path = join(this.folder, name);
        try {
          if (lstatSync(path).mtimeMs < cutoff) {
            unlinkSync(path);
          }
        } catch {
          // removed meanwhile
        }
      }
    } catch {
      // the folder is gone; nothing to prune
    }
  }
}

function ledger(): Ledger | undefined {
  const folder = process.env[STATE_ENV];
  return folder ? new Ledger(folder) : undefined;
}

function toResult(reply: Reply, isError = false): CallToolResult {
  if (reply === undefined || reply === null) {
    return { content: [], isError };
  }
  if (typeof reply === "string") {
    return { content: [{ type: "text", text: reply }], isError };
  }
  return reply;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** An MCP server whose tools may stage previews. `server` is the underlying `McpServer`. */
export class StagedPlugin {
  readonly server: McpServer;

  constructor(name: string, version = "0.1.0") {
    this.server = new McpServer({ name, version });
  }

  /** Registers `fn` as the callback `_<name>`. */
  callback(name: string, fn: (input: CallbackInput) => Reply | Promise<Reply>): Callback {
    const toolName = "_" + name.replace(/^_+/, "");
    const log = process.env.STAGED_PLUGIN_LOG;
    this.server.registerTool(
      toolName,
      {
        description: `staged callback (${name})`,
        inputSchema: {
          payload: z.any().optional(),
          reason: z.string(),
          extra: z.record(z.string(), z.unknown()).nullable().optional(),
          pendingId: z.string().nullable().optional(),
        },
      },
      async (args) => {
        const input: CallbackInput = {
          payload: args.payload ?? null,
          reason: args.reason,
          extra: (args.extra as Record<string, unknown> | null | undefined) ?? null,
          pendingId: args.pendingId ?? null,
        };
        const note = (replayed: boolean) => {
          if (log) {
            const line: Record<string, unknown> = { callback: toolName, pendingId: input.pendingId, reason: input.reason };
            if (replayed) {
              line.replayed = true;
            }
            appendFileSync(log, JSON.stringify(line) + "\n");
          }
        };
        const call = async (): Promise<CallToolResult> => {
          note(false);
          try {
            return toResult(await fn(input));
          } catch (err) {
            return toResult(errorText(err), true);
          }
        };
        const records = ledger();
        const pendingId = input.pendingId;
        if (!records || !pendingId) {
          return call();
        }
        const key = Ledger.key(toolName, pendingId, input.extra);
        try {
          return await records.hold(key, async () => {
            const done = records.get(key);
            if (done) {
              note(true);
              return done.result;
            }
            const result = await call();
            if (!result.isError) {
              try {
                records.put(key, { callback: toolName, pendingId, result });
              } catch (err) {
                process.stderr.write(`staged-plugin: could not record the run of ${toolName} for ${pendingId}: ${errorText(err)}\n`);
              }
            }
            return result;
          });
        } catch (err) {
          return toResult(`${toolName} was not run: its idempotency record for ${pendingId} is unusable (${errorText(err)})`, true);
        }
      },
    );
    return { name: toolName };
  }

  /** Registers a tool whose handler may stage a preview through `api.pushPendingAction`. */
  tool<Shape extends z.ZodRawShape>(
    name: string,
    config: { description: string; title?: string; inputSchema: Shape },
    handler: (args: z.infer<z.ZodObject<Shape>>, api: ToolApi) => Reply | Promise<Reply>,
  ): void {
    const register = this.server.registerTool.bind(this.server) as (
      name: string,
      config: { description: string; title?: string; inputSchema: Shape },
      cb: (args: z.infer<z.ZodObject<Shape>>) => Promise<CallToolResult>,
    ) => unknown;
    register(name, config, async (args) => {
      const pushed: Record<string, unknown>[] = [];
      const api: ToolApi = {
        pushPendingAction(action: PendingAction) {
          if (pushed.length > 0) {
            throw new Error("a tool call stages at most one preview");
          }
          if (!action.label) {
            throw new Error("label must not be empty");
          }
          const entry: Record<string, unknown> = {
            version: PROTOCOL_VERSION,
            label: action.label,
            apply: typeof action.apply === "string" ? action.apply : action.apply.name,
            payload: action.payload ?? null,
          };
          if (action.reject !== undefined) {
            entry.reject = typeof action.reject === "string" ? action.reject : action.reject.name;
          }
          if (action.undo !== undefined) {
            entry.undo = typeof action.undo === "string" ? action.undo : action.undo.name;
          }
          if (action.details !== undefined) {
            entry.details = action.details;
          }
          pushed.push(entry);
        },
      };
      let result: CallToolResult;
      try {
        result = toResult(await handler(args, api));
      } catch (err) {
        return toResult(errorText(err), true);
      }
      if (pushed.length > 0 && !result.isError) {
        result = { ...result, _meta: { ...(result._meta ?? {}), [PENDING_META_KEY]: pushed[0] } };
      }
      return result;
    });
  }

  /** Serves over stdio, as staged expects. */
  async run(): Promise<void> {
    await this.server.connect(new StdioServerTransport());
  }
}
