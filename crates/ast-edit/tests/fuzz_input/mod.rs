//! The fuzzer's inputs for `tests/fuzz.rs`: patterns and rewrites (seeds of many grammars,
//! mutated, or random), paths, JSON values, and the two tools' argument objects, valid and
//! structurally damaged.

use proptest::prelude::*;
use serde_json::{Map, Number, Value, json};

// ---------------------------------------------------------------------------------------------
// Strings: patterns, rewrites, paths.

/// Valid `(pattern, rewrite, file it matches in)` across the grammars, ast-grep's metavariable
/// forms included.
const SEEDS: &[(&str, &str, &str)] = &[
    ("foo($A)", "bar($A)", "a.py"),
    ("foo($$$ARGS)", "bar($$$ARGS)", "a.js"),
    ("console.log($$$ARGS)", "logger.info($$$ARGS)", "src/a.ts"),
    ("$A && $A()", "$A?.()", "src/a.ts"),
    ("foo($A)", "bar($A)", "many.ts"),
    ("foo($A)", "bar($A)", "deep.ts"),
    ("foo($A)", "bar($A)", "bom.ts"),
    ("foo($A)", "bar($A)", "crlf.py"),
    ("foo($A)", "bar($A)", "nul.js"),
    ("foo($A)", "bar($A)", "latin1.rs"),
    ("foo($A)", "bar($A)", "broken.ts"),
    ("foo($A)", "bar($A)", "unicode/ünï çødé.ts"),
    ("1", "2", "deep.json"),
    ("fn $F($$$P) $B", "fn renamed($$$P) $B", "src/a.rs"),
    ("greet $A", "hello $A", "run.sh"),
    ("foo($A);", "bar($A);", "a.c"),
    ("Foo($A)", "Bar($A)", "A.cs"),
    ("a { color: $C; }", "a { background: $C; }", "a.css"),
    ("foo $A", "bar $A", "A.hs"),
    ("a = $V", "b = $V", "main.tf"),
    ("<p>$A</p>", "<div>$A</div>", "a.html"),
    ("\"a\"", "\"b\"", "a.json"),
    ("# $T", "## $T", "README.md"),
    ("function f() public { $$$B }", "function g() public { $$$B }", "a.sol"),
    ("a: $V", "b: $V", "a.yaml"),
    ("Init == $E", "Start == $E", "M.tla"),
    ("add_executable($$$A)", "add_library($$$A)", "CMakeLists.txt"),
    ("--- $F", "--- old/$F", "a.patch"),
    ("(setq $A $B)", "(setq-default $A $B)", "init.el"),
    ("foo($A)", "bar($A)", "a.erl"),
    ("call foo($A)", "call bar($A)", "a.f90"),
    ("{ user { $$$F } }", "{ account { $$$F } }", "q.graphql"),
    ("name = old", "name = new", "a.ini"),
    ("all", "build", "Makefile"),
    ("foo($A);", "bar($A);", "a.m"),
    ("foo $A", "bar $A", "a.ml"),
    ("Write-Host $A", "Write-Output $A", "a.ps1"),
    ("[a-z]", "[a-f]", "a.regex"),
    ("SELECT $A FROM t", "SELECT $A FROM users", "a.sql"),
    ("cc_library($$$A)", "cc_binary($$$A)", "BUILD"),
    ("name = $V", "title = $V", "Cargo.toml"),
    ("$A = $B", "$B = $A", "a.v"),
    ("<b>$$$C</b>", "<c>$$$C</c>", "a.xml"),
    ("$_", "$_", "a.go"),
    ("$$$", "", "a.lua"),
    ("$A", "$A$A", "a.rb"),
];

