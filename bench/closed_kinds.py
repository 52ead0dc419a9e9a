#!/usr/bin/env python3
"""Checks the node kinds that crates/ast-edit/src/prefilter.rs calls closed: in the grammar of
each language (the tree-sitter crates the pinned ast-grep-language 0.51.1 builds on, as
Cargo.lock has them, read from cargo's registry), every rule that makes a node of that kind,
aliases included, ends with one mandatory symbol. Then the child a pattern's last child matches
is the candidate's last one, and the pair needle across that node's end (`mem take` in
`std::mem::take`) is sound. Prints one line per kind and exits 1 if one is not closed.

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
sys.exit(1 if bad else 0)
