#!/usr/bin/env python3
# Runs INSIDE a private pid/mount/uts namespace (see oracle.sh).
# usage: inner.py MODE CONF OUTDIR [NODE]
#   MODE = ctld   : slurmctld -D -f CONF, wait until "Running as primary controller" or exit
#          slurmd : slurmd -D -N NODE -f CONF, wait until "slurmd started" or exit
#          gres   : slurmd -G -N NODE -f CONF  (prints GRES config and exits)
import os, re, sys, glob, subprocess, time, shutil
mode, conf, out = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
node = sys.argv[4] if len(sys.argv) > 4 else None
os.makedirs(out, exist_ok=True)
def sh(c): subprocess.run(c, shell=True, check=False)
sh("mount --make-rprivate /")
for d in ("/run", "/var/spool", "/var/log", "/tmp"):
    sh(f"mount -t tmpfs tmpfs {d}")
sh("ip link set lo up")
if os.environ.get("ORACLE_FAKE_DEV"):
    # private /dev: re-expose the real entries, then add fake device files (e.g. /dev/nvidia0)
    sh("mkdir -p /run/olddev && mount --rbind /dev /run/olddev && mount -t tmpfs tmpfs /dev")
    for e in os.listdir("/run/olddev"):
        src, dst = "/run/olddev/" + e, "/dev/" + e
        if os.path.islink(src): os.symlink(os.readlink(src), dst); continue
        if os.path.isdir(src): os.makedirs(dst, exist_ok=True)
        else: open(dst, "w").close()
        sh(f"mount --rbind {src} {dst}")
    for f in os.environ["ORACLE_FAKE_DEV"].split(","):
        open(f, "w").close(); sh(f"mount --bind /run/olddev/null {f}")  # a char device

def expand(hl):
    # minimal hostlist expander: a[1-3,5]b[01-02] and comma lists
    res, depth, cur = [], 0, ""
    parts = []
    for ch in hl:
        if ch == "[": depth += 1
        if ch == "]": depth -= 1
        if ch == "," and depth == 0: parts.append(cur); cur = ""
        else: cur += ch
    parts.append(cur)
    for p in parts:
        m = re.search(r"\[([^\]]*)\]", p)
        if not m: res.append(p); continue
        pre, post = p[:m.start()], p[m.end():]
        for r in m.group(1).split(","):
            if "-" in r:
                a, b = r.split("-", 1)
                try:
                    for i in range(int(a), int(b) + 1):
                        res += expand(pre + str(i).zfill(len(a)) + post)
                except ValueError: res.append(p)
            else: res += expand(pre + r + post)
    return res

text = ""
cdir = os.path.dirname(conf)
for f in [conf] + sorted(glob.glob(os.path.join(cdir, "**", "*"), recursive=True)):
    if os.path.isfile(f):
        try: text += open(f, errors="replace").read() + "\n"
        except Exception: pass
names = set(["localhost"])
for k, v in re.findall(r"(?i)\b(NodeName|NodeHostname|NodeAddr|SlurmctldHost|ControlMachine|BackupController|ControlAddr|BackupAddr|FrontendName|FrontendAddr|SlurmctldAddr)\s*=\s*(\"[^\"]*\"|\S+)", text):
    v = v.strip('"')
    for part in re.split(r"[()]", v):
        for h in expand(part):
            if h and not re.match(r"^[\d.]+$", h) and h.upper() != "DEFAULT": names.add(h)
with open("/run/hosts", "w") as h:
    h.write("127.0.0.1 " + " ".join(sorted(names)[:1]) + "\n")
    for n in sorted(names): h.write(f"127.0.0.1 {n}\n")
sh("mount --bind /run/hosts /etc/hosts"); shutil.copy("/etc/hosts", os.path.join(out, "hosts"))
ctl = None
for k, v in re.findall(r"(?im)^\s*(SlurmctldHost|ControlMachine)\s*=\s*(\"[^\"]*\"|\S+)", text):
    ctl = v.strip('"').split("(")[0]; break