/// Tokens that stress pattern and template parsers.
const NASTY: &[&str] = &[
    "$", "$$", "$$$", "$A", "$$$A", "$_", "$1", "$a", "$AB_C", "µ", "_", "𐀀", "(", ")", "[", "]",
    "{", "}", "<", ">", "</", "/>", "\"", "'", "`", "\\", "\\u{0}", "\n", "\r\n", "\r", "\t", "\0",
    "\u{feff}", "\u{202e}", "é", "名", "🦀", "/*", "*/", "//", "#", "--", ";", ",", "...", "::",
    "=>", "->", "@", "%", "?", "!", "|", "&&", "${", "$(", "}}", "{{", "<?php", "?>", "====",
    "----", "@@", "\x7f", "\u{fffd}",
];

/// How to change a string.
#[derive(Debug, Clone)]
enum StrMutation {
    Insert { at: usize, token: usize },
    Delete { at: usize, len: usize },
    Truncate { at: usize },
    Repeat { times: usize },
    Nest { depth: usize },
    Reverse,
}

fn str_mutation() -> impl Strategy<Value = StrMutation> {
    prop_oneof![
        6 => (any::<usize>(), 0..NASTY.len()).prop_map(|(at, token)| StrMutation::Insert { at, token }),
        3 => (any::<usize>(), 1usize..6).prop_map(|(at, len)| StrMutation::Delete { at, len }),
        2 => any::<usize>().prop_map(|at| StrMutation::Truncate { at }),
        1 => (2usize..400).prop_map(|times| StrMutation::Repeat { times }),
        1 => (1usize..300).prop_map(|depth| StrMutation::Nest { depth }),
        1 => Just(StrMutation::Reverse),
    ]
}

/// The char boundary at `at` modulo the string's length (in chars).
fn boundary(s: &str, at: usize) -> usize {
    let n_chars = s.chars().count();
    let idx = at % (n_chars + 1);
    s.char_indices().nth(idx).map_or(s.len(), |(i, _)| i)
}

fn mutate(mut s: String, mutations: &[StrMutation]) -> String {
    for mutation in mutations {
        s = match mutation {
            StrMutation::Insert { at, token } => {
                let i = boundary(&s, *at);
                format!("{}{}{}", &s[..i], NASTY[*token], &s[i..])
            }
            StrMutation::Delete { at, len } => {
                let start = boundary(&s, *at);
                let end = s[start..].char_indices().nth(*len).map_or(s.len(), |(i, _)| start + i);
                format!("{}{}", &s[..start], &s[end..])
            }
            StrMutation::Truncate { at } => s[..boundary(&s, *at)].to_owned(),
            StrMutation::Repeat { times } => s.repeat(*times),
            StrMutation::Nest { depth } => {
                format!("{}{s}{}", "(".repeat(*depth), ")".repeat(*depth))
            }
            StrMutation::Reverse => s.chars().rev().collect(),
        };
    }
    s
}

/// A string of syntax-heavy characters.
fn syntax_soup() -> impl Strategy<Value = String> {
    proptest::collection::vec(0..NASTY.len(), 0..24)
        .prop_map(|tokens| tokens.into_iter().map(|t| NASTY[t]).collect())
}

/// A pattern or rewrite: a seed (mutated or not), syntax soup, or any string.
fn code_string(rewrite: bool) -> impl Strategy<Value = String> {
    prop_oneof![
        4 => (0..SEEDS.len(), proptest::collection::vec(str_mutation(), 0..4)).prop_map(move |(seed, mutations)| {
            let (pat, out, _) = SEEDS[seed];
            mutate(if rewrite { out } else { pat }.to_owned(), &mutations)
        }),
        2 => syntax_soup(),
        1 => any::<String>(),
        1 => "[a-z$A-Z_(){}\\[\\];. ]{0,60}",
        1 => (1usize..20_000).prop_map(|n| "x".repeat(n)),
    ]
}

