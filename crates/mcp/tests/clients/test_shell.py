"""Shell commands under staged inside the real, unmodified Claude Code (docs/contract/shell.md).

staged's hook rewrites each `Bash` call (`updatedInput`) to run under `staged shell-run`, which
runs it in an overlay of the workspace and knows exactly what it wrote. In record mode a `sed -i`
and a heredoc are logged as one entry of the session, shown by `staged session show`, and the
`sed` hunk reverts to the exact bytes; in gate mode the same call leaves both files as they
were, the model's next request names the preview, and `resolve apply` writes the command's
result.
"""

import json
import tempfile
from pathlib import Path

from scripted_model import tool_results_anthropic, tool_results_responses
from test_real_clients import staged_bin
from test_hooks import ACCEPT_EDITS, EDITED, SOURCE, Watching, codex_tmp, install, log_entries, main_requests, \
    new_repo, pending, run_claude, run_codex, staged

__all__ = ["codex_tmp"]

COMMAND = "sed -i 's/oldApi(1)/newApi(1)/' src/a.ts && cat > src/b.ts <<'EOF'\nexport const b = 1;\nEOF"
B = "export const b = 1;\n"
# The command as a label: one line, cut at 80 characters.
LABEL = "Shell: " + COMMAND.replace("\n", "\\n")[:80] + "..."
BASH = ("tool", "Bash", {"command": COMMAND, "description": "Rename the call and add b.ts"})


def test_claude_code_record_mode_records_a_bash_sed_and_heredoc_and_reverts_the_sed_hunk():
    with tempfile.TemporaryDirectory() as tmp:
        root = new_repo(tmp)
        install(root, "claude-code", "--mode", "record")
        model = Watching([BASH, ("text", "Done.")], root, ["src/a.ts", "src/b.ts"]).start()
        try:
            run_claude(tmp, root, model, ["--allowedTools", "Bash"])
        finally:
            model.stop()
        results = tool_results_anthropic(main_requests(model)[-1])
        assert [name for name, _, _ in results] == ["Bash"], results
        assert not results[0][2], results[0]
        assert (root / "src" / "a.ts").read_text() == EDITED
        assert (root / "src" / "b.ts").read_text() == B
        entry = log_entries(root)[0]
        assert (entry["source"], entry["frontEnd"], entry["label"]) == ("shell", "hook:claude-code", LABEL), entry
        shown = staged(root, "session", "show")
        assert shown.returncode == 0, shown.stderr
        assert shown.stdout.count("diff --git ") == 2, shown.stdout
        assert "-oldApi(1);\n+newApi(1);\n" in shown.stdout, shown.stdout
        assert "+++ b/src/b.ts\n" in shown.stdout, shown.stdout
        out = staged(root, "session", "revert", "--only", "src/a.ts:1", "--reason", "keep the old call")
        assert out.returncode == 0, out.stdout + out.stderr
        assert (root / "src" / "a.ts").read_bytes() == SOURCE.encode()
        assert (root / "src" / "b.ts").read_text() == B


def test_claude_code_gate_mode_holds_a_bash_commands_writes_until_resolve_applies_them():
    with tempfile.TemporaryDirectory() as tmp:
        root = new_repo(tmp)
        install(root, "claude-code")
        script = [
            BASH,
            ("mcp", "resolve", {"action": "apply", "reason": "the command's rename and new file"}),
            ("text", "Done."),
        ]
        model = Watching(script, root, ["src/a.ts", "src/b.ts"]).start()
        try:
            run_claude(tmp, root, model, [*ACCEPT_EDITS, "--allowedTools", "Bash"])
        finally:
            model.stop()
        results = tool_results_anthropic(main_requests(model)[-1])
        assert [name for name, _, _ in results] == ["Bash", "mcp__staged__resolve"], results
        # The request after the Bash call: both files as they were, and the preview named.
        assert model.seen[1] == {"src/a.ts": SOURCE, "src/b.ts": None}, model.seen
        entry = log_entries(root)[0]
        told = results[0][1]
        assert (f"staged holds what this command wrote as a preview, and none of it was written to the workspace "
                f"yet: {entry['id']} ({LABEL}; src/a.ts, src/b.ts)") in told, told
        _, resolved, resolve_error = results[1]
        assert not resolve_error and json.dumps(f"Applied {LABEL}.")[1:-1] in resolved, resolved
        assert (root / "src" / "a.ts").read_text() == EDITED
        assert (root / "src" / "b.ts").read_text() == B
        assert (entry["source"], entry["reason"]) == ("shell", "the command's rename and new file"), entry
        assert pending(root) == [], json.dumps(pending(root))


