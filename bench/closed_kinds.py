#!/usr/bin/env python3
"""Checks the grammar facts crates/ast-edit/src/prefilter.rs relies on, in the grammar of each
language with keyword needles (the tree-sitter crates the pinned ast-grep-language 0.51.1 builds
on, as Cargo.lock has them, read from cargo's registry):

- closed kinds (`closed_kind`): every rule that makes a node of that kind, aliases included,
  ends with one mandatory symbol. Then the child a pattern's last child matches is the
  candidate's last one, and the pair needle across that node's end (`mem take` in
  `std::mem::take`) is sound;
- a name after a keyword (`name_after_keyword`): wherever a node of that kind holds the
  keyword, the next member of its rule (unnamed literals aside) is a mandatory identifier, a
  single token, so `function`, one name, then `(` is sound for `function $F($$$P): $R;`;
- opening brackets (`first_token`): no grammar lexes `(`, `[` or `{` in its external scanner
  (which may make zero-width tokens) or aliases another rule as one.

Prints one line per fact and exits 1 if one does not hold.

Usage: python3 bench/closed_kinds.py   (after `cargo fetch`)
"""
import glob
import os
import json, sys
def strip(r):
    while r['type'] in ('PREC','PREC_LEFT','PREC_RIGHT','PREC_DYNAMIC','FIELD','RESERVED'):
        r = r['content']
    return r
def last_single(r):
    r = strip(r)
    if r['type'] == 'SEQ':
        return last_single(r['members'][-1])
    if r['type'] == 'CHOICE':
        if any(m['type']=='BLANK' for m in r['members']): return False
        return all(last_single(m) for m in r['members'])
    return r['type'] in ('SYMBOL','ALIAS','STRING','PATTERN','TOKEN','IMMEDIATE_TOKEN')
def aliases(node, kind, out):
    if isinstance(node, dict):
        if node.get('type')=='ALIAS' and node.get('value')==kind and node.get('named'):
            out.append(node['content'])
        for v in node.values(): aliases(v, kind, out)
    elif isinstance(node, list):
        for v in node: aliases(v, kind, out)
REGISTRY = glob.glob(os.path.expanduser('~/.cargo/registry/src/*/'))
RUST = 'tree-sitter-rust-0.24.2/src/grammar.json'
JS = 'tree-sitter-javascript-0.25.0/src/grammar.json'
TS = 'tree-sitter-typescript-0.23.2/typescript/src/grammar.json'
TSX = 'tree-sitter-typescript-0.23.2/tsx/src/grammar.json'
PY = 'tree-sitter-python-0.25.0/src/grammar.json'
GO = 'tree-sitter-go-0.25.0/src/grammar.json'
JAVA = 'tree-sitter-java-0.23.5/src/grammar.json'
TS_NAMES = [('function_declaration', 'function'), ('generator_function_declaration', 'function'),
            ('function_signature', 'function'), ('class_declaration', 'class'),
            ('abstract_class_declaration', 'class'), ('interface_declaration', 'interface'),
            ('enum_declaration', 'enum'), ('type_alias_declaration', 'type')]
# name_after_keyword in prefilter.rs, language by language.
NAMES = [
    (RUST, [('function_item', 'fn'), ('function_signature_item', 'fn'), ('struct_item', 'struct'),
            ('enum_item', 'enum'), ('union_item', 'union'), ('trait_item', 'trait'),
            ('mod_item', 'mod'), ('type_item', 'type'), ('const_item', 'const')]),
    (JS, [('function_declaration', 'function'), ('generator_function_declaration', 'function'),
          ('class_declaration', 'class')]),
    (TS, TS_NAMES),
    (TSX, TS_NAMES),
    (PY, [('function_definition', 'def'), ('class_definition', 'class')]),
    (GO, [('function_declaration', 'func')]),
    (JAVA, [('class_declaration', 'class'), ('interface_declaration', 'interface'),
            ('enum_declaration', 'enum'), ('record_declaration', 'record')]),
]
bad = 0
for path, kinds in [
  ('tree-sitter-rust-0.24.2/src/grammar.json',['scoped_identifier','scoped_type_identifier','field_expression']),
  ('tree-sitter-javascript-0.25.0/src/grammar.json',['member_expression']),
  ('tree-sitter-typescript-0.23.2/typescript/src/grammar.json',['member_expression','nested_type_identifier']),
  ('tree-sitter-typescript-0.23.2/tsx/src/grammar.json',['member_expression','nested_type_identifier']),
  ('tree-sitter-python-0.25.0/src/grammar.json',['attribute']),
  ('tree-sitter-go-0.25.0/src/grammar.json',['selector_expression','qualified_type']),
  ('tree-sitter-java-0.23.5/src/grammar.json',['field_access','scoped_identifier','scoped_type_identifier'])]:
    found = [os.path.join(r, path) for r in REGISTRY if os.path.exists(os.path.join(r, path))]
    if not found:
        print(path, 'not in the registry: run cargo fetch'); bad += 1; continue
    g=json.load(open(found[0])); rules=g['rules']
    for k in kinds:
        srcs=[]
        if k in rules: srcs.append(('rule', rules[k]))
        al=[]; aliases(rules, k, al)
        for a in al:
            a=strip(a)
            if a['type']=='SYMBOL': srcs.append(('alias of '+a['name'], rules[a['name']]))
            else: srcs.append(('alias expr', a))
        ok=all(last_single(r) for _,r in srcs)
        bad += not ok
        print(path.split('/')[0], k, 'closed' if ok else 'NOT CLOSED', f'({len(srcs)} rules)')


