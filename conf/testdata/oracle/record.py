#!/usr/bin/env python3
# record.py KIND NAME OUTDIR DEST   (KIND = config|broken|accepted)
import sys, os, re
kind, name, out, dest = sys.argv[1:5]
def rd(f):
    p = os.path.join(out, f)
    return open(p, errors="replace").read() if os.path.exists(p) else ""
cmd, res, err = rd("cmd"), rd("result"), rd("stderr.txt")
noise = re.compile(r"getaddr|state file|NOTE: Trying|pmix|MPI: Cannot|Couldn't load specified plugin name for mpi")
lines = err.splitlines()
fat = [l for l in lines if "fatal:" in l]
errs = [l for l in lines if "error:" in l and not noise.search(l)]
first = ""
if fat:
    first = fat[0]
    generic = re.search(r"Unable to process configuration file|error opening/reading", first)
    if generic and errs: first = errs[0]
elif errs: first = errs[0]
logs = [f for f in os.listdir(out) if f.endswith(".log")]
with open(dest, "w") as o:
    if kind == "broken":
        o.write((first or "(no error printed)") + "\n\n")
    o.write(f"oracle: real Slurm 22.05.8 (Debian), run via conf/testdata/README.md harness\ncommand: {cmd.splitlines()[0] if cmd else ''}\n{cmd.splitlines()[1] if cmd.count(chr(10))>1 else ''}\nresult: {res.splitlines()[0] if res else ''}\n")
    if kind != "broken":
        ok = "Running as primary controller" in err or "slurmd started on" in err or res.startswith("exited rc=0")
        o.write("verdict: " + ("ACCEPTED" if ok else "REJECTED") + "\n")
    else:
        o.write("verdict: " + ("REJECTED (fatal)" if fat else "no fatal") + "\n")
    o.write("\n--- fatal/error/warning lines (noise about missing state files, PMIx, name resolution filtered) ---\n")
    for l in lines:
        if re.search(r"fatal|error|Warning|WARNING", l) and not noise.search(l): o.write(l + "\n")
    o.write("\n--- complete stderr of the daemon (-D, default verbosity) ---\n" + err)
    for f in logs:
        o.write(f"\n--- log file {f[:-4]} ---\n" + rd(f))
