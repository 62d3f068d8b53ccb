#!/usr/bin/python3
"""bench/checkpoint-params.py: a copy of a DOPPLER training checkpoint whose model-selected
parameters (what `doppler place --checkpoint` uses: /sel/best, /plc/best) are replaced, so that
the validation set (bench/general-validation.py) can score other parameters of the same run:
  final   the run's final parameters (/sel/param, /plc/param)
  no-dyn  the model-selected ones with the dynamic SEL's terms off (dyn.w2 = 0: the trained
          static SEL alone; network.sel_dynamic checkpoints only)
  /usr/bin/python3 bench/checkpoint-params.py final RUN.h5 RUN-final.h5
Needs h5py; the datasets keep their filters (Fletcher32 checksums are rewritten)."""
import shutil, sys
import h5py
if len(sys.argv) != 4 or sys.argv[1] not in ("final", "no-dyn"):
    sys.exit(__doc__)
mode, src, dst = sys.argv[1:]
shutil.copyfile(src, dst)
with h5py.File(dst, "r+") as f:
    if mode == "final":
        for b in ("sel", "plc"):
            for k in f[b + "/param"]:
                f[b + "/best/" + k][...] = f[b + "/param/" + k][...]
    else:
        if "sel/best/dyn.w2" not in f:
            sys.exit("%s: no dynamic SEL (network.sel_dynamic) in this checkpoint" % src)
        f["sel/best/dyn.w2"][...] = 0
