//! `staged resolve apply|discard --reason TEXT [--extra JSON] [--id ID] [--only PATH...]
//! [--except PATH...]`: resolve the head of the stack (only if it is `ID`, when given; with
//! `--only` and `--except`, writing only those files and hunks of it, see `crate::pick`) and
//! print the resolve block.

use anyhow::{Context, bail};
use serde::Deserialize;
use serde_json::Value;
use staged_core::{MAX_REASON_CHARS, NO_PENDING_APPLY_TEXT, ResolveOptions};
use staged_journal::{FILES_EXTRA_KEY, HUNKS_EXTRA_KEY};
use staged_protocol::{JsonObject, ResolveAction, ResolveDetails, ResolveParams, ToolResult};
use staged_render::{ResolveShown, render_resolve_block};
use staged_workspace::{StaleDetails, WorkspaceSession};

use crate::{
    args::{ActionArg, GlobalArgs, ResolveArgs},
    cmd::{error_result, head, ids, print_tool_json},
    context,
    exit::Exit,
    output::Output,
    pick,
};

pub(crate) fn run(global: &GlobalArgs, args: &ResolveArgs, out: &Output) -> anyhow::Result<Exit> {
    // Validate the input before touching the workspace.
    let (action, mut extra, picking) = validate(args)?;
    let ws = context::open_existing(global)?;
    if let Some(typed) = &args.session {
        scope_to_session(&ws, typed)?;
    }
    // `--id` may be a short form (`3`, `ast_edit:3`, `newest`); the guard compares full ids.
    let mut expected = match &args.id {
        Some(typed) => match ids::guard_id(ws.store().as_ref(), typed)? {
            Some(id) => Some(id),
            None => return no_such_preview(&ws, action, typed, &args.reason, out),
        },
        None => None,
    };
    if picking && let Some(refused) = pick_part(&ws, args, action, &mut expected, &mut extra, out)?
    {
        return Ok(refused);
    }
    // What the block names when the result's details do not: the preview resolved (the one
    // `--id` named, else the head now; a failed apply keeps it on top, which is checked after).
    let before = match &expected {
        Some(id) => ids::find_pending(ws.store().as_ref(), id.as_str())?,
        None => match ws.store().head_summary().map_err(|err| anyhow::anyhow!("{err}"))? {
            Some(head) => ids::Found::One(head),
            None => ids::Found::Nothing,
        },
    };
    let params = ResolveParams { action, reason: args.reason.clone(), extra };
    let session = ws.session().clone();
    let guard = expected.clone();
    let shown = crate::progress::Progress::start(out, "resolving");
    let result = context::block_on(|cancel| async move {
        let options = ResolveOptions { expected: guard.as_ref(), ..Default::default() };
        session.resolve(params, options, &cancel).await
    })?
    .unwrap_or_else(|err| error_result(&err));
    drop(shown);
    let head_after = head(&ws);
    if out.json {
        print_tool_json(out, &result, head_after.as_ref())?;
        return Ok(if result.is_error { Exit::ToolError } else { Exit::Success });
    }
    // A failed apply keeps its preview on top under the same id: then the label read before
    // is the one that failed. Otherwise the result's own details say what was resolved.
    // `--id` names the preview whatever happened; without it, the head read before is the one
    // resolved unless another process pushed meanwhile (then the result's details tell).
    let label = match (&before, &head_after) {
        (ids::Found::One(summary), _) if expected.is_some() => Some(summary.label.clone()),
        (ids::Found::One(summary), Some((id, _))) if *id == summary.id => {
            Some(summary.label.clone())
        }
        (ids::Found::One(summary), _) if !result.is_error => Some(summary.label.clone()),
        (ids::Found::Nothing, _) => match &expected {
            None => Some(NOTHING_PENDING.to_owned()),
            Some(id) => Some(format!("{id} (not pending)")),
        },
        _ => None,
    };
    print_outcome(out, &result, action, &args.reason, label.as_deref())?;
    if let Some(command) = restage_command(result.details.as_ref(), ws.workspace().root()) {
        out.line(&format!("To stage it again: {command}"))?;
    }
    Ok(if result.is_error { Exit::ToolError } else { Exit::Success })
}

