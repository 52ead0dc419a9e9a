//! Reading a log entry's undo data (`undo_ops`): format 1 (edits only, what `ast_edit` wrote
//! before format 2) and format 2 are read; anything else is refused with the reason.

use serde_json::json;
use staged_journal::{Applied, Edit, undo_ops};

/// The undo data of one record-mode write, as the log keeps it (format 2).
#[test]
fn format_2_is_read_as_its_ops() {
    let data = json!({
        "ops": [{
            "edits": [{"after": "const v = 2;\n", "before": "const v = 7;\n", "start": 155}],
            "op": "update",
            "path": "src/f199.ts"
        }],
        "version": 2
    });
    let edit = Edit { start: 155, before: "const v = 7;\n".into(), after: "const v = 2;\n".into() };
    assert_eq!(
        undo_ops(&data),
        Ok(vec![Applied::Update { path: "src/f199.ts".into(), edits: vec![edit] }])
    );
}

/// Format 1's files are read as updates, in order.
#[test]
fn format_1_is_read_as_updates() {
    let data = json!({
        "version": 1,
        "files": [
            {"path": "a.ts", "edits": [{"start": 0, "before": "x\n", "after": "y\n"}]},
            {"path": "b.ts", "edits": []}
        ]
    });
    let edit = Edit { start: 0, before: "x\n".into(), after: "y\n".into() };
    assert_eq!(
        undo_ops(&data),
        Ok(vec![
            Applied::Update { path: "a.ts".into(), edits: vec![edit] },
            Applied::Update { path: "b.ts".into(), edits: Vec::new() },
        ])
    );
}

/// Undo data of a wrong shape, of a format this build does not know, or without a version is
/// refused, and the reason says which.
#[test]
fn other_undo_data_is_refused_with_the_reason() {
    let malformed = [
        json!({"version": 2, "ops": "not a list"}),
        json!({"version": 2, "ops": [{"op": "update", "path": "a.ts", "edits": [{"start": -1}]}]}),
        json!({"version": 1, "files": [], "extra": true}),
        json!({"version": 1, "files": [{"path": 3, "edits": []}]}),
    ];
    for data in malformed {
        let refused = undo_ops(&data).expect_err("malformed undo data is refused");
        assert!(refused.starts_with("its undo data is malformed ("), "{data}: {refused}");
    }
    assert_eq!(
        undo_ops(&json!({"version": 9, "ops": []})),
        Err("its undo data is of format 9".to_owned())
    );
    assert_eq!(
        undo_ops(&json!({"ops": []})),
        Err("its undo data is malformed (no version)".to_owned())
    );
}
