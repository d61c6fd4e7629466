#!/usr/bin/env sh
# Runs tests/python with a Python that has exactly the packages pinned in
# requirements.txt: the python3 on PATH when it has them, otherwise a virtual
# environment under BUILD/pyenv (the first argument, default build), made once
# from wheels only (no package's build scripts run). `make test` calls this,
# so the README's test command works on a machine that has only python3.
set -eu
build=${1:-build}
req=tests/python/requirements.txt
pinned='
import re, sys
from importlib.metadata import version, PackageNotFoundError
for line in open(sys.argv[1]):
    m = re.match(r"\s*([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?==(\S+)", line)
    if not m:
        continue
    try:
        if version(m.group(1)) != m.group(2):
            sys.exit(1)
    except PackageNotFoundError:
        sys.exit(1)
'
if python3 -c "$pinned" "$req" 2>/dev/null; then
  py=python3
else
  env="$build/pyenv"
  if [ ! -x "$env/bin/python3" ] || [ "$req" -nt "$env/.installed" ]; then
    echo "tests/python: installing the wheels of $req into $env (once)"
    python3 -m venv "$env" || {
      echo "tests/python: python3 cannot make a virtual environment: install python3-venv (Debian: apt-get install python3-venv), or run: python3 -m pip install --only-binary=:all: -r $req" >&2
      exit 1
    }
    "$env/bin/python3" -m pip install -q --disable-pip-version-check --only-binary=:all: -r "$req" || {
      echo "tests/python: pip could not install the wheels of $req into $env (no network, or no wheel for this Python: $(python3 --version 2>&1))" >&2
      exit 1
    }
    touch "$env/.installed"
  fi
  py="$env/bin/python3"
fi
# Spark (test_spark.py) only with `make test-spark`: pyspark is not a wheel.
exec "$py" -m pytest -q tests/python --ignore=tests/python/test_spark.py "$@"
