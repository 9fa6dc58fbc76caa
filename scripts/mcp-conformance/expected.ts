// What `npm run check:mcp` expects of each scenario of @modelcontextprotocol/conformance that does not pass.
//
// - `notApplicable`: scenarios Rolecraft does not aim to pass, with the reason docs/mcp.md prints. A failure here
//   does not fail the check.
// - `notYet`: scenarios Rolecraft aims to pass but does not yet, with what is missing. A failure here does not fail
//   the check, but a pass does ("now passes: take it off notYet"), so the list only shrinks.
//
// Every other scenario must pass. Keys are the suite's scenario names (`list` prints them).

export interface Expected {
  readonly notApplicable: Readonly<Record<string, string>>
  readonly notYet: Readonly<Record<string, string>>
}

export const server: Expected = {
  notApplicable: {},
  notYet: {}
}

export const client: Expected = {
  notApplicable: {},
  notYet: {}
}
