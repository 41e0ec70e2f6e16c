"""An IPython startup file for the test command's nbdev-test (tools/test.sh puts it in the profile that IPYTHONDIR
names for that command, and pyproject.toml's `exec_profile` has nbdev load the profile for each chapter): every chapter
starts with the torch thread count a fresh process has (SANTORINI_FRESH_THREADS: one, with OMP_NUM_THREADS=1 in the
test command), as in a new kernel, although its nbdev-test worker ran other chapters before it, and some of those
change it (the training loop takes every core; chapters 04, 05, 07a, 10b, 13 and 14 set one thread). Without it a chapter's float
rounding, and so what it prints, would depend on which chapter ran before it in the same worker."""
import os
import sys

if "torch" in sys.modules and "SANTORINI_FRESH_THREADS" in os.environ:
    sys.modules["torch"].set_num_threads(int(os.environ["SANTORINI_FRESH_THREADS"]))
