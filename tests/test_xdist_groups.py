"""tools/test.sh spreads the suite over the cores with pytest-xdist's `--dist loadgroup`, and relies on it to keep
each `xdist_group` on one worker: the pip-only venv and the docs site are built once, by the worker that runs their
group. With a pytest that pytest-xdist cannot group with (pytest 9.2: pytest-dev/pytest-xdist#1386) the groups are
silently spread over the workers, and the suite takes a minute or more longer (the second worker waits on the
first's lock). This runs two small grouped modules in a pytest-xdist session of two workers and checks the groups."""
import re
import subprocess
import sys

GROUPED = '''
import pytest
pytestmark = pytest.mark.xdist_group("{group}")
@pytest.mark.parametrize("i", range(6))
def test_where(i): pass
'''


def test_loadgroup_keeps_each_group_on_one_worker(tmp_path):
    for group in ("one", "two"):
        (tmp_path / f"test_{group}.py").write_text(GROUPED.format(group=group))
    done = subprocess.run([sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadgroup", "-p", "no:cacheprovider",
                           "-v", "--rootdir", str(tmp_path), str(tmp_path)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    workers = {group: set(re.findall(rf"\[(gw\d+)\].* PASSED test_{group}\.py", done.stdout)) for group in ("one", "two")}
    assert all(workers.values()), done.stdout
    assert all(len(w) == 1 for w in workers.values()), (
        f"pytest-xdist spread a group over several workers ({workers}): loadgroup does not group with this pytest "
        "(pytest-dev/pytest-xdist#1386); install what pyproject.toml's dev extra pins (bash tools/setup.sh)")
