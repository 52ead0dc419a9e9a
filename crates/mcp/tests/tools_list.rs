//! `tools/list`: the seven tools, their schemas (the tools' own), descriptions and annotations.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::Fixture;
use staged_core::{RESOLVE_DESCRIPTION, ResolveTool};
use staged_mcp::Approval;

#[tokio::test]
async fn lists_the_seven_tools_with_schemas_and_annotations() {
    let fx = Fixture::new(&[]);
    let conn = fx.connect(Approval::None).await;
    let tools = conn.client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        ["ast_grep", "ast_edit", "edit", "write", "apply_patch", "resolve", "pending"]
    );

    let tool = |name: &str| tools.iter().find(|t| t.name == name).unwrap().clone();
    let ann = |name: &str| tool(name).annotations.unwrap();

    assert_eq!(ann("ast_grep").read_only_hint, Some(true));
    assert_eq!(ann("pending").read_only_hint, Some(true));
    assert_eq!(ann("resolve").read_only_hint, Some(false));
    assert_eq!(ann("resolve").destructive_hint, Some(true));
    // The producers only stage previews: neither read-only nor destructive.
    for producer in ["ast_edit", "edit", "write", "apply_patch"] {
        assert_eq!(ann(producer).read_only_hint, Some(false), "{producer}");
        assert_eq!(ann(producer).destructive_hint, Some(false), "{producer}");
    }
    // Every hint is set, as each tool behaves (`docs/contract/mcp.md#tools`), and every tool
    // has its label as its title.
    let expected = [
        // (name, title, readOnly, destructive, idempotent)
        ("ast_grep", "AST Grep", true, false, true),
        ("ast_edit", "AST Edit", false, false, true),
        ("edit", "Edit", false, false, true),
        ("write", "Write", false, false, true),
        ("apply_patch", "Apply Patch", false, false, true),
        ("resolve", "Resolve", false, true, false),
        ("pending", "Pending", true, false, true),
    ];
    for (name, title, read_only, destructive, idempotent) in expected {
        let ann = ann(name);
        assert_eq!(tool(name).title.as_deref(), Some(title), "{name}");
        assert_eq!(ann.title.as_deref(), Some(title), "{name}");
        assert_eq!(ann.read_only_hint, Some(read_only), "{name}");
        assert_eq!(ann.destructive_hint, Some(destructive), "{name}");
        assert_eq!(ann.idempotent_hint, Some(idempotent), "{name}");
        assert_eq!(ann.open_world_hint, Some(false), "{name}");
    }

    let session = fx.open_session();
    let edit_schema = serde_json::Value::Object((*tool("ast_edit").input_schema).clone());
    assert_eq!(edit_schema, staged_core::Tool::parameters(&session.ast_edit_tool()));
    let props = &edit_schema["properties"];
    assert_eq!(props["ops"]["items"]["required"], serde_json::json!(["pat", "out"]));
    for optional in ["lang", "selector", "strictness", "limit", "max_files", "includeParseErrors"] {
        assert!(props.get(optional).is_some(), "ast_edit schema lacks {optional}: {props}");
    }
    let resolve_schema = serde_json::Value::Object((*tool("resolve").input_schema).clone());
    assert_eq!(resolve_schema, ResolveTool::schema());
    assert_eq!(tool("resolve").description.as_deref(), Some(RESOLVE_DESCRIPTION));
    let grep_schema = serde_json::Value::Object((*tool("ast_grep").input_schema).clone());
    assert_eq!(grep_schema, staged_core::Tool::parameters(&session.ast_grep_tool()));
    let schema = |name: &str| serde_json::Value::Object((*tool(name).input_schema).clone());
    assert_eq!(schema("edit"), staged_core::Tool::parameters(&session.edit_tool()));
    assert_eq!(schema("edit")["required"], serde_json::json!(["path"]));
    for key in ["old_string", "new_string", "replace_all", "edits"] {
        assert!(schema("edit")["properties"].get(key).is_some(), "edit schema lacks {key}");
    }
    assert_eq!(schema("write")["required"], serde_json::json!(["path", "content"]));
    assert_eq!(schema("apply_patch")["required"], serde_json::json!(["input"]));
    for name in ["edit", "write", "apply_patch"] {
        assert_eq!(schema(name)["additionalProperties"], false, "{name}");
    }

    // Every tool declares the `structuredContent` it returns: the `--json` object.
    for tool in &tools {
        let schema = serde_json::Value::Object((*tool.output_schema.clone().unwrap()).clone());
        assert_eq!(schema["type"], "object", "{}", tool.name);
        assert_eq!(
            schema["required"],
            serde_json::json!(["text", "isError", "details", "pending"]),
            "{}",
            tool.name
        );
    }

    // Codex shows the instructions as the tool namespace's description.
    let instructions = conn.client.peer_info().unwrap().instructions.clone().unwrap();
    for needle in [
        "`ast_edit` only stages a preview",
        "`edit`",
        "`write`",
        "`apply_patch`",
        "`resolve`",
        "\"apply\"",
        "\"discard\"",
        "reminder",
    ] {
        assert!(instructions.contains(needle), "{needle}: {instructions}");
    }
    conn.close().await;
}