NAME_TOKENS = ('identifier', 'metavariable')


def name_token(rules, r, seen=()):
    """Whether r always makes one named leaf whose rule is an identifier (or Rust's `$name`)."""
    r = strip(r)
    t = r['type']
    if t == 'SYMBOL':
        n = r['name']
        if n in NAME_TOKENS:
            return True
        if n.startswith('_') and n not in seen and n in rules:
            return name_token(rules, rules[n], seen + (n,))
        return False
    if t == 'ALIAS':
        return r.get('named', False) and name_token(rules, r['content'], seen)
    if t == 'CHOICE':
        return all(m['type'] != 'BLANK' and name_token(rules, m, seen) for m in r['members'])
    return False


def literal(r):
    """An unnamed literal, or an optional one: all that may stand between keyword and name."""
    r = strip(r)
    if r['type'] == 'STRING':
        return True
    if r['type'] == 'CHOICE':
        return all(m['type'] == 'BLANK' or literal(m) for m in r['members'])
    return False


def name_after(rules, kind, kw):
    """Why a node of `kind` may hold `kw` without a name after it; [] when it may not."""
    bad, seen_kw = [], [0]

    def visit(r, seen, ctx):
        r = strip(r)
        t = r['type']
        if t == 'SEQ':
            ms = r['members']
            for i, m in enumerate(ms):
                sm = strip(m)
                if sm['type'] == 'STRING' and sm['value'] == kw:
                    seen_kw[0] += 1
                    j = i + 1
                    while j < len(ms) and literal(ms[j]):
                        j += 1
                    if not (j < len(ms) and name_token(rules, ms[j])):
                        bad.append(f'{ctx}: `{kw}` not followed by a name')
                else:
                    visit(m, seen, ctx)
        elif t == 'STRING':
            if r['value'] == kw:
                bad.append(f'{ctx}: `{kw}` outside a sequence')
        elif t == 'CHOICE':
            for m in r['members']:
                visit(m, seen, ctx)
        elif t in ('REPEAT', 'REPEAT1'):
            visit(r['content'], seen, ctx)
        elif t == 'ALIAS':
            if not r.get('named') and r['value'] == kw:
                bad.append(f'{ctx}: an alias makes `{kw}`')
            elif not r.get('named'):
                visit(r['content'], seen, ctx)
        elif t == 'SYMBOL':
            # Hidden rules' children are the node's own.
            n = r['name']
            if n.startswith('_') and n not in seen and n in rules:
                visit(rules[n], seen + (n,), ctx + ' > ' + n)

    sources = []
    if kind in rules:
        sources.append(('rule ' + kind, rules[kind]))
    al = []
    aliases(rules, kind, al)
    sources += [('alias', a) for a in al]
    for ctx, r in sources:
        visit(r, (), ctx)
    if not seen_kw[0]:
        bad.append(f'no `{kw}` in {kind}')
    return bad


def makes(node, value):
    """Whether an unnamed alias somewhere makes a token `value`."""
    if isinstance(node, dict):
        if node.get('type') == 'ALIAS' and node.get('value') == value and not node.get('named'):
            return True
        return any(makes(v, value) for v in node.values())
    if isinstance(node, list):
        return any(makes(v, value) for v in node)
    return False


for path, kinds in NAMES:
    found = [os.path.join(r, path) for r in REGISTRY if os.path.exists(os.path.join(r, path))]
    if not found:
        print(path, 'not in the registry: run cargo fetch'); bad += 1; continue
    g = json.load(open(found[0])); rules = g['rules']
    for kind, kw in kinds:
        why = name_after(rules, kind, kw)
        bad += bool(why)
        print(path.split('/')[0], kind, kw, 'name after keyword' if not why else 'NO NAME: ' + '; '.join(why[:3]))
    externals = {e.get('value', e.get('name')) for e in g.get('externals', [])}
    for opener in ('(', '[', '{'):
        odd = opener in externals or makes(rules, opener)
        bad += odd
        print(path.split('/')[0], repr(opener), 'EXTERNAL OR ALIASED' if odd else 'always its own text')
sys.exit(1 if bad else 0)