/// Paths: valid ones, `..` and absolute ones, URLs, globs, NUL bytes, long and unicode ones.
const PATHS: &[&str] = &[
    ".",
    "./",
    "src",
    "src/a.ts",
    "./src/./a.ts",
    "src//a.ts",
    "src/a.ts/",
    "src/a.ts/..",
    "*.ts",
    "**/*.ts",
    "**/*",
    "**",
    "*",
    "***",
    "src/**/[!x]*",
    "{a,b}.ts",
    "[",
    "src/[a-",
    "!*.ts",
    "..",
    "../",
    "../outside",
    "../outside/secret.ts",
    "./../outside/secret.ts",
    "src/../../outside/secret.ts",
    "link_out.ts",
    "link_dir",
    "link_dir/secret.ts",
    "link_dir/*",
    "link_in.ts",
    "@ROOT@",
    "@ROOT@/src/a.ts",
    "@ROOT@/../outside/secret.ts",
    "@OUTSIDE@",
    "@OUTSIDE@/secret.ts",
    "/",
    "/etc",
    "/etc/passwd",
    "/dev/null",
    "http://example.invalid/a.ts",
    "file:///etc/passwd",
    "C:\\Windows\\win.ini",
    "\\\\server\\share\\a.ts",
    "~",
    "~/a.ts",
    "$HOME/a.ts",
    "a\0b",
    "src/\0",
    "",
    " ",
    "\t\n",
    ".staged",
    ".staged/staged.db",
    ".git",
    "deep.json",
    "many.ts",
    "nul.js",
    "latin1.rs",
    "broken.ts",
    "unicode",
    "unicode/ünï çødé.ts",
    "Dockerfile",
    "notes.txt",
    "Makefile",
    "M.tla",
    "a.v",
    "no-such-file.ts",
    "🦀.ts",
    "\u{202e}st.a",
];

fn path_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        8 => (0..PATHS.len()).prop_map(|i| json!(PATHS[i])),
        1 => (1usize..3000).prop_map(|n| json!("a/".repeat(n))),
        1 => (1usize..10_000).prop_map(|n| json!("x".repeat(n))),
        1 => any::<String>().prop_map(Value::String),
        1 => json_value(),
    ]
}

// ---------------------------------------------------------------------------------------------
// JSON values and argument objects.

/// Real keys of both tools, near-misses, and others.
const KEYS: &[&str] = &[
    "ops",
    "paths",
    "pat",
    "out",
    "pattern",
    "lang",
    "selector",
    "strictness",
    "limit",
    "max_files",
    "maxFiles",
    "includeParseErrors",
    "Paths",
    "path",
    "rewrite",
    "",
    "\0",
    "__proto__",
    "ünï",
];

fn json_number() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!(0)),
        Just(json!(-1)),
        Just(json!(1)),
        Just(json!(0.5)),
        Just(json!(1.5)),
        Just(json!(-0.0)),
        Just(json!(1e308)),
        Just(json!(-1e308)),
        Just(json!(f64::MIN_POSITIVE)),
        Just(json!(u64::MAX)),
        Just(json!(i64::MIN)),
        Just(json!(9_007_199_254_740_993u64)),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_filter_map("finite", |f| Number::from_f64(f).map(Value::Number)),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        json_number(),
        any::<String>().prop_map(Value::String),
        (0..PATHS.len()).prop_map(|i| json!(PATHS[i])),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::vec(
                ((0..KEYS.len()).prop_map(|k| KEYS[k].to_owned()), inner),
                0..6
            )
            .prop_map(|entries| Value::Object(entries.into_iter().collect())),
        ]
    })
}

/// A value for `lang`: names, aliases and their case variants, languages we do not compile,
/// and junk.
fn lang_value() -> impl Strategy<Value = Value> {
    const LANGS: &[&str] = &[
        "typescript",
        "ts",
        "TypeScript",
        "tsx",
        "javascript",
        "rust",
        "RUST",
        "python",
        "go",
        "html",
        "css",
        "json",
        "yaml",
        "bash",
        "c",
        "c++",
        "cpp",
        "markdown",
        "tlaplus",
        "tla+",
        "make",
        "makefile",
        "ini",
        "regex",
        "diff",
        "emacs-lisp",
        "elisp",
        "verilog",
        "starlark",
        "powershell",
        "graphql",
        "sql",
        "toml",
        "xml",
        "ocaml",
        "objc",
        "fortran",
        "erlang",
        "dockerfile",
        "vue",
        "svelte",
        "just",
        "klingon",
        "",
        " ",
        "\0",
        "..",
        "typescript\0",
    ];
    prop_oneof![
        6 => (0..LANGS.len()).prop_map(|i| json!(LANGS[i])),
        1 => any::<String>().prop_map(Value::String),
        1 => json_value(),
    ]
}

