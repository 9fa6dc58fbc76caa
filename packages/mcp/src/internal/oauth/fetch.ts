/**
 * The fetch of an OAuth connection: every request to the MCP server carries
 * the stored access token; a 401, or a 403 `insufficient_scope`, starts the
 * MCP SDK's `auth()` with the challenge's scope and resource metadata URL
 * (discovery, registration, PKCE, the resource indicator, refresh), the
 * user's browser step when it asks for one (then `auth()` again with the
 * code), and the request is sent again with the new token.
 *
 * Bounded: one request starts at most `maxAttempts` authorizations, and a
 * challenge already answered since the connection's last request that was
 * not challenged (the same status and `WWW-Authenticate` after an
 * authorization) is final at once. A final 401 or 403 goes back
 * to the transport as it came, and the connection reports it naming the
 * status and the server. An authorization that fails (discovery, a refused
 * registration, a resource that does not match the server, a discovered
 * document that breaks a rule of `./discovery.ts`) is thrown as
 * {@link AuthorizationFailed}.
 */
import { auth, extractWWWAuthenticateParams } from "@modelcontextprotocol/sdk/client/auth.js"
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js"
import * as Discovery from "./discovery.ts"
import type { Provider } from "./provider.ts"

/** An authorization that could not be completed; `status` is the challenge's (401 or 403). */
export class AuthorizationFailed extends Error {
  readonly status: 401 | 403
  constructor(status: 401 | 403, message: string, options?: { readonly cause?: unknown }) {
    super(message, options)
    this.name = "AuthorizationFailed"
    this.status = status
  }
}

const withToken = async (provider: Provider, init: RequestInit | undefined): Promise<RequestInit> => {
  const tokens = await provider.tokens()
  if (tokens === undefined) return init ?? {}
  const headers = new Headers(init?.headers)
  headers.set("Authorization", `Bearer ${tokens.access_token}`)
  return { ...init, headers }
}

const challenged = (response: Response): boolean =>
  response.status === 401 ||
  (response.status === 403 && extractWWWAuthenticateParams(response).error === "insufficient_scope")

/** Wraps `next` (the connection's fetch); `plain` is used for the authorization server (never recorded). */
export const make = (
  provider: Provider,
  serverUrl: string,
  next: FetchLike,
  plain: FetchLike,
  maxAttempts: number,
  allowed: Discovery.Allowed
): FetchLike => {
  // The challenges authorized for on this connection: the same one again means authorizing does not help.
  const answered = new Set<string>()

  const authorize = async (response: Response): Promise<void> => {
    const status = response.status as 401 | 403
    const { resourceMetadataUrl: named, scope, error } = extractWWWAuthenticateParams(response)
    await response.body?.cancel()
    // Only a metadata URL on the server's origin (or an allowed one) is followed; `auth()` is given no other.
    const resourceMetadataUrl = Discovery.resourceMetadataUrl(serverUrl, named, allowed)
    const options = {
      serverUrl,
      fetchFn: plain,
      ...(scope === undefined ? {} : { scope }),
      ...(resourceMetadataUrl === undefined ? {} : { resourceMetadataUrl })
    }
    try {
      // A token refreshed for the scope it already has would not satisfy a step-up: authorize anew.
      if (error === "insufficient_scope") await provider.invalidateCredentials?.("tokens")
      // Every document `auth()` will use is validated first, and kept as the provider's discovery state.
      await Discovery.discover(provider, serverUrl, named, plain, allowed)
      let result = await auth(provider, options)
      if (result === "REDIRECT") {
        const code = provider.takeCode()
        if (code === undefined) throw new Error("the browser step brought back no authorization code")
        result = await auth(provider, { ...options, authorizationCode: code })
      }
      if (result !== "AUTHORIZED") throw new Error(`the authorization ended with ${result}`)
    } catch (cause) {
      const reason = cause instanceof Error ? cause.message : String(cause)
      throw new AuthorizationFailed(status, `authorization failed: ${reason}`, { cause })
    }
  }

  return async (input, init) => {
    let response = await next(input, await withToken(provider, init))
    if (!challenged(response)) answered.clear()
    for (let attempt = 0; attempt < maxAttempts && challenged(response); attempt++) {
      const challenge = `${response.status} ${response.headers.get("www-authenticate") ?? ""}`
      if (answered.has(challenge)) break
      answered.add(challenge)
      await authorize(response)
      response = await next(input, await withToken(provider, init))
      if (!challenged(response)) answered.clear()
    }
    return response
  }
}
