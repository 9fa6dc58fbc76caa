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

const oauth = "OAuth 2.1 in McpClientSdk (issue 23 item 4, the client side)"

export const client: Expected = {
  notApplicable: {},
  notYet: {
    "elicitation-sep1034-client-defaults": "an elicitation service for the client (issue 23 item 4)",
    "auth/metadata-default": oauth,
    "auth/metadata-var1": oauth,
    "auth/metadata-var2": oauth,
    "auth/metadata-var3": oauth,
    "auth/basic-cimd": oauth,
    "auth/scope-from-www-authenticate": oauth,
    "auth/scope-from-scopes-supported": oauth,
    "auth/scope-omitted-when-undefined": oauth,
    "auth/scope-step-up": oauth,
    "auth/scope-retry-limit": oauth,
    "auth/token-endpoint-auth-basic": oauth,
    "auth/token-endpoint-auth-post": oauth,
    "auth/token-endpoint-auth-none": oauth,
    "auth/pre-registration": oauth,
    "auth/2025-03-26-oauth-metadata-backcompat": oauth,
    "auth/2025-03-26-oauth-endpoint-fallback": oauth,
    "auth/offline-access-scope": oauth,
    "auth/offline-access-not-supported": oauth,
    "auth/client-credentials-jwt": oauth,
    "auth/client-credentials-basic": oauth,
    "auth/cross-app-access-complete-flow": oauth
  }
}