# --- Codex ------------------------------------------------------------------------------------


def codex_shell_run(codex_tmp, mode, script):
    root = new_repo(codex_tmp)
    model = Watching(script, root, ["src/a.ts", "src/b.ts"]).start()
    try:
        run_codex(codex_tmp, root, model, mode=mode)
    finally:
        model.stop()
    assert not model.errors, model.errors
    return root, model, tool_results_responses(model.responses_main_requests()[-1])


def test_codex_record_mode_records_a_shell_commands_writes(codex_tmp):
    root, _, results = codex_shell_run(codex_tmp, "record", [
        ("tool", "exec_command", {"cmd": COMMAND}),
        ("text", "Done."),
    ])
    assert [name for name, _, _ in results] == ["exec_command"], results
    assert (root / "src" / "a.ts").read_text() == EDITED
    assert (root / "src" / "b.ts").read_text() == B
    entry = log_entries(root)[0]
    assert (entry["source"], entry["frontEnd"], entry["label"]) == ("shell", "hook:codex", LABEL), entry
    shown = staged(root, "session", "show")
    assert shown.stdout.count("diff --git ") == 2, shown.stdout
    out = staged(root, "session", "revert", "--only", "src/a.ts:1", "--reason", "keep the old call")
    assert out.returncode == 0, out.stdout + out.stderr
    assert (root / "src" / "a.ts").read_bytes() == SOURCE.encode()


def test_codex_gate_mode_holds_a_shell_commands_writes_until_resolve_applies_them(codex_tmp):
    root, model, results = codex_shell_run(codex_tmp, "gate", [
        ("tool", "exec_command", {"cmd": COMMAND}),
        ("mcp", "resolve", {"action": "apply", "reason": "the command's rename and new file"}),
        ("text", "Done."),
    ])
    assert [name for name, _, _ in results] == ["exec_command", "resolve"], results
    assert model.seen[1] == {"src/a.ts": SOURCE, "src/b.ts": None}, model.seen
    entry = log_entries(root)[0]
    told = results[0][1]
    assert (f"staged holds what this command wrote as a preview, and none of it was written to the workspace "
            f"yet: {entry['id']} ({LABEL}; src/a.ts, src/b.ts)") in told, told
    assert (root / "src" / "a.ts").read_text() == EDITED
    assert (root / "src" / "b.ts").read_text() == B
    assert (entry["source"], entry["reason"]) == ("shell", "the command's rename and new file"), entry


# --- the other clients: each one's session, and its shell tool --------------------------------


def session_of(root, client):
    """The one staged session of `client` in `root` (`staged session list`)."""
    proc = staged(root, "--json", "session", "list")
    assert proc.returncode == 0, proc.stderr
    rows = [row for row in json.loads(proc.stdout) if row["client"] == client]
    assert len(rows) == 1, proc.stdout
    return rows[0]


def check_recorded(root, client, label=LABEL):
    """The command's change landed, is one entry of `client`'s session, shown by `staged session
    show` of that session, and its `sed` hunk reverts to the exact bytes."""
    assert (root / "src" / "a.ts").read_text() == EDITED
    assert (root / "src" / "b.ts").read_text() == B
    entry = log_entries(root)[0]
    assert (entry["source"], entry["frontEnd"], entry["label"]) == ("shell", f"hook:{client}", label), entry
    session = session_of(root, client)
    shown = staged(root, "session", "show", session["id"])
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.count("diff --git ") == 2, shown.stdout
    assert "-oldApi(1);\n+newApi(1);\n" in shown.stdout, shown.stdout
    out = staged(root, "session", "revert", session["id"], "--only", "src/a.ts:1", "--reason",
                 "keep the old call")
    assert out.returncode == 0, out.stdout + out.stderr
    assert (root / "src" / "a.ts").read_bytes() == SOURCE.encode()
    assert (root / "src" / "b.ts").read_text() == B
    return session