fn selector_value() -> impl Strategy<Value = Value> {
    const KINDS: &[&str] = &[
        "call_expression",
        "expression_statement",
        "function_declaration",
        "identifier",
        "pair",
        "program",
        "ERROR",
        "MISSING",
        "",
        " ",
        "call_expression\0",
        "(",
        "$A",
    ];
    prop_oneof![
        4 => (0..KINDS.len()).prop_map(|i| json!(KINDS[i])),
        1 => any::<String>().prop_map(Value::String),
        1 => json_value(),
    ]
}

fn strictness_value() -> impl Strategy<Value = Value> {
    const VALUES: &[&str] =
        &["cst", "smart", "ast", "relaxed", "signature", "template", "CST", "loose", ""];
    prop_oneof![
        4 => (0..VALUES.len()).prop_map(|i| json!(VALUES[i])),
        1 => json_value(),
    ]
}

fn count_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        4 => json_number(),
        1 => json_value(),
        1 => Just(json!("10")),
    ]
}

fn op_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        8 => (code_string(false), code_string(true)).prop_map(|(pat, out)| json!({"pat": pat, "out": out})),
        1 => json_value(),
    ]
}

/// How to damage an argument object.
#[derive(Debug, Clone)]
enum ObjMutation {
    Remove(usize),
    Set(usize, Value),
    WrapInArray,
    Replace(Value),
}

fn obj_mutation() -> impl Strategy<Value = ObjMutation> {
    prop_oneof![
        3 => (0..KEYS.len()).prop_map(ObjMutation::Remove),
        3 => ((0..KEYS.len()), json_value()).prop_map(|(k, v)| ObjMutation::Set(k, v)),
        1 => Just(ObjMutation::WrapInArray),
        1 => json_value().prop_map(ObjMutation::Replace),
    ]
}

fn damage(mut args: Value, mutations: Vec<ObjMutation>) -> Value {
    for mutation in mutations {
        args = match (mutation, args) {
            (ObjMutation::Remove(k), Value::Object(mut map)) => {
                map.remove(KEYS[k]);
                Value::Object(map)
            }
            (ObjMutation::Set(k, v), Value::Object(mut map)) => {
                map.insert(KEYS[k].to_owned(), v);
                Value::Object(map)
            }
            (ObjMutation::WrapInArray, args) => json!([args]),
            (ObjMutation::Replace(v), _) => v,
            (_, args) => args,
        };
    }
    args
}

