//! The read-only `ast_grep` tool: matches with location, metavariables, context and details.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Fixture, details};
use serde_json::json;
use staged_core::Tool;

#[tokio::test]
async fn reports_matches_with_metavariables_and_context() {
    let fx = Fixture::new(&[
        ("src/a.ts", "const a = 1;\nfoo(a, b, c);\nconst z = 2;\n"),
        ("src/b.py", "foo(1, 2)\n"),
        ("README", "foo(1)\n"),
    ]);
    assert!(fx.grep.read_only());
    assert!(!fx.grep.deferrable());
    let res = fx.grep(json!({"pattern": "foo($FIRST, $$$REST)", "paths": ["src"]})).await.unwrap();
    let d = details(&res);
    assert_eq!(d["totalMatches"], 2, "{d}");
    assert_eq!(d["filesSearched"], 2);
    let m = &d["matches"][0];
    assert_eq!(m["path"], "src/a.ts");
    assert_eq!((m["line"].as_u64(), m["column"].as_u64()), (Some(2), Some(1)));
    assert_eq!(m["text"], "foo(a, b, c)");
    assert_eq!(m["metaVariables"], json!({"$FIRST": "a", "$$$REST": "b, c"}));
    assert_eq!(
        m["context"],
        json!([[1, "const a = 1;"], [2, "foo(a, b, c);"], [3, "const z = 2;"]])
    );
    assert_eq!(d["matches"][1]["path"], "src/b.py");
    assert!(!fx.has_pending(), "a search stages nothing");
    insta::assert_snapshot!("grep_text", res.text_content());
}

#[tokio::test]
async fn limit_lang_and_no_match() {
    let fx = Fixture::new(&[("a.ts", "foo(1); foo(2);\n"), ("b.ts", "foo(3);\n")]);
    let res = fx.grep(json!({"pattern": "foo($A)", "paths": ["."], "limit": 2})).await.unwrap();
    assert_eq!(details(&res)["totalMatches"], 2);
    assert_eq!(details(&res)["limitReached"], true);
    let res =
        fx.grep(json!({"pattern": "nothing($A)", "paths": ["."], "lang": "TS"})).await.unwrap();
    assert_eq!(res.text_content(), "No matches found");
    let err = fx.grep(json!({"pattern": "x", "paths": ["."], "lang": "cobol"})).await.unwrap_err();
    assert!(err.message().starts_with("Unsupported language 'cobol'. Supported:"));
}

/// A limit that cuts one file's matches says so, though no other file is left to cut.
#[tokio::test]
async fn a_search_limit_that_cuts_a_single_file_is_reported() {
    let fx = Fixture::new(&[("a.ts", "foo(1);\nfoo(2);\nfoo(3);\n")]);
    for (limit, reached) in [(2, true), (3, false)] {
        let res = fx
            .grep(json!({"pattern": "foo($A)", "paths": ["a.ts"], "limit": limit}))
            .await
            .unwrap();
        assert_eq!(details(&res)["matches"].as_array().unwrap().len(), limit, "{limit}");
        assert_eq!(details(&res)["limitReached"], reached, "{limit}");
    }
}

#[tokio::test]
async fn an_empty_pattern_names_the_pattern_argument() {
    let fx = Fixture::new(&[("a.ts", "foo(1);\n")]);
    for pattern in ["", "   "] {
        let err = fx.grep(json!({"pattern": pattern, "paths": ["a.ts"]})).await.unwrap_err();
        assert_eq!(err.message(), "`pattern` must be a non-empty pattern");
    }
}