if ctl: sh(f"hostname {ctl}")
for k, v in re.findall(r"(?im)\b(StateSaveLocation|SlurmdSpoolDir|SlurmctldLogFile|SlurmdLogFile|SlurmctldPidFile|SlurmdPidFile|SlurmSchedLogFile)\s*=\s*(\S+)", text):
    v = v.replace("%n", node or "x").replace("%h", ctl or "x")
    d = v if k.lower() in ("statesavelocation", "slurmdspooldir") else os.path.dirname(v)
    if d.startswith(("/run", "/var/spool", "/var/log", "/tmp/")): os.makedirs(d, exist_ok=True)
su = re.findall(r"(?im)^\s*SlurmUser\s*=\s*(\S+)", text)
if su and su[-1] != "root":
    for d in ("/var/spool", "/var/log", "/run"):
        sh(f"chown -R {su[-1]} {d}/* 2>/dev/null")
# private munged
os.makedirs("/run/munge", exist_ok=True)
shutil.copy(os.environ.get("ORACLE_MUNGE_KEY", "/work/shared/captures/munge.key"), "/run/munge/key"); os.chmod("/run/munge/key", 0o600)
ai = re.findall(r"(?im)^\s*AuthInfo\s*=.*socket=([^,\s]+)", text)
if ai:
    os.makedirs(os.path.dirname(ai[-1]), exist_ok=True)
    sh(f"munged -f -S {ai[-1]} --key-file=/run/munge/key --log-file=/run/munge/log2 --seed-file=/run/munge/seed2 --pid-file=/run/munge/pid2")
sh("munged -f --key-file=/run/munge/key --log-file=/run/munge/log --seed-file=/run/munge/seed --pid-file=/run/munge/pid")

if mode == "ctld":
    cmd = ["/usr/sbin/slurmctld", "-D", "-f", conf]; done = r"Running as primary controller|Running as backup|fatal"
elif mode == "slurmd":
    cmd = ["/usr/sbin/slurmd", "-D", "-N", node, "-f", conf]; done = r"slurmd started on|fatal"
else:
    cmd = ["/usr/sbin/slurmd", "-G", "-N", node, "-f", conf]; done = None
limit = float(os.environ.get("ORACLE_TIMEOUT", "60"))
with open(os.path.join(out, "cmd"), "w") as f: f.write(" ".join(cmd) + f"\n# hostname={ctl} node={node}\n")
ef = open(os.path.join(out, "stderr.txt"), "w")
t0 = time.time()
p = subprocess.Popen(cmd, stdout=ef, stderr=subprocess.STDOUT)
state = "timeout"
while time.time() - t0 < limit:
    rc = p.poll()
    if rc is not None: state = f"exited rc={rc}"; break
    if done:
        s = open(os.path.join(out, "stderr.txt"), errors="replace").read()
        if re.search(done, s):
            time.sleep(1.5); state = "reached: " + re.search(done, s).group(0)
            if mode == "ctld" and "primary" in state:
                env = dict(os.environ, SLURM_CONF=conf)
                def cap(fn, args):
                    r = subprocess.run(args, env=env, capture_output=True, text=True, timeout=60)
                    open(os.path.join(out, fn), "w").write(r.stdout + r.stderr)
                    return r.stdout
                cap("scontrol-show-config.txt", ["scontrol", "show", "config"])
                cap("scontrol-show-partition.txt", ["scontrol", "show", "partition"])
                cap("sinfo-summary.txt", ["sinfo", "-a", "-o", "%R|%D|%N|%c|%z|%m|%d|%w|%f|%G|%l|%L|%a|%T"])
                if len(names) < 400:
                    cap("scontrol-show-node.txt", ["scontrol", "show", "node"])
            break
    time.sleep(0.2)
if p.poll() is None:
    p.terminate()
    try: p.wait(5)
    except Exception: p.kill(); p.wait()
    state += " (then killed by harness)"
else:
    state = f"exited rc={p.returncode}" if not state.startswith("exited") else state
ef.close()
with open(os.path.join(out, "result"), "w") as f: f.write(f"{state}\nelapsed={time.time()-t0:.1f}s\n")
for k, v in re.findall(r"(?im)^\s*(SlurmctldLogFile|SlurmdLogFile)\s*=\s*(\S+)", text):
    v = v.replace("%n", node or "x").replace("%h", ctl or "x")
    if os.path.exists(v): shutil.copy(v, os.path.join(out, os.path.basename(v) + ".log"))
