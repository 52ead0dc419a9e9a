//! Harvesting a run (`docs/contract/shell.md`, "Commands that outlive their call"): what a
//! command wrote since its run was last harvested (all of it, the first time), recorded as one
//! log entry or staged as one preview of the session, labelled `Shell: <command>` for the
//! first harvest and `Shell (background): <command>` for what a process the command left
//! running wrote after its call returned ([`harvest`]); the wrapper's harvest of a run that
//! outlives it ([`outlive`]); and the notice that tells a session's model of it
//! ([`tell_session`]). [`crate::shell_run`] finishes runs with it and sweeps a session's runs.

use staged_core::{FrontEnd, LogAction, LogOutcome, LogRecord, PendingId};
use staged_shell::{Run, apply, plan, upper};
use staged_workspace::WorkspaceSession;

use crate::shell_run::{Finished, client_display, client_of, enter, gated_text, kept_aside};

/// Harvests `run` while a process of its command still runs (it outlives its wrapper): what
/// it wrote since its last harvest (all of it, for the wrapper's own harvest) is recorded or
/// staged as its mode says, copied into the tree (the upper layer stays as that process sees
/// it), and the run is kept, with the manifest of what was taken, for the session's next hook
/// call. The wrapper's harvest tells the model that what the process writes from now on is
/// taken at the session's next hook call.
pub fn outlive(ws: &WorkspaceSession, run: Run) -> Finished {
    if run.from_earlier_boot() {
        return kept_aside(
            run,
            "the system restarted before they were recorded, and what a command writes is not synced until then, so they may be incomplete",
        );
    }
    let first = !run.is_outliving();
    let mut finished = match harvest(ws, &run, false) {
        Err(why) if first => {
            // Nothing was taken: the run stays, and the next harvest tries it again.
            Finished {
                message: Some(format!(
                    "staged could not record what this command wrote yet ({why}); it tries again at this session's next tool call or prompt."
                )),
                notes: vec![format!("staged: {why}")],
            }
        }
        Err(why) => Finished {
            message: Some(format!(
                "{}staged could not take it yet ({why}); it tries again at this session's next tool call or prompt.",
                background_intro(run.info(), false)
            )),
            notes: vec![format!("staged: {why}")],
        },
        Ok(Harvested::Deferred) => Finished::default(),
        Ok(Harvested::Done { mut finished, failures }) => {
            finished.notes.extend(failures.iter().map(|f| format!("staged: not moved in: {f}")));
            finished
        }
        Ok(Harvested::Refused(finished)) => finished,
    };
    if first {
        // Saved even when nothing was taken: the run outlives its wrapper from now on.
        if !run.is_outliving()
            && let Err(err) = run.manifest().and_then(|m| run.save_manifest(&m))
        {
            finished.notes.push(format!("staged: the run's manifest could not be saved: {err}"));
        }
        let info = run.info();
        let does = if info.mode == "gate" {
            "staged as a preview of its own"
        } else {
            "recorded in this session"
        };
        let note = format!(
            "staged: a process this command started is still running; what it writes from now on is {does} at this session's next tool call or prompt, as `{}`.",
            staged_shell::background_label(&info.command)
        );
        finished.message = Some(match finished.message.take() {
            Some(text) => format!("{text}\n{note}"),
            None => note,
        });
    }
    finished
}

/// What a harvest did.
pub(crate) enum Harvested {
    /// Nothing taken now: a file it wrote again is in the run's own preview, still pending
    /// (gate mode).
    Deferred,
    /// Recorded or staged (or nothing to take), with what failed to be moved in.
    Done { finished: Finished, failures: Vec<String> },
    /// Staging was refused (a file pending in another preview): what the model is told.
    Refused(Finished),
}

