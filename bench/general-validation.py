#!/usr/bin/python3
"""bench/general-validation.py: the validation set on which issue 29's training designs are chosen
(never the benchmark's graphs, bench/general.sh): PER fresh draws of each training family (train
--family's draws with --family-seed VSEED, different from any training seed; graphs of at most
MAXOPS ops), each on the uniform machine of every device count of DEVS; per case the greedy
placement of checkpoint CKPT (doppler place --method doppler) over the best of round-robin, cp,
HEFT, CPOP, PEFT and ETF. Prints per family the mean ratio and the share of cases below 1, then
overall and per device count.
  DOPPLER=./doppler top_srcdir=. /usr/bin/python3 bench/general-validation.py CKPT
  FAMS=stg,cnn PER=3 VSEED=4242 DEVS="2 4 8 16" MAXOPS=1500 CR=4 (FLOP graphs on DOPPLER's rule) JOBS=2
  PARAMETERS=final: the checkpoint's final parameters instead of its model-selected ones
The searches instead of (or beside) the policy: METHODS="improve@2000 anneal@20000" with
IMPROVE=CKPT (the improvement policy) and CKPT "-" (no DOPPLER policy); each search places at
placement seed 1 with its defaults (annealing from cp, the improvement search from the best
instant placement), or with SEARCH_CONFIG=FILE (a --config for the searches, e.g.
{"restarts": 1}); a section is printed per method. A search's result is kept in the cache
folder by method, budget, checkpoint and case (annealing's does not depend on a checkpoint, so
a second run of the same budget reads it back; delete the folder after changing the binary)."""
import json, os, subprocess, sys, re, statistics, zlib, concurrent.futures as cf
BIN = os.environ.get("DOPPLER", "./doppler")
TOP = os.environ.get("top_srcdir", ".")
FAMS = os.environ.get("FAMS", "stg,layered,forkjoin,seriesparallel,workflow,cnn,rnn,transformer,moe,daggen,chainmm,ffnn,llama-block,llama-layer")
PER = int(os.environ.get("PER", "3"))
SEED = os.environ.get("VSEED", "4242")
DEVS = os.environ.get("DEVS", "2 4 8 16").split()
MAXOPS = int(os.environ.get("MAXOPS", "1500"))
CR = os.environ.get("CR", "")  # comm ratio for FLOP graphs ("" = machine default bandwidth)
# the cache folder is the draw's: keyed by everything the draw depends on (with VSEED and PER only,
# another FAMS or MAXOPS read back the graphs of the first: a review)
_draw = "%s|%d|%s|%d" % (SEED, PER, FAMS, MAXOPS)
cache = os.environ.get("CACHE", "/tmp/doppler-general-validation-%s-%d-%08x" % (SEED, PER, zlib.crc32(_draw.encode())))
def specs():
    if os.path.exists(cache + "/specs.txt"):
        return [l.split("\t") for l in open(cache + "/specs.txt").read().splitlines()]
    os.makedirs(cache, exist_ok=True)
    nf = len(FAMS.split(","))
    r = subprocess.run([BIN, "train", "--family", FAMS, "--family-count", str(nf * PER), "--family-seed", SEED, "--val-count", "0",
                        "--stage", "il", "--episodes", "1", "--checkpoint", cache + "/x.h5", "--force", "--config",
                        os.path.join(TOP, "bench/doppler-zeroshot.json")], capture_output=True, text=True, env=dict(os.environ, DOPPLER_DATA=os.path.join(os.path.abspath(TOP), "data")))
    if r.returncode:  # a failed draw was cached as an empty list: every later run had no case
        sys.exit("bench/general-validation.py: the draw (doppler train --family %s) failed:\n%s" % (FAMS, r.stderr.strip()))
    out = []
    for l in r.stderr.splitlines():
        m = re.match(r"\s+train\s+(\S+)\s+(\d+) ops.*?(gen:\S+)", l)
        if m and int(m.group(2)) <= MAXOPS:
            name, spec = m.group(1), m.group(3)
            model, q = spec[4:].split("?", 1)
            args = []
            for kv in q.split("&"):
                k, v = kv.split("=", 1); args += ["--" + k, v]
            f = "%s/%s.json" % (cache, name)
            subprocess.run([BIN, "graph", "gen", model] + args + ["--out", f], check=True, capture_output=True)
            out.append((name, f))
    if not out:
        sys.exit("bench/general-validation.py: the draw of %s gave no graph of at most %d ops%s" % (
            FAMS, MAXOPS, " (one graph is trained alone, not listed: PER x families must be 2 or more)" if nf * PER < 2 else ""))
    open(cache + "/specs.txt.tmp", "w").write("".join("%s\t%s\n" % x for x in out))
    os.replace(cache + "/specs.txt.tmp", cache + "/specs.txt")
    return out
