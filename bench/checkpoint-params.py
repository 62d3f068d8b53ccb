#!/usr/bin/python3
"""bench/checkpoint-params.py: a copy of a DOPPLER training checkpoint with the dynamic SEL's
per-step terms off (dyn.w2 = 0 in its model-selected parameters, /sel/best, what `doppler place
--checkpoint` uses: the trained static SEL alone; network.sel_dynamic checkpoints only), so that
the validation set (bench/general-validation.py) can score it. (A run's final parameters need no
copy: `doppler place --parameters final`, PARAMETERS=final for bench/general-validation.py.)
  /usr/bin/python3 bench/checkpoint-params.py no-dyn RUN.h5 RUN-nodyn.h5
Needs h5py; the datasets keep their filters (Fletcher32 checksums are rewritten)."""
import shutil, sys
import h5py
if len(sys.argv) != 4 or sys.argv[1] != "no-dyn":
    sys.exit(__doc__)
mode, src, dst = sys.argv[1:]
# checked before the copy: a refusal left DST as an unchanged copy that a later validation run
# would score as "dynamic terms off" (a review)
with h5py.File(src, "r") as f:
    if "sel/best/dyn.w2" not in f:
        sys.exit("%s: no dynamic SEL (network.sel_dynamic) in this checkpoint" % src)
shutil.copyfile(src, dst)
with h5py.File(dst, "r+") as f:
    f["sel/best/dyn.w2"][...] = 0
