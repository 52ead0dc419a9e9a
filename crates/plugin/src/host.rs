//! `PluginHost`: the configured plugins of one workspace, started on demand and kept running
//! for the life of the process; and the loader that turns their tools into staged tools.
//!
//! A plugin starts the first time it is needed: when a front end lists the tools (`staged mcp`,
//! `staged agent`, `staged tools`), or when a preview it staged is resolved, perhaps in another
//! process or after a restart. A plugin that crashed or was stopped after a timeout starts
//! again on the next call.

use std::{
    collections::{BTreeMap, BTreeSet},
    path::{Path, PathBuf},
    sync::Arc,
};

use rmcp::model::{CallToolResult, JsonObject, Tool as McpTool};
use staged_workspace::{FallbackRehydrator, LoadError, StoredAction, WorkspaceSessionBuilder};

use crate::{
    PluginConfig, PluginError, PluginsConfig,
    action::{Envelope, PluginAction, PluginUndo},
    config::is_plain_name,
    connection::{Connection, PLUGINS_STATE_DIR},
    protocol::is_callback,
    tool::{PluginTool, ToolDef},
};

/// The plugins of one workspace.
pub struct PluginHost {
    root: PathBuf,
    slots: BTreeMap<String, Slot>,
}

struct Slot {
    config: PluginConfig,
    conn: tokio::sync::Mutex<Option<Arc<Connection>>>,
}