def unwrapped(content):
    """The text in a tool result that a client may have put in JSON: the string in it that
    says what to run, or the content itself."""
    try:
        value = json.loads(content) if isinstance(content, str) else content
    except ValueError:
        return content
    strings = []

    def walk(v):
        if isinstance(v, str):
            strings.append(v)
        elif isinstance(v, dict):
            for item in v.values():
                walk(item)
        elif isinstance(v, list):
            for item in v:
                walk(item)

    walk(value)
    return next((text for text in strings if RUN_AS in text or "staged" in text), json.dumps(value))


def check_gated(root, model, told, resolved, client, label=LABEL):
    """The files stayed as they were until resolve applied the command's preview, which the
    model was told about."""
    assert model.seen[1] == {"src/a.ts": SOURCE, "src/b.ts": None}, model.seen
    entry = log_entries(root)[0]
    held = (f"staged holds what this command wrote as a preview, and none of it was written to the workspace "
            f"yet: {entry['id']} ({label}; src/a.ts, src/b.ts)")
    assert held in told or json.dumps(held)[1:-1] in told, told
    applied = f"Applied {label}."
    assert applied in resolved or json.dumps(applied)[1:-1] in resolved, resolved
    assert (root / "src" / "a.ts").read_text() == EDITED
    assert (root / "src" / "b.ts").read_text() == B
    assert (entry["source"], entry["reason"]) == ("shell", "the command's rename and new file"), entry
    assert entry["frontEnd"] in (f"hook:{client}", "mcp"), entry
    assert pending(root) == [], json.dumps(pending(root))
    return session_of(root, client)


APPLY = ("mcp", "resolve", {"action": "apply", "reason": "the command's rename and new file"})


# --- Gemini CLI: `run_shell_command`, rewritten through `hookSpecificOutput.tool_input` ---------


def gemini_shell_run(tmp, mode, script, approval="yolo"):
    import test_hooks_gemini_cli as gemini
    root = new_repo(tmp)
    gemini.install(root, "--mode", mode)
    model = gemini.Watching(script, root, ["src/a.ts", "src/b.ts"]).start()
    try:
        gemini.run_gemini(tmp, root, model, approval)
    finally:
        model.stop()
    return root, model, gemini.results_of(model)


GEMINI_SHELL = ("tool", "run_shell_command", {"command": COMMAND, "description": "Rename the call and add b.ts"})


def test_gemini_cli_record_mode_records_a_shell_commands_writes_in_its_session():
    with tempfile.TemporaryDirectory() as tmp:
        root, _, results = gemini_shell_run(tmp, "record", [GEMINI_SHELL, ("text", "Done.")])
        assert [name for name, _, _ in results] == ["run_shell_command"], results
        assert not results[0][2], results[0]
        check_recorded(root, "gemini-cli")


def test_gemini_cli_gate_mode_holds_a_shell_commands_writes_until_resolve_applies_them():
    with tempfile.TemporaryDirectory() as tmp:
        root, model, results = gemini_shell_run(tmp, "gate", [GEMINI_SHELL, APPLY, ("text", "Done.")])
        assert [name for name, _, _ in results] == ["run_shell_command", "mcp_staged_resolve"], results
        check_gated(root, model, results[0][1], results[1][1], "gemini-cli")


# --- opencode: `bash`, whose arguments the plugin changes in place -----------------------------


def opencode_shell_run(tmp, mode, script):
    import test_opencode as opencode
    from scripted_model import tool_results_chat
    root = new_repo(tmp)
    opencode.install(root, "--mode", mode)
    model = opencode.Watching(script, root, ["src/a.ts", "src/b.ts"]).start()
    try:
        _, session = opencode.run_opencode(tmp, root, model)
    finally:
        model.stop()
    return root, model, tool_results_chat(opencode.main_requests(model)[-1]), session


OPENCODE_SHELL = ("tool", "bash", {"command": COMMAND, "description": "Rename the call and add b.ts"})


def test_opencode_record_mode_records_a_bash_commands_writes_in_its_session():
    with tempfile.TemporaryDirectory() as tmp:
        root, _, results, session = opencode_shell_run(tmp, "record", [OPENCODE_SHELL, ("text", "Done.")])
        assert [name for name, _, _ in results] == ["bash"], results
        assert check_recorded(root, "opencode")["clientSessionId"] == session


