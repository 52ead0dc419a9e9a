// staged's plugin for opencode, written by `staged hook install opencode`.
// Before opencode runs an edit (edit, write, apply_patch), the plugin runs `staged hook
// opencode` with the call on stdin. In gate mode staged stages the edit as a preview and answers
// why it is refused; the plugin throws that reason, which opencode gives the model as the tool's
// error. When staged cannot run, fails, or answers anything else, the edit is refused too: the
// gate never lets an edit through unseen. In record mode every edit goes through, and staged
// records it after it ran. A bash call, in both modes, runs under staged's wrapper (staged shell-run)
// when staged answers with new arguments, which record or stage what the command writes.
// Remove it with: staged hook install opencode --uninstall
import { spawn } from "node:child_process";

const STAGED = @STAGED@;
const MODE = @MODE@;
const TOOLS = new Set(["edit", "write", "apply_patch"]);
const SHELL = "bash";
const TIMEOUT_MS = 120000;

function hook(event, directory) {
  const args = MODE === "record" ? ["hook", "opencode", "--mode", "record"] : ["hook", "opencode"];
  return new Promise((resolve) => {
    let out = "";
    let err = "";
    let done = false;
    let timer;
    const finish = (result) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(result);
    };
    let child;
    try {
      child = spawn(STAGED, args, { cwd: directory, stdio: ["pipe", "pipe", "pipe"] });
    } catch (e) {
      finish({ error: String((e && e.message) || e) });
      return;
    }
    timer = setTimeout(() => {
      child.kill("SIGKILL");
      finish({ error: `it took longer than ${TIMEOUT_MS / 1000} s` });
    }, TIMEOUT_MS);
    child.stdout.on("data", (d) => { out += d; });
    child.stderr.on("data", (d) => { err += d; });
    child.on("error", (e) => finish({ error: e.message }));
    child.on("close", (code, signal) => finish({ code, signal, out, err }));
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(event));
  });
}

// `{deny: reason}`, `{args}` to run the call with these arguments, `{}` to let the call run, or
// `{fail: why}` when staged did not answer.
function answer(result) {
  if (result.error !== undefined) return { fail: result.error };
  if (result.code !== 0) {
    const said = result.err.trim();
    const how = result.signal ? `it was killed by ${result.signal}` : `exit ${result.code}`;
    return { fail: said ? `${how}: ${said}` : how };
  }
  const text = result.out.trim();
  if (!text) return {};
  let reply;
  try {
    reply = JSON.parse(text);
  } catch {
    return { fail: "its answer is not JSON" };
  }
  if (reply && reply.decision === "deny" && typeof reply.reason === "string") return { deny: reply.reason };
  if (reply && reply.args && typeof reply.args === "object" && !Array.isArray(reply.args)) return { args: reply.args };
  return { fail: "its answer is not one this plugin knows" };
}

function refused(why) {
  return `staged's hook could not run (${why}), so this tool call is refused and nothing was written. Install staged, or remove its plugin: staged hook install opencode --uninstall`;
}

// The agent each session's last model request was made for: staged reads that agent's
// permission for bash before it wraps a command.
const agents = new Map();

export const StagedGate = async ({ directory }) => ({
  "chat.params": async (input) => {
    if (input && typeof input.agent === "string") agents.set(input.sessionID, input.agent);
  },
  "tool.execute.before": async (input, output) => {
    if (!TOOLS.has(input.tool) && input.tool !== SHELL) return;
    const event = {
      hook: "tool.execute.before",
      tool: input.tool,
      sessionID: input.sessionID,
      callID: input.callID,
      args: output.args,
      directory,
      agent: agents.get(input.sessionID),
    };
    const result = answer(await hook(event, directory));
    if (result.deny !== undefined) throw new Error(result.deny);
    // opencode runs the tool with the very object it gave the plugin: change it in place.
    if (result.args !== undefined && input.tool === SHELL) Object.assign(output.args, result.args);
    if (result.fail !== undefined && MODE !== "record") throw new Error(refused(result.fail));
  },
  "tool.execute.after": async (input) => {
    if (MODE !== "record" || !TOOLS.has(input.tool)) return;
    const event = {
      hook: "tool.execute.after",
      tool: input.tool,
      sessionID: input.sessionID,
      callID: input.callID,
      args: input.args,
      directory,
    };
    await hook(event, directory);
  },
});