impl std::fmt::Debug for PluginHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PluginHost")
            .field("root", &self.root)
            .field("plugins", &self.slots.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// What loading the plugins produced: their tools (callbacks excluded) and what went wrong.
#[derive(Debug, Default)]
pub struct Loaded {
    /// The tools to offer, in plugin then listing order.
    pub(crate) tools: Vec<ToolDef>,
    /// Plugins that did not start, invalid tool definitions.
    pub errors: Vec<LoadError>,
}

impl PluginHost {
    /// A host for `plugins`, run from `root` (the workspace root). Nothing starts yet.
    pub fn new(root: &Path, plugins: &PluginsConfig) -> Arc<PluginHost> {
        let slots = plugins
            .iter()
            .map(|config| {
                let slot = Slot { config: config.clone(), conn: tokio::sync::Mutex::new(None) };
                (config.name.clone(), slot)
            })
            .collect();
        Arc::new(PluginHost { root: root.to_path_buf(), slots })
    }

    /// Whether any plugin is configured.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Whether `plugin` is configured here.
    pub(crate) fn has_plugin(&self, plugin: &str) -> bool {
        self.slots.contains_key(plugin)
    }

    /// Starts every plugin (concurrently) and lists their tools. A plugin that does not start
    /// is a load error (`Failed to load tool: <message>`), and so is each invalid tool
    /// definition; the rest load.
    pub async fn load(self: &Arc<Self>) -> Loaded {
        let starts = self.slots.keys().map(|name| {
            let host = Arc::clone(self);
            let name = name.clone();
            tokio::spawn(async move {
                let res = host.connection(&name).await;
                (name, res)
            })
        });
        let mut res = Loaded::default();
        for start in starts.collect::<Vec<_>>() {
            let Ok((plugin, conn)) = start.await else { continue };
            let origin = origin(&plugin);
            match conn {
                Ok(conn) => res.add_tools(&plugin, &origin, &conn.tools),
                Err(err) => res.errors.push(LoadError::failed(origin, err)),
            }
        }
        res
    }

    /// Registers the loaded tools, the load errors, and the rehydrator of plugin previews on
    /// `builder`.
    pub fn register(
        self: &Arc<Self>,
        loaded: Loaded,
        mut builder: WorkspaceSessionBuilder,
    ) -> WorkspaceSessionBuilder {
        builder = self.register_rehydrator(builder);
        for error in loaded.errors {
            builder = builder.load_error(error);
        }
        for def in loaded.tools {
            let (host, origin, name) = (Arc::clone(self), origin(&def.plugin), def.name.clone());
            builder = builder.tool_from(
                &origin,
                &name,
                Box::new(move |ctx| Arc::new(PluginTool::new(def, host, ctx.api()))),
                None,
            );
        }
        builder
    }

    /// Registers only the rehydrator of plugin previews and the undo handler of plugin
    /// applies (for commands that resolve, undo or list, and start a plugin only to run a
    /// callback).
    pub fn register_rehydrator(
        self: &Arc<Self>,
        builder: WorkspaceSessionBuilder,
    ) -> WorkspaceSessionBuilder {
        builder
            .fallback_rehydrator(self.rehydrator())
            .undo_fallback(Arc::new(PluginUndo::new(Arc::clone(self))))
    }

    /// Rebuilds plugin previews from the durable stack: an entry whose payload carries
    /// `staged/plugin` is this host's. Its plugin must be configured (and, for a workspace's
    /// plugin, trusted) here, else it reads back as unavailable, saying so.
    pub fn rehydrator(self: &Arc<Self>) -> FallbackRehydrator {
        let host = Arc::clone(self);
        Arc::new(move |stored: &StoredAction| {
            Envelope::read(&stored.payload)?;
            Some(PluginAction::rehydrate(&host, stored))
        })
    }

    /// Calls `tool` of `plugin`, starting the plugin first if it is not running. A plugin
    /// that crashed or timed out is forgotten, so the next call starts it again.
    pub(crate) async fn call(
        &self,
        plugin: &str,
        tool: &str,
        args: JsonObject,
    ) -> Result<CallToolResult, PluginError> {
        let conn = self.connection(plugin).await?;
        if is_callback(tool) {
            self.prepare_state_dir(plugin);
        }
        let res = conn.call(tool, args).await;
        if let Err(err) = &res
            && !matches!(err, PluginError::Protocol { .. } if conn.is_live())
        {
            self.forget(plugin, &conn).await;
        }
        res
    }

    /// Creates `.staged/plugins/<plugin>` (never through a symlink) before a callback runs,
    /// where the helpers keep their idempotency records (`STAGED_PLUGIN_STATE`). A callback
    /// runs only for a preview in the workspace's database, so the state folder exists then;
    /// if the folder cannot be made, the helpers run the callback without a record.
    fn prepare_state_dir(&self, plugin: &str) {
        let Ok(workspace) = staged_workspace::ConfinedRoot::new(&self.root) else { return };
        if let Ok(Some(plugins)) = workspace.state_subdir(PLUGINS_STATE_DIR, true) {
            let _ = plugins.create_dir(plugin);
        }
    }

    /// Stops every running plugin.
    pub async fn shutdown(&self) {
        for slot in self.slots.values() {
            let conn = slot.conn.lock().await.take();
            if let Some(conn) = conn {
                conn.shutdown().await;
            }
        }
    }

    async fn connection(&self, plugin: &str) -> Result<Arc<Connection>, PluginError> {
        let slot = self
            .slots
            .get(plugin)
            .ok_or_else(|| PluginError::NotConfigured { plugin: plugin.to_owned() })?;
        let mut conn = slot.conn.lock().await;
        if let Some(live) = conn.as_ref() {
            if live.is_live() {
                return Ok(Arc::clone(live));
            }
            // Crashed, or its session died with the runtime that started it: stop what is
            // left of it, and start afresh.
            let stale = Arc::clone(live);
            *conn = None;
            stale.shutdown().await;
        }
        let started = Arc::new(Connection::start(&slot.config, &self.root).await?);
        *conn = Some(Arc::clone(&started));
        Ok(started)
    }

    async fn forget(&self, plugin: &str, broken: &Arc<Connection>) {
        let Some(slot) = self.slots.get(plugin) else { return };
        let mut conn = slot.conn.lock().await;
        if conn.as_ref().is_some_and(|live| Arc::ptr_eq(live, broken)) {
            *conn = None;
        }
        drop(conn);
        broken.shutdown().await;
    }
}

impl Loaded {
    fn add_tools(&mut self, plugin: &str, origin: &str, tools: &[McpTool]) {
        let names: BTreeSet<String> = tools.iter().map(|tool| tool.name.to_string()).collect();
        let names = Arc::new(names);
        for (idx, tool) in tools.iter().enumerate() {
            match ToolDef::from_mcp(plugin, tool, Arc::clone(&names)) {
                Ok(None) => {}
                Ok(Some(def)) => self.tools.push(def),
                Err(why) => self.errors.push(LoadError::new(
                    origin,
                    format!("Plugin returned invalid tool at index {idx}: {why}"),
                )),
            }
        }
    }
}

fn origin(plugin: &str) -> String {
    format!("plugin \"{plugin}\"")
}

impl ToolDef {
    /// A staged tool for `tool`, `Ok(None)` for a callback, `Err` when the definition is
    /// invalid.
    fn from_mcp(
        plugin: &str,
        tool: &McpTool,
        plugin_tools: Arc<BTreeSet<String>>,
    ) -> Result<Option<ToolDef>, String> {
        let name = tool.name.to_string();
        if !is_plain_name(&name) {
            return Err(format!(
                "the name {name:?} must be 1 to 64 letters, digits, \"_\" or \"-\""
            ));
        }
        if tool.input_schema.get("type").and_then(|t| t.as_str()) != Some("object") {
            return Err(format!(
                "`{name}`: its inputSchema must be a JSON Schema of type \"object\""
            ));
        }
        if is_callback(&name) {
            return Ok(None);
        }
        let description = tool.description.as_deref().unwrap_or("").trim().to_owned();
        if description.is_empty() {
            return Err(format!("`{name}` has no description; the model needs one"));
        }
        let title = tool
            .title
            .clone()
            .or_else(|| tool.annotations.as_ref().and_then(|a| a.title.clone()))
            .unwrap_or_else(|| name.clone());
        let read_only = tool.annotations.as_ref().and_then(|a| a.read_only_hint).unwrap_or(false);
        Ok(Some(ToolDef {
            plugin: plugin.to_owned(),
            name,
            title,
            description,
            schema: serde_json::Value::Object((*tool.input_schema).clone()),
            read_only,
            plugin_tools,
        }))
    }
}