/// The checked arguments: the action, `--extra` parsed, and whether `--only` or `--except`
/// pick part of the preview.
fn validate(args: &ResolveArgs) -> anyhow::Result<(ResolveAction, Option<JsonObject>, bool)> {
    if args.reason.trim().is_empty() {
        bail!("--reason must not be blank: say why the preview is applied or discarded");
    }
    let chars = args.reason.chars().count();
    if chars > MAX_REASON_CHARS {
        bail!(
            "--reason is {chars} characters long; a reason is at most {MAX_REASON_CHARS} characters"
        );
    }
    let extra = args.extra.as_deref().map(parse_extra).transpose()?;
    let action = match args.action {
        ActionArg::Apply => ResolveAction::Apply,
        ActionArg::Discard => ResolveAction::Discard,
    };
    let picking = !args.only.is_empty() || !args.except.is_empty();
    if picking {
        let flag = if args.only.is_empty() { "--except" } else { "--only" };
        // An empty path would be taken as the folder one stands in: everything, when a script's
        // empty variable meant nothing.
        for (name, paths) in [("--only", &args.only), ("--except", &args.except)] {
            if paths.iter().any(|p| p.trim().is_empty()) {
                bail!(
                    "{name} got an empty path; name the files, folders, globs or FILE:N hunks to pick"
                );
            }
        }
        if action == ResolveAction::Discard {
            bail!("{flag} applies part of a preview; a discard drops the whole preview");
        }
        if extra
            .as_ref()
            .is_some_and(|e| e.contains_key(FILES_EXTRA_KEY) || e.contains_key(HUNKS_EXTRA_KEY))
        {
            bail!(
                "name the part to apply either with {flag} or in --extra's \"files\" and \"hunks\", not both"
            );
        }
    }
    Ok((action, extra, picking))
}

/// Resolves the previews of session `typed` (`S3`, `3`), which must exist.
fn scope_to_session(ws: &WorkspaceSession, typed: &str) -> anyhow::Result<()> {
    let store = ws.sqlite().context("no sessions: nothing was staged in this workspace")?;
    let row = store
        .session_named(typed)
        .map_err(|err| anyhow::anyhow!("{err}"))?
        .map_err(|why| anyhow::anyhow!("{why}; see `staged session list`"))?;
    store.set_scope(staged_store::SessionScope::model(row.number));
    Ok(())
}

