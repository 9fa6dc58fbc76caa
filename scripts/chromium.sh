#!/usr/bin/env bash
# Installs Debian's chromium for the browser tests when /usr/bin/chromium is missing.
# playwright-core drives it (`npx playwright install` cannot download browsers here).
# Needs root (CI machines run as root); does nothing when chromium is already there.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "chromium is missing and installing it needs root: apt-get install -y chromium" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends chromium >/dev/null
/usr/bin/chromium --version
