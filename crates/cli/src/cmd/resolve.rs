//! `staged resolve apply|discard --reason TEXT [--extra JSON] [--id ID] [--only PATH...]
//! [--except PATH...]`: resolve the head of the stack (only if it is `ID`, when given; with
//! `--only` and `--except`, writing only those files and hunks of it, see `crate::pick`) and
//! print the resolve block.

use anyhow::{Context, bail};
use staged_core::{JsonObject, MAX_REASON_CHARS, PendingId, ResolveAction, ResolveParams};
use staged_journal::{FILES_EXTRA_KEY, HUNKS_EXTRA_KEY};
use staged_render::{render_resolve_call, render_resolve_result};
use staged_workspace::StaleDetails;

use crate::{
    args::{ActionArg, GlobalArgs, ResolveArgs},
    cmd::{error_result, head, print_tool_json},
    context,
    exit::Exit,
    output::Output,
    pick,
};

pub(crate) fn run(global: &GlobalArgs, args: &ResolveArgs, out: &Output) -> anyhow::Result<Exit> {
    // Validate the input before touching the workspace.
    if args.reason.trim().is_empty() {
        bail!("--reason must not be blank: say why the preview is applied or discarded");
    }
    let chars = args.reason.chars().count();
    if chars > MAX_REASON_CHARS {
        bail!(
            "--reason is {chars} characters long; a reason is at most {MAX_REASON_CHARS} characters"
        );
    }
    let mut extra = args.extra.as_deref().map(parse_extra).transpose()?;
    let action = match args.action {
        ActionArg::Apply => ResolveAction::Apply,
        ActionArg::Discard => ResolveAction::Discard,
    };
    let picking = !args.only.is_empty() || !args.except.is_empty();
    if picking {
        let flag = if args.only.is_empty() { "--except" } else { "--only" };
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
    let ws = context::open_existing(global)?;
    let mut expected = args.id.clone().map(PendingId::from_string);
    if picking {
        // An action that cannot apply part of itself would apply everything: refuse, and
        // resolve exactly the preview that was checked. With nothing pending, or another
        // preview on top than --id names, resolving says so.
        let head = ws.store().peek().map_err(|err| anyhow::anyhow!("{err}"))?;
        if let Some(head) = head.filter(|h| expected.as_ref().is_none_or(|id| *id == h.id)) {
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
            let only = context::scope_paths(root, &args.only)?;
            let except = context::scope_paths(root, &args.except)?;
            let parts = pick::preview_parts(&head);
            let picked =
                pick::extra_of(&parts, &only, &args.only, &except, &args.except, head.id.as_str())?;
            if let Some(picked) = picked {
                extra.get_or_insert_with(Default::default).extend(picked);
            }
            expected.get_or_insert(head.id);
        }
    }
    let params = ResolveParams { action, reason: args.reason.clone(), extra };
    let session = ws.session().clone();
    let result = context::block_on(|cancel| async move {
        match expected {
            Some(id) => session.resolve_expected(params, &id, &cancel).await,
            None => session.resolve(params, &cancel).await,
        }
    })?
    .unwrap_or_else(|err| error_result(&err));
    if out.json {
        print_tool_json(out, &result, head(&ws).as_ref())?;
    } else {
        out.styled_line(&render_resolve_call(action, &args.reason, &out.render))?;
        out.styled_line(&render_resolve_result(
            result.details.as_ref(),
            result.is_error,
            &out.render,
        ))?;
        out.line(&result.text_content())?;
        if let Some(command) = restage_command(result.details.as_ref(), ws.workspace().root()) {
            out.line(&format!("To stage it again: {command}"))?;
        }
    }
    Ok(if result.is_error { Exit::ToolError } else { Exit::Success })
}

/// The shell command that stages a dropped (stale) `ast_edit` preview again, from the
/// arguments its result carries.
fn restage_command(details: Option<&serde_json::Value>, root: &std::path::Path) -> Option<String> {
    let stale = StaleDetails::parse(details?.get("sourceResultDetails")?).ok()?;
    let args = stale.restage;
    let mut words = vec!["staged".to_owned(), "ast-edit".to_owned()];
    for op in &args.ops {
        words.push("--op".to_owned());
        words.push(shell_quote(&op.pat));
        words.push(shell_quote(&op.out));
    }
    let strictness =
        args.strictness.and_then(|s| serde_json::to_value(s).ok()?.as_str().map(str::to_owned));
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
