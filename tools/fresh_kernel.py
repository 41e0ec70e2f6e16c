"""An IPython startup file for the test command's nbdev-test (tools/test.sh puts it in the profile that IPYTHONDIR
names for that command, and pyproject.toml's `exec_profile` has nbdev load the profile for each chapter): every chapter
starts with a fresh process's torch thread count, as in a learner's new kernel, though an nbdev-test worker process
ran other chapters before it (chapters 04 and 13 set one thread, and so does a network evaluator built in a chapter's
own process). Without it a chapter's float rounding, and so what it prints, would depend on which chapter ran before
it in the same worker, and tools/check_outputs.py could not compare it with what the notebook stores."""
import os
import sys

if "torch" in sys.modules and "SANTORINI_FRESH_THREADS" in os.environ:
    sys.modules["torch"].set_num_threads(int(os.environ["SANTORINI_FRESH_THREADS"]))
