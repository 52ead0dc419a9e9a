//! Durable custom actions in one call: a typed payload, and the one function that makes the
//! action from it, shared by the tool that stages it and the rehydrator that rebuilds it in
//! another process (see [`WorkspaceSessionBuilder::durable_tool`]).

use std::{marker::PhantomData, sync::Arc};

use serde::{Serialize, de::DeserializeOwned};
use staged_core::{CustomToolApi, PendingAction, PendingId, ToolError, with_payload};
use staged_journal::ConfinedRoot;
use staged_store::{Rehydrator, StoredAction};

use crate::{
    ToolContext, WorkspaceSessionBuilder,
    builder::{CUSTOM_ORIGIN, RehydratorIn},
};

/// Makes the action of a payload: called when the tool stages it and when another process
/// (or this one after a restart) rebuilds it from the stack.
type MakeFn<P> = dyn Fn(&ConfinedRoot, P) -> Arc<dyn PendingAction> + Send + Sync;

/// A durable tool's handle: [`Stager::stage`] makes the action of a typed payload and stages
/// it under the tool's name, with the payload serialized for its rehydrator.
pub struct Stager<P> {
    api: CustomToolApi,
    workspace: ConfinedRoot,
    make: Arc<MakeFn<P>>,
    payload: PhantomData<fn(P)>,
}

impl<P> Clone for Stager<P> {
    fn clone(&self) -> Self {
        Self {
            api: self.api.clone(),
            workspace: self.workspace.clone(),
            make: Arc::clone(&self.make),
            payload: PhantomData,
        }
    }
}

impl<P> std::fmt::Debug for Stager<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stager")
            .field("tool", &self.api.source_tool_name())
            .field("root", &self.workspace.root())
            .finish_non_exhaustive()
    }
}

impl<P: Serialize> Stager<P> {
    /// Stages the action of `payload` on the session's stack and returns its id.
    ///
    /// # Errors
    /// When `payload` does not serialize (`Could not stage the preview: ...`), or the stack
    /// refuses the push ([`CustomToolApi::push_pending_action`]).
    pub fn stage(&self, payload: P) -> Result<PendingId, ToolError> {
        let value = serde_json::to_value(&payload).map_err(|err| {
            ToolError::new(format!("Could not stage the preview: its payload: {err}"))
        })?;
        let action = (self.make)(&self.workspace, payload);
        self.api.push_arc(with_payload(action, value))
    }

    /// The name the tool was registered as, for its [`Tool::name`](staged_core::Tool::name),
    /// so that the name is written once.
    pub fn tool_name(&self) -> &str {
        self.api.source_tool_name().unwrap_or_default()
    }

    /// Stages the tool's journaled file changes under its name, as
    /// [`ToolContext::changes`] does.
    pub fn changes(&self) -> crate::ChangeStager {
        crate::ChangeStager { api: self.api.clone(), workspace: self.workspace.clone() }
    }

    /// The workspace the actions are made in.
    pub fn workspace(&self) -> &ConfinedRoot {
        &self.workspace
    }
}

impl WorkspaceSessionBuilder {
    /// Registers the custom tool `name` whose previews are the actions `make` makes of a
    /// typed payload `P`. `factory` builds the tool once the session exists, from a
    /// [`Stager`] that stages `make`'s action of a payload (as `name`'s, the payload
    /// serialized), and the rehydrator registered for `name` deserializes the payload and
    /// calls the same `make`: a preview survives a restart, and is resolved in any process
    /// that registered the tool, with the name given once.
    ///
    /// A payload that no longer deserializes (the type changed since it was staged) reads
    /// back as an unavailable action that can only be discarded, saying
    /// `invalid <name> payload: <serde's error>`.
    #[must_use]
    pub fn durable_tool<P, A>(
        self,
        name: &str,
        make: impl Fn(&ConfinedRoot, P) -> A + Send + Sync + 'static,
        factory: impl FnOnce(Stager<P>, &ToolContext<'_>) -> Arc<dyn staged_core::Tool> + Send + 'static,
    ) -> Self
    where
        P: Serialize + DeserializeOwned + 'static,
        A: PendingAction + 'static,
    {
        let make: Arc<MakeFn<P>> = Arc::new(move |workspace: &ConfinedRoot, payload: P| {
            Arc::new(make(workspace, payload)) as Arc<dyn PendingAction>
        });
        let rehydrate_with = Arc::clone(&make);
        let owner = name.to_owned();
        let rehydrator: RehydratorIn = Arc::new(move |workspace: &ConfinedRoot| {
            let (make, owner, workspace) =
                (Arc::clone(&rehydrate_with), owner.clone(), workspace.clone());
            Arc::new(move |stored: &StoredAction| {
                let payload: P = serde_json::from_value(stored.payload.clone())
                    .map_err(|err| format!("invalid {owner} payload: {err}"))?;
                Ok(with_payload(make(&workspace, payload), stored.payload.clone()))
            }) as Rehydrator
        });
        self.tool_in(
            CUSTOM_ORIGIN,
            name,
            Box::new(move |ctx: &ToolContext<'_>| {
                let stager = Stager {
                    api: ctx.api(),
                    workspace: ctx.workspace().clone(),
                    make,
                    payload: PhantomData,
                };
                factory(stager, ctx)
            }),
            Some(rehydrator),
        )
    }
}