def test_opencode_gate_mode_holds_a_bash_commands_writes_until_resolve_applies_them():
    with tempfile.TemporaryDirectory() as tmp:
        root, model, results, session = opencode_shell_run(tmp, "gate", [OPENCODE_SHELL, APPLY, ("text", "Done.")])
        assert [name for name, _, _ in results] == ["bash", "staged_resolve"], results
        assert check_gated(root, model, results[0][1], results[1][1], "opencode")["clientSessionId"] == session


# --- Copilot CLI: `bash`, rewritten through `modifiedArgs` -------------------------------------


def copilot_shell_run(tmp, mode, script):
    import test_copilot as copilot
    from scripted_model import tool_results_chat
    root = new_repo(tmp)
    copilot.install(root, "--mode", mode)
    model = copilot.Watching(script, root, ["src/a.ts", "src/b.ts"]).start()
    # Copilot checks the paths a command names: the wrapped one names staged's binary, whose
    # folder the person allows (without it, Copilot asks, and headless refuses the call).
    allow = ("--allow-all-tools", "--add-dir", str(Path(staged_bin()).resolve().parent))
    try:
        copilot.run_copilot(tmp, root, model, allow=allow)
    finally:
        model.stop()
    return root, model, tool_results_chat(copilot.main_requests(model)[-1])


COPILOT_SHELL = ("tool", "bash", {"command": COMMAND, "description": "Rename the call and add b.ts",
                                  "mode": "sync", "initial_wait": 30})


def test_copilot_record_mode_records_a_bash_commands_writes_in_its_session():
    with tempfile.TemporaryDirectory() as tmp:
        root, _, results = copilot_shell_run(tmp, "record", [COPILOT_SHELL, ("text", "Done.")])
        assert [name for name, _, _ in results] == ["bash"], results
        check_recorded(root, "copilot")


def test_copilot_gate_mode_holds_a_bash_commands_writes_until_resolve_applies_them():
    with tempfile.TemporaryDirectory() as tmp:
        root, model, results = copilot_shell_run(tmp, "gate", [COPILOT_SHELL, APPLY, ("text", "Done.")])
        assert [name for name, _, _ in results] == ["bash", "staged-resolve"], results
        check_gated(root, model, results[0][1], results[1][1], "copilot")


# --- Cline: `run_commands`, whose input the plugin's `beforeTool` returns ----------------------


def cline_shell_run(tmp, mode, script):
    import test_cline as cline
    from scripted_model import tool_results_chat
    root = new_repo(tmp)
    cline.install(tmp, root, "--mode", mode)
    model = cline.Watching(script, root, ["src/a.ts", "src/b.ts"]).start()
    try:
        cline.run_cline(tmp, root, model)
    finally:
        model.stop()
    return root, model, tool_results_chat(cline.main_requests(model)[-1])


CLINE_SHELL = ("tool", "run_commands", {"commands": [COMMAND]})


def test_cline_record_mode_records_a_run_commands_writes_in_its_session():
    with tempfile.TemporaryDirectory() as tmp:
        root, _, results = cline_shell_run(tmp, "record", [CLINE_SHELL, ("text", "Done.")])
        assert [name for name, _, _ in results] == ["run_commands"], results
        check_recorded(root, "cline")


def test_cline_gate_mode_holds_a_run_commands_writes_until_resolve_applies_them():
    with tempfile.TemporaryDirectory() as tmp:
        root, model, results = cline_shell_run(tmp, "gate", [CLINE_SHELL, APPLY, ("text", "Done.")])
        assert [name for name, _, _ in results] == ["run_commands", "staged__resolve"], results
        check_gated(root, model, results[0][1], results[1][1], "cline")


# --- Qwen Code: its hooks cannot rewrite a command, so the model is told to run the wrapper -----

RUN_AS = "Run the same command as exactly this command (the same text, the command quoted as one word after --): "


