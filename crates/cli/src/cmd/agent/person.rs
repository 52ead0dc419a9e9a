//! The person at the terminal: asked before each `resolve apply` under `--approve human`, and
//! to approve or refine the plan in plan mode. Questions go to stderr, answers come from
//! stdin, one line each, so the prompts work in a pipe too (stdout may carry `--json`).

use std::io::{BufRead, Write};

use staged_agent::{ApplyDecision, PlanDecision, PlanReview, Supervisor};
use staged_core::PendingEntry;
use staged_protocol::preview_diff;

use staged_render::{escape_line, escape_text};

use crate::{
    diff::colorize,
    output::{Output, escape_diff},
};

/// How often an unclear answer is asked again before it counts as a decline.
const ASKS: usize = 3;

pub(crate) struct TerminalPerson {
    out: Output,
    /// The run's agent session, whose notices the model is told.
    session: Option<(std::sync::Arc<staged_store::SqliteStore>, u64)>,
}

impl TerminalPerson {
    pub(crate) fn new(out: Output) -> Self {
        Self { out, session: None }
    }

    /// This person, passing on the notices a person left for agent session `number`.
    pub(crate) fn with_session(
        mut self,
        store: std::sync::Arc<staged_store::SqliteStore>,
        number: u64,
    ) -> Self {
        self.session = Some((store, number));
        self
    }
}

/// Shows `question` on stderr and reads one line of stdin; `None` when stdin is closed.
async fn ask(question: String) -> Option<String> {
    tokio::task::spawn_blocking(move || {
        let mut stderr = std::io::stderr().lock();
        let _ = stderr.write_all(question.as_bytes());
        let _ = stderr.flush();
        drop(stderr);
        let mut line = String::new();
        match std::io::stdin().lock().read_line(&mut line) {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(line.trim().to_owned()),
        }
    })
    .await
    .ok()
    .flatten()
}

#[async_trait::async_trait]
impl Supervisor for TerminalPerson {
    fn notices(&self) -> Vec<String> {
        match &self.session {
            Some((store, number)) => store.take_notices(*number).unwrap_or_default(),
            None => Vec::new(),
        }
    }

    async fn approve_apply(&self, head: &PendingEntry, reason: &str) -> ApplyDecision {
        // The label, the model's reason, the diff: none of it may drive the terminal the
        // person decides at.
        let mut shown = format!(
            "\nThe model wants to apply {}\n  ({}) because: {}\n",
            escape_line(head.label()),
            escape_line(head.id.as_str()),
            escape_line(reason)
        );
        if let Some(diff) = head.action.details().and_then(preview_diff) {
            shown.push_str(&colorize(&escape_diff(diff), self.out.render.color));
        }
        let mut question = format!(
            "{shown}Apply it? Answer y or n, then your reason (e.g. \"n wrong call sites\"): "
        );
        for _ in 0..ASKS {
            let Some(answer) = ask(question.clone()).await else {
                return ApplyDecision::Decline {
                    reason: "the person gave no answer (stdin is closed)".to_owned(),
                };
            };
            let (word, rest) =
                answer.split_once(char::is_whitespace).unwrap_or((answer.as_str(), ""));
            let approve = match word.to_lowercase().as_str() {
                "y" | "yes" => true,
                "n" | "no" => false,
                _ => {
                    question = "Please answer y or n, then your reason: ".to_owned();
                    continue;
                }
            };
            let mut reason = rest.trim().to_owned();
            if reason.is_empty() {
                reason = ask("Your reason: ".to_owned()).await.unwrap_or_default();
            }
            if reason.is_empty() {
                reason = if approve {
                    "approved".to_owned()
                } else {
                    "declined without a reason".to_owned()
                };
            }
            return if approve {
                ApplyDecision::Approve { reason }
            } else {
                ApplyDecision::Decline { reason }
            };
        }
        ApplyDecision::Decline { reason: "the person's answer was not y or n".to_owned() }
    }

    async fn review_plan(&self, plan: PlanReview<'_>) -> PlanDecision {
        let question = format!(
            "\nThe plan {} ({}):\n\n{}\n\nType a to approve it, or what to change: ",
            escape_line(plan.title),
            escape_line(plan.path),
            escape_text(plan.content.trim_end())
        );
        match ask(question).await {
            Some(answer)
                if matches!(answer.to_lowercase().as_str(), "a" | "approve" | "y" | "yes") =>
            {
                PlanDecision::Approve
            }
            Some(answer) => PlanDecision::Refine(answer),
            None => PlanDecision::Refine(String::new()),
        }
    }
}