def ms(args):
    """place's makespan; a placement that fails stops the script with its error (a None divided
    by the best instant makespan was a TypeError naming nothing)"""
    r = subprocess.run([BIN, "place"] + args + ["--json"], capture_output=True, text=True)
    if r.returncode:
        raise SystemExit("bench/general-validation.py: doppler place %s failed:\n%s" % (" ".join(args), r.stderr.strip()))
    return json.loads(r.stdout)["makespan"]
METHODS = os.environ.get("METHODS", "doppler").split()
IMPROVE = os.environ.get("IMPROVE", "")
SEARCH_CONFIG = os.environ.get("SEARCH_CONFIG", "")
PARAMETERS = os.environ.get("PARAMETERS", "selected")  # or "final": doppler place --parameters
def cached(key, fn):
    f = os.path.join(cache, "ms-" + re.sub(r"[^A-Za-z0-9_.@-]", "_", key))
    if os.path.exists(f): return float(open(f).read())
    v = fn()
    if v is not None: open(f + ".tmp", "w").write(repr(v)); os.replace(f + ".tmp", f)
    return v
def case(ck, name, f, d):
    mopt = ["--graph", f, "--devices", d] + (["--comm-ratio", CR] if CR and not re.match(r"(stg|layered|forkjoin|seriesparallel|workflow|random)", name) else [])
    tag = "%s-d%s-cr%s" % (name, d, CR)
    inst = {m: cached(m + "-" + tag, lambda m=m: ms(mopt + ["--method", m])) for m in ["round-robin", "cp", "heft", "cpop", "peft", "etf"]}
    best = min(v for v in inst.values() if v is not None)
    out = {}
    for m in METHODS:
        if m == "doppler":
            out[m] = ms(mopt + ["--method", "doppler", "--checkpoint", ck, "--parameters", PARAMETERS]) / best
        else:
            meth, budget = m.split("@")
            extra = ["--checkpoint", IMPROVE] if meth == "improve" else []
            key = "%s-%s-%s" % (m, os.path.basename(IMPROVE) + "-" + str(int(os.path.getmtime(IMPROVE))) if extra else "", tag)
            if SEARCH_CONFIG:
                extra += ["--config", SEARCH_CONFIG]
                key += "-" + os.path.basename(SEARCH_CONFIG) + "-" + str(int(os.path.getmtime(SEARCH_CONFIG)))
            out[m] = cached(key, lambda: ms(mopt + ["--method", meth, "--budget", budget, "--seed", "1"] + extra)) / best
    return name, d, out, min(inst, key=lambda k: inst[k] if inst[k] is not None else 1e300)
if __name__ == "__main__":
    ck = sys.argv[1]
    S = specs()
    rows = []
    with cf.ThreadPoolExecutor(int(os.environ.get("JOBS", "2"))) as ex:
        for r in ex.map(lambda a: case(ck, *a), [(n, f, d) for n, f in S for d in DEVS]):
            rows.append(r)
            if os.environ.get("VERBOSE"): print("%-60s %3s %s %s" % (r[0], r[1], " ".join("%s %.4f" % kv for kv in r[2].items()), r[3]))
    fam = lambda n: re.sub(r"^(llama_block|llama_layer|[a-z]+).*", r"\1", n)
    for m in METHODS:
        if len(METHODS) > 1: print("# %s" % m)
        by = {}
        for n, d, x, _ in rows: by.setdefault(fam(n), []).append(x[m])
        for k, v in sorted(by.items()):
            print("%-14s %3d  mean %.3f  below %3.0f%%" % (k, len(v), statistics.mean(v), 100 * sum(x < 1 for x in v) / len(v)))
        allv = [x[m] for _, _, x, _ in rows]
        print("%-14s %3d  mean %.3f  below %3.0f%%  (family-mean %.3f)" % ("ALL", len(allv), statistics.mean(allv), 100 * sum(x < 1 for x in allv) / len(allv),
              statistics.mean(statistics.mean(v) for v in by.values())))
        byd = {}
        for n, d, x, _ in rows: byd.setdefault(d, []).append(x[m])
        print("  per D: " + "  ".join("%s: %.3f" % (d, statistics.mean(v)) for d, v in byd.items()))
