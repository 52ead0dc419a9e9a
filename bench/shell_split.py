#!/usr/bin/env python3
"""What each staged process of one hooked shell call costs (issue 35): the PreToolUse hook, the
wrapper (`staged shell-run` and the command), the PostToolUse hook, against one
`git status --porcelain` and the command alone; medians of interleaved runs, in ms.

Usage: python3 bench/shell_split.py STAGED ROOT FILES RUNS [record|gate]

ROOT is a committed git tree (bench/shell.py makes one); the command appends a line to FILES
files spread over it. The tree keeps the appended lines (restore it with `git checkout .`).
"""
import json, os, subprocess, sys, time, statistics, shutil
S=os.path.abspath(sys.argv[1]); root=sys.argv[2]; k=int(sys.argv[3]); runs=int(sys.argv[4])
files=[]
for dp,ds,ns in os.walk(root):
    ds[:]=[d for d in ds if d not in ('.git','.staged')]
    files+= [os.path.relpath(os.path.join(dp,n),root) for n in ns]
files.sort(); step=max(1,len(files)//k); t=files[::step][:k]
cmd="for f in "+" ".join(f"'{p}'" for p in t)+"; do echo bench >> \"$f\"; done"
ev=json.dumps({'hook_event_name':'PreToolUse','session_id':'s-%d'%k,'cwd':root,'permission_mode':'acceptEdits','tool_name':'Bash','tool_input':{'command':cmd},'tool_use_id':'c'}).encode()
post=json.dumps({'hook_event_name':'PostToolUse','session_id':'s-%d'%k,'cwd':root,'tool_name':'Bash','tool_input':{'command':cmd},'tool_response':{},'tool_use_id':'c'}).encode()
def t_(argv,inp=None):
    s=time.perf_counter(); r=subprocess.run(argv,cwd=root,input=inp,capture_output=True); e=time.perf_counter()-s
    assert r.returncode==0,(argv[:3],r.stderr)
    return e,r.stdout
R={'git':[],'alone':[],'pre':[],'wrap':[],'post':[]}
for i in range(runs):
    R['git'].append(t_(['git','status','--porcelain'])[0])
    R['alone'].append(t_(['sh','-c',cmd])[0])
    e,o=t_([S,'hook','claude-code','--mode',sys.argv[5] if len(sys.argv)>5 else 'record'],ev); R['pre'].append(e)
    w=json.loads(o)['hookSpecificOutput']['updatedInput']['command']
    R['wrap'].append(t_(['sh','-c',w])[0])
    R['post'].append(t_([S,'hook','claude-code','--mode','record'],post)[0])
print({k:round(statistics.median(v)*1000,1) for k,v in R.items()}, 'added ms', round((statistics.median(R['pre'])+statistics.median(R['wrap'])+statistics.median(R['post'])-statistics.median(R['alone']))*1000,1))