def qwen_shell_run(tmp, mode, script):
    import test_hooks_qwen_code as qwen

    class Following(qwen.Watching):
        """Runs, at a turn that is `RUN_AS`, the command the last tool result told the model to."""

        def _chat(self, body):
            messages = body.get("messages", [])
            step = sum(1 for m in messages if m.get("role") == "assistant")
            if body.get("tools") and step < len(self.script) and self.script[step] == RUN_AS:
                told = unwrapped([m for m in messages if m.get("role") == "tool"][-1]["content"])
                assert RUN_AS in told, told
                wrapped = told.split(RUN_AS, 1)[1]
                wrapped = wrapped[:wrapped.rindex("'") + 1]
                self.script[step] = ("tool", "run_shell_command", {"command": wrapped, "is_background": False})
            return super()._chat(body)

    root = new_repo(tmp)
    qwen.install(tmp, root, "--mode", mode)
    model = Following(script, root, ["src/a.ts", "src/b.ts"]).start()
    try:
        qwen.run_qwen(tmp, root, model, "yolo")
    finally:
        model.stop()
    return root, model, qwen.results_of(model)


QWEN_SHELL = ("tool", "run_shell_command", {"command": COMMAND, "is_background": False})


def check_qwen_refused(root, results):
    """The first call was refused, naming the wrapper to run the command under, and ran nothing."""
    told = unwrapped(results[0][1])
    assert "staged runs Qwen Code's shell commands under its wrapper" in told, told
    assert f"shell-run --client qwen-code --session " in told, told
    assert told.rstrip().endswith(" -- " + "'" + COMMAND.replace("'", "'\\''") + "'"), told


def test_qwen_code_record_mode_runs_the_shell_command_under_the_wrapper_and_records_it():
    with tempfile.TemporaryDirectory() as tmp:
        root, model, results = qwen_shell_run(tmp, "record", [QWEN_SHELL, RUN_AS, ("text", "Done.")])
        assert [name for name, _, _ in results] == ["run_shell_command", "run_shell_command"], results
        check_qwen_refused(root, results)
        label = "Shell: " + COMMAND.replace("\n", "\\n")[:80] + "..."
        check_recorded(root, "qwen-code", label)


def test_qwen_code_gate_mode_holds_the_wrapped_shell_commands_writes_until_resolve_applies_them():
    with tempfile.TemporaryDirectory() as tmp:
        script = [QWEN_SHELL, RUN_AS, ("tool", "tool_search", {"query": "staged resolve"}), APPLY, ("text", "Done.")]
        root, model, results = qwen_shell_run(tmp, "gate", script)
        names = [name for name, _, _ in results]
        assert names == ["run_shell_command", "run_shell_command", "tool_search", "mcp__staged__resolve"], results
        check_qwen_refused(root, results)
        # The first call ran nothing: the files were as they were at the next request too.
        assert model.seen[1] == {"src/a.ts": SOURCE, "src/b.ts": None}, model.seen
        model.seen = model.seen[1:]
        check_gated(root, model, results[1][1], results[3][1], "qwen-code")


def test_codex_exec_command_that_runs_on_after_its_call_returned_is_recorded_at_the_turns_stop(codex_tmp):
    """An `exec_command` that outlives its yield time: Codex returns the call while the command
    (and its wrapper) runs on, and sends no `PostToolUse` for it. The turn's `Stop` takes the run
    for one that outlived its call and records what it wrote so far (`Shell: ...`), though its
    wrapper has not finished: without that, its writes would wait in the run until the command
    ended (`codex exec` ends it when it exits, so until the session's next hook call)."""
    command = "echo now > src/now.ts; sleep 5; echo late > src/late.ts"
    root, _, results = codex_shell_run(codex_tmp, "record", [
        ("tool", "exec_command", {"cmd": command, "yield_time_ms": 250}),
        ("text", "Done."),
    ])
    assert [name for name, _, _ in results] == ["exec_command"], results
    assert "Process running with session ID" in results[0][1], results[0]
    entries = [e for e in log_entries(root) if e["source"] == "shell"]
    assert [(e["label"], e["frontEnd"]) for e in entries] == [("Shell: " + command, "hook:codex")], entries
    assert (root / "src" / "now.ts").read_text() == "now\n"
    assert not (root / "src" / "late.ts").exists()
    shown = staged(root, "session", "show")
    assert "+++ b/src/now.ts\n" in shown.stdout, shown.stdout
