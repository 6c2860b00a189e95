#!/usr/bin/env python3
# cpuareas.py: where a CPU profile's time goes, by area, in µs per request.
#
#   python3 bench/lib/cpuareas.py BINARY PROFILE REQUESTS
#
# Reads `go tool pprof -traces` and gives each sample to one area: first
# the areas that own a whole stack (GC background work, the in-process
# benchmark client, the background WAL checkpointer), then, walking the
# stack from its leaf, the first frame that names an area (the SQLite
# engine, database/sql and the driver's Go side, pactum's store code, the
# A2A wire codec, the task core, the rest of a2aserver, internal/…,
# net/http). Runtime frames (malloc, GC assists) count for the area that
# called them; "of which malloc/assist" is every sample with an
# allocation frame, whatever its area. docs/benchmarks.md, issue 31.
import sys, re, subprocess, collections
binf, prof, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
out = subprocess.run(["go","tool","pprof","-traces",binf,prof],capture_output=True,text=True).stdout
blocks = out.split("-----------+-------------------------------------------------------")[1:]
def ms(s):
    s=s.strip()
    if s.endswith("ms"): return float(s[:-2])/1000
    if s.endswith("us"): return float(s[:-2])/1e6
    if s.endswith("s"): return float(s[:-1])
    return 0
# rules: (area, regex on any frame), first match in order wins; frames leaf-first
rules = [
 ("GC background", r"runtime\.gcBgMarkWorker|runtime\.bgsweep|runtime\.bgscavenge"),
 ("bench client", r"node_test\.|net/http\.\(\*persistConn\)|net/http\.\(\*Transport\)|net/http\.\(\*Client\)"),
 ("sqlite checkpoints (bg)", r"sqlite\.\(\*Store\)\.checkpoints"),
 ("audit seal (Go side)", r"sqlite\.\(\*txn\)\.seal|sqlite\.\(\*txn\)\.moveHead"),
 ("SQLite engine (modernc lib + libc)", r"modernc\.org/sqlite/lib|modernc\.org/libc"),
 ("database/sql + driver Go side", r"^database/sql|^modernc\.org/sqlite\."),
 ("store Go code", r"pactum/store/"),
 ("wire decode/encode", r"a2aserver/internal/wire|a2aserver\.decodeParams|a2aserver\.encodeHeld|a2a\.StreamResponse\.MarshalJSON|a2amap"),
 ("task core", r"pactum/task\."),
 ("a2aserver other", r"pactum/a2aserver|a2aproject"),
 ("internal/... (httpguard, a2amap)", r"pactum/internal"),
 ("net/http server", r"net/http|net/textproto|bufio|internal/poll|^net\."),
]
acc = collections.Counter(); tot=0
examples=collections.defaultdict(collections.Counter)
for b in blocks:
    lines=[l for l in b.strip("\n").split("\n") if l.strip()]
    if not lines: continue
    m=re.match(r"\s*([0-9.]+[mu]?s)\s+(.*)",lines[0])
    if not m: continue
    v=ms(m.group(1)); frames=[m.group(2).strip()]+[l.strip() for l in lines[1:]]
    frames=[re.sub(r"\s*\(inline\)$","",f) for f in frames]
    tot+=v
    # malloc/GC assist attribution: note separately
    area="other/runtime"
    # outermost-to-innermost? use innermost-first priority by rule order across whole stack
    done=False
    for name,rx in rules[:3]:
        if any(re.search(rx,f) for f in frames):
            area=name;done=True;break
    if not done:
      for f in frames:
        for name,rx in rules[3:]:
            if re.search(rx,f):
                area=name;done=True;break
        if done: break
    mal = any(re.search(r"runtime\.mallocgc|runtime\.gcAssist|runtime\.growslice|runtime\.newobject",f) for f in frames)
    acc[area]+=v
    if mal: acc["  (of which malloc/assist)"]+=v
print("total %.1f us/req"%(tot*1e6/n))
for k,v in sorted(acc.items(), key=lambda x:-x[1]):
    print("%-40s %7.1f us/req %5.1f%%"%(k, v*1e6/n, 100*v/tot))