/// The log entry a record of `info`'s run completes: the wrapper's (`later` false), or the
/// `harvests`-th of a process it left running.
pub(crate) fn record_base(
    info: &staged_shell::RunInfo,
    label: &str,
    later: bool,
    harvests: u32,
) -> LogRecord {
    let client = client_display(&info.client);
    let call = info.call.clone().unwrap_or_default();
    let id = if later {
        format!("hook:{}:{call}:background-{harvests}", info.client)
    } else {
        format!("hook:{}:{call}", info.client)
    };
    let mut base = LogRecord::new(
        PendingId::from_string(id),
        label.to_owned(),
        staged_shell::SHELL_SOURCE,
        LogOutcome::Applied,
        LogAction::Apply,
        &FrontEnd::Hook(info.client.clone()),
    );
    base.reason = if later {
        format!(
            "{client}'s shell command, recorded by staged's wrapper: what a process it started wrote after its call returned"
        )
    } else {
        format!("{client}'s shell command, recorded by staged's wrapper")
    };
    base
}

/// What the model is told of writes a gate refused to stage (`why`).
fn refused_text(intro: &str, why: &str, later: bool) -> String {
    if later {
        format!(
            "{intro}staged refused these writes, and none of them reached the workspace: {why}. The files are as they were before them."
        )
    } else {
        format!(
            "staged refused this command's writes, and none of them reached the workspace: {why}. The files are as they were before the command."
        )
    }
}

/// Whether `plan` writes a file that a preview the run staged still holds (gate mode): then
/// it is taken once that preview is resolved (applied, its bytes are the tree's; discarded,
/// the new write is proposed again). A pending preview labelled as the run's later harvests
/// that its manifest does not name was staged by a harvest killed before its manifest was
/// saved: it is taken for the run's (saved with `save`), and the plan waits for it too.
fn own_preview_pending(
    ws: &WorkspaceSession,
    manifest: &mut staged_shell::harvest::Manifest,
    plan: &plan::Plan,
    label: &str,
    later: bool,
    save: impl Fn(&staged_shell::harvest::Manifest) -> Result<(), String>,
) -> Result<bool, String> {
    let pending = crate::session::all_pending(ws).map_err(|err| err.to_string())?;
    let mut adopted = false;
    for summary in &pending {
        let id = summary.id.as_str();
        if later && summary.label == label && !manifest.previews.iter().any(|p| p.id == id) {
            manifest
                .previews
                .push(staged_shell::harvest::Preview { id: id.to_owned(), files: plan.paths() });
            adopted = true;
        }
    }
    if adopted {
        save(manifest)?;
        return Ok(true);
    }
    let busy: std::collections::HashSet<&str> = manifest
        .previews
        .iter()
        .filter(|p| pending.iter().any(|s| s.id.as_str() == p.id))
        .flat_map(|p| p.files.iter().map(String::as_str))
        .collect();
    Ok(plan.paths().iter().any(|p| busy.contains(p.as_str())))
}

/// How a message of a harvest after the wrapper's begins: which command's process wrote it,
/// and whether it is still running (`ended`: it has ended since).
fn background_intro(info: &staged_shell::RunInfo, ended: bool) -> String {
    let still = if ended { "that has ended since" } else { "that is still running" };
    format!(
        "A process that the shell command `{}` started, {still}, wrote files after its call returned: ",
        staged_shell::label(&info.command)
    )
}