/// An object with `required` keys and each optional key present or not.
fn object(
    required: Vec<(&'static str, BoxedStrategy<Value>)>,
    optional: Vec<(&'static str, BoxedStrategy<Value>)>,
) -> BoxedStrategy<Value> {
    let required = required
        .into_iter()
        .map(|(k, s)| s.prop_map(move |v| Some((k, v))).boxed())
        .collect::<Vec<_>>();
    let optional = optional
        .into_iter()
        .map(|(k, s)| proptest::option::weighted(0.35, s.prop_map(move |v| (k, v))).boxed())
        .collect::<Vec<_>>();
    (required, optional)
        .prop_map(|(required, optional)| {
            let map: Map<String, Value> = required
                .into_iter()
                .chain(optional)
                .flatten()
                .map(|(k, v)| (k.to_owned(), v))
                .collect();
            Value::Object(map)
        })
        .boxed()
}

fn paths_value() -> BoxedStrategy<Value> {
    prop_oneof![
        8 => proptest::collection::vec(path_value(), 0..4).prop_map(Value::Array),
        1 => json_value(),
    ]
    .boxed()
}

pub(crate) fn edit_args() -> impl Strategy<Value = Value> {
    let ops = prop_oneof![
        8 => proptest::collection::vec(op_value(), 0..4).prop_map(Value::Array),
        1 => json_value(),
    ]
    .boxed();
    let valid = object(
        vec![("ops", ops), ("paths", paths_value())],
        vec![
            ("lang", lang_value().boxed()),
            ("selector", selector_value().boxed()),
            ("strictness", strictness_value().boxed()),
            ("limit", count_value().boxed()),
            ("max_files", count_value().boxed()),
            (
                "includeParseErrors",
                prop_oneof![Just(json!(true)), Just(json!(false)), json_value()].boxed(),
            ),
        ],
    );
    prop_oneof![
        6 => valid.clone(),
        3 => (valid, proptest::collection::vec(obj_mutation(), 1..3)).prop_map(|(v, m)| damage(v, m)),
        1 => json_value(),
    ]
}

pub(crate) fn grep_args() -> impl Strategy<Value = Value> {
    let valid = object(
        vec![
            (
                "pattern",
                prop_oneof![8 => code_string(false).prop_map(Value::String), 1 => json_value()]
                    .boxed(),
            ),
            ("paths", paths_value()),
        ],
        vec![
            ("lang", lang_value().boxed()),
            ("selector", selector_value().boxed()),
            ("strictness", strictness_value().boxed()),
            ("limit", count_value().boxed()),
        ],
    );
    prop_oneof![
        6 => valid.clone(),
        3 => (valid, proptest::collection::vec(obj_mutation(), 1..3)).prop_map(|(v, m)| damage(v, m)),
        1 => json_value(),
    ]
}

/// Well-formed arguments whose pattern and rewrite are the fuzzed part: half the time a seed
/// (mutated or not) on the file it matches in, else any pattern on files of one or several
/// languages (or the whole workspace), with the language given or inferred.
pub(crate) fn pattern_case() -> impl Strategy<Value = (String, String, Value, Option<String>)> {
    const TARGETS: &[&str] = &[
        ".",
        "src/a.ts",
        "src/a.rs",
        "a.py",
        "a.go",
        "a.html",
        "a.css",
        "a.json",
        "a.yaml",
        "M.tla",
        "Makefile",
        "a.v",
        "a.regex",
        "a.patch",
        "a.ini",
        "init.el",
        "a.ps1",
        "q.graphql",
        "a.sql",
        "BUILD",
        "a.xml",
        "a.ml",
        "a.m",
        "README.md",
        "bom.ts",
        "crlf.py",
        "nul.js",
        "latin1.rs",
        "broken.ts",
        "deep.json",
        "deep.ts",
        "many.ts",
    ];
    const LANGS: &[&str] = &["typescript", "rust", "python", "tlaplus", "make", "regex", "html"];
    let seeded = (
        0..SEEDS.len(),
        proptest::collection::vec(str_mutation(), 0..3),
        proptest::collection::vec(str_mutation(), 0..3),
    )
        .prop_map(|(seed, pat_mutations, out_mutations)| {
            let (pat, out, file) = SEEDS[seed];
            let pat = mutate(pat.to_owned(), &pat_mutations);
            let out = mutate(out.to_owned(), &out_mutations);
            (pat, out, json!([file]), None)
        });
    let any = (
        code_string(false),
        code_string(true),
        proptest::collection::vec((0..TARGETS.len()).prop_map(|i| json!(TARGETS[i])), 1..3),
        proptest::option::weighted(0.2, (0..LANGS.len()).prop_map(|i| LANGS[i].to_owned())),
    )
        .prop_map(|(pat, out, paths, lang)| (pat, out, Value::Array(paths), lang));
    prop_oneof![seeded, any]
}
