// Runs before `npm start` and `npm test` (plain JavaScript, so any Node can run it): Rolecraft's code is
// TypeScript run by Node's type stripping, which older Nodes do not have. Say so plainly instead of letting
// Node fail with ERR_UNKNOWN_FILE_EXTENSION.
const [major, minor] = process.versions.node.split(".").map(Number)
if (major < 22 || (major === 22 && minor < 19)) {
  console.error(
    [
      `Rolecraft needs Node.js 24 (any Node >= 22.19); this is Node ${process.versions.node}.`,
      "Install Node 24, or provision it under .tools/ (Linux x64 or arm64, no root needed) and put it on PATH:",
      "",
      '  eval "$(bash scripts/node24.sh)"',
      "",
      "then run the command again."
    ].join("\n")
  )
  process.exit(1)
}