/// With `--only` or `--except`: the part of the newest preview they pick, added to `extra`,
/// and that preview as the one `expected`; `Some` with the exit of a refusal when there is no
/// newest preview to pick from, or another than `--id` names.
fn pick_part(
    ws: &WorkspaceSession,
    args: &ResolveArgs,
    action: ResolveAction,
    expected: &mut Option<staged_core::PendingId>,
    extra: &mut Option<JsonObject>,
    out: &Output,
) -> anyhow::Result<Option<Exit>> {
    // An action that cannot apply part of itself would apply everything: refuse, and
    // resolve exactly the preview that was checked. With nothing pending, or another
    // preview on top than --id names, resolving says so.
    let head = ws.store().peek().map_err(|err| anyhow::anyhow!("{err}"))?;
    // Without the newest preview to pick from, nothing is resolved: an unguarded resolve
    // would apply whatever another process stages (or uncovers) meanwhile, whole.
    let refusal = match (&head, &expected) {
        (None, None) => Some((NO_PENDING_APPLY_TEXT.to_owned(), NOTHING_PENDING.to_owned())),
        (None, Some(id)) => Some((
            format!("{id} is no longer pending; nothing was applied or discarded."),
            format!("{id} (not pending)"),
        )),
        (Some(h), Some(id)) if h.id != *id => Some((
            format!(
                "The newest pending preview is `{}` ({}), not {id}; part of a preview is applied only while it is the newest. Nothing was applied or discarded.",
                h.label(),
                h.id
            ),
            format!("{id} (not the newest)"),
        )),
        _ => None,
    };
    if let Some((text, label)) = refusal {
        return refuse(ws, action, &args.reason, &text, &label, out).map(Some);
    }
    if let Some(head) = head {
        if !head.action.applies_in_part() {
            bail!(
                "`{}` ({}) from `{}` cannot be applied in part; apply it whole (without --only or --except) or discard it",
                head.label(),
                head.id,
                head.source_tool_name()
            );
        }
        // The preview names files relative to the workspace root; a person may type them
        // relative to where they stand.
        let root = ws.workspace().root();
        let only = context::pick_paths(root, &args.only)?;
        let except = context::pick_paths(root, &args.except)?;
        let parts = pick::preview_parts(&head);
        let picked =
            pick::extra_of(&parts, &only, &args.only, &except, &args.except, head.id.as_str())?;
        if let Some(picked) = picked {
            extra.get_or_insert_with(JsonObject::new).extend(picked);
        }
        expected.get_or_insert(head.id);
    }
    Ok(None)
}

/// What the block names when nothing was pending.
const NOTHING_PENDING: &str = "nothing pending";

/// For a person: the outcome block, which says the reason, then the result's text without it.
/// The person typed the command, so there is no call line; a model (`--json`, MCP, the agent's
/// transcript) gets the result's text unchanged.
fn print_outcome(
    out: &Output,
    result: &ToolResult,
    action: ResolveAction,
    reason: &str,
    label: Option<&str>,
) -> anyhow::Result<()> {
    let shown = shown_details(result.details.as_ref(), action, reason, label);
    out.styled_line(&render_resolve_block(&shown, result.is_error, &out.render))?;
    out.line(&without_reason(&result.text_content(), reason))?;
    Ok(())
}

/// The details the block is drawn from: the result's, with the action, the reason given and
/// the preview's label filled in where they say none (a passed-through tool error keeps only
/// its own details, so the block would read `Failed: pending action` / `No reason provided`).
pub(crate) fn shown_details(
    details: Option<&Value>,
    action: ResolveAction,
    reason: &str,
    label: Option<&str>,
) -> ResolveShown {
    let mut shown = ResolveShown::of(details);
    let blank = |field: &Option<String>| field.as_deref().is_none_or(|v| v.trim().is_empty());
    if blank(&shown.action) {
        shown.action = Some(action.as_str().to_owned());
    }
    if blank(&shown.reason) {
        shown.reason = Some(reason.to_owned());
    }
    if let Some(label) = label.filter(|_| blank(&shown.label)) {
        shown.label = Some(label.to_owned());
    }
    shown
}

/// `text` without a closing `Reason: <reason>` that repeats what the block shows
/// (`Discarded: <label>. Reason: <reason>`, a plugin's `Renamed. Reason: <reason>`).
pub(crate) fn without_reason(text: &str, reason: &str) -> String {
    let reason = reason.trim();
    let trimmed = text.trim_end();
    if reason.is_empty() {
        return trimmed.to_owned();
    }
    match trimmed.strip_suffix(reason).and_then(|rest| rest.strip_suffix("Reason: ")) {
        Some(rest) if !rest.trim().is_empty() => rest.trim_end().to_owned(),
        _ => trimmed.to_owned(),
    }
}

/// What `--id` named no pending preview: nothing is resolved (exit 1, as for an id that is
/// not the newest), and the output says which previews there are.
/// Prints a resolve that was refused before anything was claimed (nothing logged), as the
/// session's own refusals are printed, and exits as a tool error.
fn refuse(
    ws: &WorkspaceSession,
    action: ResolveAction,
    reason: &str,
    text: &str,
    label: &str,
    out: &Output,
) -> anyhow::Result<Exit> {
    let result = ToolResult::error(text.to_owned()).with_details(refused_details(action, reason)?);
    if out.json {
        print_tool_json(out, &result, head(ws).as_ref())?;
    } else {
        print_outcome(out, &result, action, reason, Some(label))?;
    }
    Ok(Exit::ToolError)
}

