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
 * an MCP client. A callback receives `{payload, reason, extra, pendingId}` (the pending id is
 * an idempotency key) and returns the resolve result's text, a `CallToolResult`, or nothing
 * (for a reject: staged's default `Discarded: ...` text). A thrown error becomes an error
 * result, which keeps the preview pending.
 *
 * Set `STAGED_PLUGIN_LOG` to a file path to append one JSON line per callback run.
 */

import { appendFileSync } from "node:fs";

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
        if (log) {
          appendFileSync(log, JSON.stringify({ callback: toolName, pendingId: input.pendingId, reason: input.reason }) + "\n");
        }
        try {
          return toResult(await fn(input));
        } catch (err) {
          return toResult(errorText(err), true);
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
