#!/usr/bin/env bash
# Set up a development/demo environment on a fresh machine: a virtualenv with gpurent and its
# pinned dependencies, and Debian's chromium for the pages that need a browser.
# Idempotent and quiet when everything is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}

if [ ! -x "$VENV/bin/python" ]; then
  echo "setup: creating $VENV"
  "$PYTHON" -m venv "$VENV"
fi

# Reinstall only when the dependency declarations changed since the last install.
stamp="$VENV/.gpurent-installed"
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ requirements.lock -nt "$stamp" ]; then
  echo "setup: installing gpurent and pinned dependencies (requirements.lock)"
  "$VENV/bin/python" -m pip install --quiet --upgrade pip
  "$VENV/bin/python" -m pip install --quiet -c requirements.lock -e '.[all,dev]'
  touch "$stamp"
fi

# Bytecode for gpurent's own modules: an editable install under PYTHONDONTWRITEBYTECODE would
# compile them on every command (scripts/compile_bytecode.py says why).
"$VENV/bin/python" scripts/compile_bytecode.py

# Chromium: Playwright cannot download browsers here, so the system package is used; a CJK
# font so the dashboard's Chinese labels render in it (and in its screenshots).
if [ "${GPURENT_SKIP_CHROMIUM:-0}" != "1" ] && { ! command -v chromium >/dev/null 2>&1 || ! fc-list 2>/dev/null | grep -qi "wenquanyi\|noto sans cjk"; }; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing Debian's chromium and a CJK font"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-wqy-microhei >/dev/null
  else
    echo "setup: chromium not found; install it (e.g. 'sudo apt-get install chromium') for browser pages and tests" >&2
  fi
fi