/// The details of a resolve refused before anything was claimed: the action and the reason.
fn refused_details(action: ResolveAction, reason: &str) -> serde_json::Result<Value> {
    serde_json::to_value(ResolveDetails {
        action,
        reason: reason.to_owned(),
        extra: None,
        source_tool_name: None,
        label: None,
        source_result_details: None,
    })
}

fn no_such_preview(
    ws: &WorkspaceSession,
    action: ResolveAction,
    typed: &str,
    reason: &str,
    out: &Output,
) -> anyhow::Result<Exit> {
    let text = format!(
        "No pending preview has id `{}`; nothing was applied or discarded. `staged pending` lists them.",
        typed.trim()
    );
    let result = ToolResult::error(text).with_details(refused_details(action, reason)?);
    if out.json {
        print_tool_json(out, &result, head(ws).as_ref())?;
    } else {
        let label = format!("{} (not pending)", typed.trim());
        print_outcome(out, &result, action, reason, Some(&label))?;
    }
    Ok(Exit::ToolError)
}

/// The shell command that stages a dropped (stale) `ast_edit` preview again, from the
/// arguments its result carries.
fn restage_command(details: Option<&serde_json::Value>, root: &std::path::Path) -> Option<String> {
    let source = ResolveDetails::deserialize(details?).ok()?.source_result_details?;
    let stale = StaleDetails::parse(&source).ok()?;
    let args = stale.restage;
    let mut words = vec!["staged".to_owned(), "ast-edit".to_owned()];
    for op in &args.ops {
        words.push("--op".to_owned());
        words.push(shell_quote(&op.pat));
        words.push(shell_quote(&op.out));
    }
    let strictness = args.strictness.map(|strictness| strictness.name().to_owned());
    for (value, flag) in
        [(args.lang, "--lang"), (args.selector, "--selector"), (strictness, "--strictness")]
    {
        if let Some(value) = value {
            words.push(flag.to_owned());
            words.push(shell_quote(&value));
        }
    }
    // The command line has no cap unless given: a preview staged with the tool's default cap
    // (absent `max_files`) gets it spelled out.
    let max_files = match args.max_files {
        None => Some(staged_workspace::DEFAULT_MAX_FILES as f64),
        Some(cap) => cap,
    };
    for (value, flag) in [(args.limit, "--limit"), (max_files, "--max-files")] {
        if let Some(value) = value {
            words.push(flag.to_owned());
            words.push(format!("{}", value.floor()));
        }
    }
    if args.include_parse_errors == Some(true) {
        words.push("--include-parse-errors".to_owned());
    }
    for path in &args.paths {
        words.push(shell_quote(path));
    }
    // The paths are relative to the workspace root.
    Some(format!("cd {} && {}", shell_quote(&root.to_string_lossy()), words.join(" ")))
}

/// `text` as one POSIX shell word.
pub(crate) fn shell_quote(text: &str) -> String {
    let plain = !text.is_empty()
        && text.bytes().all(|b| b.is_ascii_alphanumeric() || b"@%+=:,./-_".contains(&b));
    if plain { text.to_owned() } else { format!("'{}'", text.replace('\'', "'\\''")) }
}

fn parse_extra(text: &str) -> anyhow::Result<JsonObject> {
    let value: serde_json::Value =
        serde_json::from_str(text).with_context(|| format!("--extra is not valid JSON: {text}"))?;
    match value {
        serde_json::Value::Object(map) => Ok(map),
        other => bail!("--extra must be a JSON object, not {}", kind(&other)),
    }
}

fn kind(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}
