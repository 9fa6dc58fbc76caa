/**
 * A local MCP server that needs OAuth, and the authorization server that
 * grants it, both on 127.0.0.1 (one port), built from the MCP SDK's own
 * server-side auth helpers: `mcpAuthRouter` (authorization server metadata,
 * `/authorize`, `/token`, `/register`, and the protected resource's metadata)
 * and `requireBearerAuth` in front of the MCP endpoint, on Express (a
 * dependency of the SDK). The authorization server is an in-memory
 * `OAuthServerProvider` that approves every request at once (no login page),
 * issues short random tokens with a refresh token, and counts what it did.
 *
 * `expireTokens()` makes every access token issued so far expire, so the next
 * request is refused and the client must refresh. Refresh tokens rotate: each
 * is good once, and a refresh token used again revokes its whole family (every
 * token descended from the same authorization), as authorization servers that
 * detect reuse do. `breakTokenEndpoint("network" | "503")` makes the token
 * endpoint drop the connection or answer 503 until called with `undefined`;
 * `refuseAll(true)` refuses every access token, however fresh.
 */
import { randomBytes } from "node:crypto"
import { createRequire } from "node:module"
import type { IncomingMessage, ServerResponse } from "node:http"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import type { OAuthRegisteredClientsStore } from "@modelcontextprotocol/sdk/server/auth/clients.js"
import { InvalidGrantError, InvalidTokenError } from "@modelcontextprotocol/sdk/server/auth/errors.js"
import { requireBearerAuth } from "@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js"
import type { AuthorizationParams, OAuthServerProvider } from "@modelcontextprotocol/sdk/server/auth/provider.js"
import { getOAuthProtectedResourceMetadataUrl, mcpAuthRouter } from "@modelcontextprotocol/sdk/server/auth/router.js"
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js"
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import type { OAuthClientInformationFull, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js"
import { z } from "zod/v4"

// The part of Express used here (the package ships no types of its own).
type Handler = (request: IncomingMessage, response: ServerResponse, next: (error?: unknown) => void) => void
interface App {
  (request: IncomingMessage, response: ServerResponse): void
  use(handler: unknown): void
  post(path: string, ...handlers: ReadonlyArray<unknown>): void
}
type Express = (() => App) & { readonly json: () => Handler }

/** The two servers, and what the authorization server did. */
export interface OAuthServers {
  /** The MCP endpoint, `http://127.0.0.1:<port>/mcp`. */
  readonly mcpUrl: string
  readonly registrations: () => number
  readonly authorizations: () => number
  readonly tokensIssued: () => number
  readonly refreshes: () => number
  /** The resource indicators the token requests named. */
  readonly resources: ReadonlyArray<string>
  /** Every access and refresh token issued. */
  readonly issued: ReadonlyArray<string>
  /** Families revoked because a refresh token was used twice. */
  readonly revocations: () => number
  /** The refresh token the authorization server would accept now (the newest of the live family), if any. */
  readonly currentRefreshToken: () => string | undefined
  readonly expireTokens: () => void
  readonly breakTokenEndpoint: (mode: "network" | "503" | undefined) => void
  readonly refuseAll: (refuse: boolean) => void
  readonly close: () => Promise<void>
}

const token = () => randomBytes(18).toString("base64url")

/** Starts both servers on 127.0.0.1 (a free port). */
export const startOAuthServers = async (): Promise<OAuthServers> => {
  const express = createRequire(import.meta.url)("express") as Express
  const clients = new Map<string, OAuthClientInformationFull>()
  const codes = new Map<string, { readonly clientId: string; readonly params: AuthorizationParams }>()
  const access = new Map<
    string,
    { clientId: string; scopes: Array<string>; expired: boolean; family: string; resource?: URL }
  >()
  const refresh = new Map<
    string,
    { readonly clientId: string; readonly scopes: Array<string>; readonly family: string }
  >()
  // Refresh tokens already spent, by family: a second use revokes the family.
  const spent = new Map<string, string>()
  let broken: "network" | "503" | undefined
  let refusing = false
  let latest: string | undefined
  const issued: Array<string> = []
  const resources: Array<string> = []
  let counts = { registrations: 0, authorizations: 0, tokensIssued: 0, refreshes: 0, revocations: 0 }

  const tokensFor = (
    clientId: string,
    scopes: Array<string>,
    resource: URL | undefined,
    family: string = token()
  ): OAuthTokens => {
    const accessToken = token()
    const refreshToken = token()
    access.set(accessToken, {
      clientId,
      scopes,
      expired: false,
      family,
      ...(resource === undefined ? {} : { resource })
    })
    refresh.set(refreshToken, { clientId, scopes, family })
    latest = refreshToken
    issued.push(accessToken, refreshToken)
    counts = { ...counts, tokensIssued: counts.tokensIssued + 1 }
    return {
      access_token: accessToken,
      token_type: "Bearer",
      expires_in: 3600,
      refresh_token: refreshToken,
      ...(scopes.length === 0 ? {} : { scope: scopes.join(" ") })
    }
  }

  const clientsStore: OAuthRegisteredClientsStore = {
    getClient: (clientId) => clients.get(clientId),
    registerClient: (metadata) => {
      const client: OAuthClientInformationFull = {
        ...metadata,
        client_id: token(),
        client_id_issued_at: Math.floor(Date.now() / 1000)
      }
      clients.set(client.client_id, client)
      counts = { ...counts, registrations: counts.registrations + 1 }
      return client
    }
  }

  const provider: OAuthServerProvider = {
    clientsStore,
    // Approves at once: back to the client's redirect URI with a code and the client's state.
    authorize: async (client, params, response) => {
      const code = token()
      codes.set(code, { clientId: client.client_id, params })
      counts = { ...counts, authorizations: counts.authorizations + 1 }
      const target = new URL(params.redirectUri)
      target.searchParams.set("code", code)
      if (params.state !== undefined) target.searchParams.set("state", params.state)
      response.redirect(302, target.href)
    },
    challengeForAuthorizationCode: async (_client, code) => {
      const entry = codes.get(code)
      if (entry === undefined) throw new InvalidGrantError("unknown authorization code")
      return entry.params.codeChallenge
    },
    exchangeAuthorizationCode: async (client, code, _verifier, _redirectUri, resource) => {
      const entry = codes.get(code)
      if (entry === undefined || entry.clientId !== client.client_id) {
        throw new InvalidGrantError("unknown authorization code")
      }
      codes.delete(code)
      if (resource !== undefined) resources.push(resource.href)
      return tokensFor(client.client_id, entry.params.scopes ?? [], resource)
    },
    exchangeRefreshToken: async (client, refreshToken, _scopes, resource) => {
      const reused = spent.get(refreshToken)
      if (reused !== undefined) {
        // Reuse: whoever holds this family's tokens may be an attacker; revoke all of them.
        for (const [key, entry] of access) if (entry.family === reused) access.delete(key)
        for (const [key, entry] of refresh) if (entry.family === reused) refresh.delete(key)
        if (latest !== undefined && !refresh.has(latest)) latest = undefined
        counts = { ...counts, revocations: counts.revocations + 1 }
        throw new InvalidGrantError("the refresh token was already used; its family is revoked")
      }
      const entry = refresh.get(refreshToken)
      if (entry === undefined || entry.clientId !== client.client_id)
        throw new InvalidGrantError("unknown refresh token")
      refresh.delete(refreshToken)
      spent.set(refreshToken, entry.family)
      counts = { ...counts, refreshes: counts.refreshes + 1 }
      return tokensFor(client.client_id, entry.scopes, resource, entry.family)
    },
    verifyAccessToken: async (accessToken): Promise<AuthInfo> => {
      const entry = access.get(accessToken)
      if (entry === undefined || entry.expired || refusing)
        throw new InvalidTokenError("the access token is unknown or expired")
      return {
        token: accessToken,
        clientId: entry.clientId,
        scopes: entry.scopes,
        expiresAt: Math.floor(Date.now() / 1000) + 3600
      }
    }
  }

  const mcp = () => {
    const server = new McpServer({ name: "notes", version: "1.0.0" })
    server.registerTool(
      "search_notes",
      { description: "Search the team's notes", inputSchema: { query: z.string() } },
      ({ query }) => ({ content: [{ type: "text", text: `2 notes match "${query}": standup.md, roadmap.md` }] })
    )
    return server
  }

  const app = express()
  const http = createServer(app)
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve))
  const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`
  const mcpUrl = `${base}/mcp`
  app.use((request: IncomingMessage, response: ServerResponse, next: (error?: unknown) => void) => {
    if (broken === undefined || request.url?.startsWith("/token") !== true) return next()
    if (broken === "network") return void request.socket.destroy()
    response.writeHead(503, { "content-type": "application/json" })
    response.end(JSON.stringify({ error: "temporarily_unavailable" }))
  })
  app.use(mcpAuthRouter({ provider, issuerUrl: new URL(base), resourceServerUrl: new URL(mcpUrl) }))
  app.post(
    "/mcp",
    express.json(),
    requireBearerAuth({
      verifier: provider,
      resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(new URL(mcpUrl))
    }),
    async (request: IncomingMessage & { readonly body?: unknown }, response: ServerResponse) => {
      // Stateless: a server and transport per request, closed with the response.
      const server = mcp()
      const transport = new StreamableHTTPServerTransport({})
      response.on("close", () => {
        void transport.close()
        void server.close()
      })
      await server.connect(transport)
      await transport.handleRequest(request, response, request.body)
    }
  )

  return {
    mcpUrl,
    registrations: () => counts.registrations,
    authorizations: () => counts.authorizations,
    tokensIssued: () => counts.tokensIssued,
    refreshes: () => counts.refreshes,
    revocations: () => counts.revocations,
    currentRefreshToken: () => latest,
    resources,
    issued,
    expireTokens: () => {
      for (const entry of access.values()) entry.expired = true
    },
    breakTokenEndpoint: (mode) => {
      broken = mode
    },
    refuseAll: (refuse) => {
      refusing = refuse
    },
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections()
        http.close(() => resolve())
      })
  }
}