/// Takes what `run` wrote since its last harvest (against its manifest): records it or stages
/// it as one entry or preview, labelled `Shell: <command>` for the wrapper's (or a killed
/// wrapper's) harvest and `Shell (background): <command>` for a later one. With `last`, no
/// process of the command runs any more: files are renamed out of the upper layer and no
/// manifest is saved (the run is deleted after); otherwise they are copied and the manifest
/// saved. All or nothing: the manifest is saved after the entry or the preview is committed,
/// and a path the tree already holds as the upper layer does is not taken again.
pub(crate) fn harvest(ws: &WorkspaceSession, run: &Run, last: bool) -> Result<Harvested, String> {
    use staged_shell::harvest;
    let info = run.info().clone();
    enter(ws, &info.client, &info.session);
    let root = ws.workspace().root().to_path_buf();
    let mut manifest =
        run.manifest().map_err(|err| format!("the run's manifest could not be read: {err}"))?;
    // The first harvest takes what the command wrote before its call returned; every later
    // one what a process it left running wrote since.
    let later = manifest.harvests > 0;
    let gate = info.mode == "gate";
    let written = upper::written(&root, &run.upper())
        .map_err(|err| format!("what the command wrote could not be read: {err}"))?;
    let (delta, refreshed) = harvest::delta(&manifest, written)
        .map_err(|err| format!("what the command wrote could not be read: {err}"))?;
    let split = harvest::split(&root, &manifest, delta, !gate)
        .map_err(|err| format!("the workspace could not be read: {err}"))?;
    let plan = plan::plan(&root, split.fresh)?;
    let how = if last { apply::MoveIn::Rename } else { apply::MoveIn::Copy };
    let label = if later {
        staged_shell::background_label(&info.command)
    } else {
        staged_shell::label(&info.command)
    };
    let save = |manifest: &harvest::Manifest| -> Result<(), String> {
        if last {
            return Ok(());
        }
        run.save_manifest(manifest)
            .map_err(|err| format!("the run's manifest could not be saved: {err}"))
    };
    let intro = if later { background_intro(&info, last) } else { String::new() };
    let stale = (!split.stale.is_empty()).then(|| {
        format!(
            "staged did not record its writes to {}: each was changed in the workspace since staged recorded this command's earlier write of it, and staged never overwrites such a change.",
            split.stale.join(", ")
        )
    });
    if plan.is_empty() {
        let changed = !refreshed.is_empty() || !split.seen.is_empty() || manifest.harvests == 0;
        manifest.harvests = manifest.harvests.max(1);
        manifest.merge(refreshed);
        manifest.merge(split.seen);
        if changed || !run.is_outliving() {
            save(&manifest)?;
        }
        let message = stale.map(|text| format!("{intro}{text}"));
        let notes = message.iter().map(|m| format!("staged: {m}")).collect();
        return Ok(Harvested::Done { finished: Finished { notes, message }, failures: Vec::new() });
    }
    let mut res = Finished::default();
    let failures;
    if gate {
        if own_preview_pending(ws, &mut manifest, &plan, &label, later, save)? {
            return Ok(Harvested::Deferred);
        }
        match apply::gate(ws.session(), ws.workspace(), plan, &label, how) {
            Ok(gated) => {
                res.message =
                    Some(format!("{intro}{}", gated_text(&gated, client_of(&info.client))));
                if let Some(id) = &gated.id {
                    // Saved at once: a kill from here on leaves the preview known as the run's.
                    manifest
                        .previews
                        .push(harvest::Preview { id: id.clone(), files: gated.files.clone() });
                    let mut now = manifest.clone();
                    now.harvests += 1;
                    now.merge(refreshed.clone());
                    now.merge(split.seen.clone());
                    save(&now)?;
                    if let Err(why) = crate::stop::remember(
                        ws,
                        client_of(&info.client),
                        &info.session,
                        id,
                        &gated.files,
                    ) {
                        res.notes.push(format!("staged: {why}"));
                    }
                }
                failures = gated.failures;
            }
            Err(why) => {
                let text = refused_text(&intro, &why, later);
                manifest.harvests += 1;
                manifest.merge(refreshed);
                manifest.merge(split.seen);
                save(&manifest)?;
                return Ok(Harvested::Refused(Finished { message: Some(text), notes: Vec::new() }));
            }
        }
    } else {
        let base = record_base(&info, &label, later, manifest.harvests);
        let paths = plan.paths().join(", ");
        let recorded = apply::record(ws.session(), ws.workspace(), plan, &info.command, base, how)?;
        if later {
            res.message = Some(format!("{intro}staged recorded them as `{label}` ({paths})."));
        }
        failures = recorded.failures;
    }
    if let Some(text) = stale {
        res.message = Some(match res.message.take() {
            Some(m) => format!("{m} {text}"),
            None => format!("{intro}{text}"),
        });
    }
    manifest.harvests += 1;
    manifest.merge(refreshed);
    manifest.merge(split.seen);
    save(&manifest)?;
    Ok(Harvested::Done { finished: res, failures })
}

/// Tells the model of `client`'s session `session` `text` at its next chance (a notice of the
/// session): what the wrapper of a run whose call already returned says, which no one may
/// read where it prints it.
pub fn tell_session(ws: &WorkspaceSession, client: &str, session: &str, text: &str) {
    if let Some(store) = ws.sqlite() {
        let process = staged_session::process::client_of_this_process().map(|p| p.key());
        if let Ok(row) = store.open_session(client, session, process.as_deref()) {
            let _ = store.notify_session(row.number, text);
        }
    }
}
