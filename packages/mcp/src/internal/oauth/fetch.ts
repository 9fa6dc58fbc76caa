/**
 * The fetch of an OAuth connection: every request to the MCP server carries
 * the stored access token; a 401, or a 403 `insufficient_scope`, starts the
 * MCP SDK's `auth()` with the challenge's scope and resource metadata URL
 * (discovery, registration, PKCE, the resource indicator, refresh), the
 * user's browser step when it asks for one (then `auth()` again with the
 * code), and the request is sent again with the new token.
 *
 * Many at once: the authorizations of one server are one at a time in the
 * process (the server's `Semaphore`, shared by every connection of the
 * client layer). A request refused while another refreshes waits for that
 * refresh, reads the token again and, when it changed, is sent again with it
 * without authorizing itself; across processes the provider's claim on the
 * store does the same.
 *
 * Bounded: one request starts at most `maxAttempts` authorizations, and a
 * challenge met with a token just obtained (the same status and
 * `WWW-Authenticate` as the one that started the authorization) is final at
 * once, for this request and any later one that carries that token. A final
 * 401 or 403 goes back to the transport as it came, and the connection
 * reports it naming the status and the server. An authorization that fails
 * (discovery, a refused registration, a resource that does not match the
 * server, a discovered document that breaks a rule of `./discovery.ts`) is
 * thrown as {@link AuthorizationFailed}; a refresh that could not
 * reach the authorization server as the provider's `RefreshUnavailable`
 * (transient: never a new browser step).
 */
import { auth, extractWWWAuthenticateParams } from "@modelcontextprotocol/sdk/client/auth.js"
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js"
import * as Discovery from "./discovery.ts"
import * as Effect from "effect/Effect"
import * as Semaphore from "effect/Semaphore"
import { RefreshUnavailable } from "./attempt.ts"
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

/** The authorizations in flight of a client layer: one permit per server, made on first use. */
export interface Flights {
  readonly of: (server: string) => Semaphore.Semaphore
}

/** Makes the flights of one client layer. */
export const makeFlights = (): Flights => {
  const semaphores = new Map<string, Semaphore.Semaphore>()
  return {
    of: (server) => {
      const known = semaphores.get(server)
      if (known !== undefined) return known
      const made = Semaphore.makeUnsafe(1)
      semaphores.set(server, made)
      return made
    }
  }
}

const withToken = (access: string | undefined, init: RequestInit | undefined): RequestInit => {
  if (access === undefined) return init ?? {}
  const headers = new Headers(init?.headers)
  headers.set("Authorization", `Bearer ${access}`)
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
  flight: Semaphore.Semaphore,
  allowed: Discovery.Allowed
): FetchLike => {
  // Challenges met with a token just obtained, with that token: authorizing again would not help.
  const final = new Set<string>()

  const authorize = async (response: Response, sent: string | undefined): Promise<void> => {
    const status = response.status as 401 | 403
    const { resourceMetadataUrl: named, scope, error } = extractWWWAuthenticateParams(response)
    await response.body?.cancel()
    // Only a metadata URL on the server's origin (or an allowed one) is followed; `auth()` is given no other.
    const resourceMetadataUrl = Discovery.resourceMetadataUrl(serverUrl, named, allowed)
    const attempt = provider.attempt(plain)
    const options = {
      serverUrl,
      fetchFn: attempt.fetchFn,
      ...(scope === undefined ? {} : { scope }),
      ...(resourceMetadataUrl === undefined ? {} : { resourceMetadataUrl })
    }
    try {
      // Another request (or process) refreshed since this one's token was sent: use its token.
      if (error !== "insufficient_scope" && (await provider.claim(attempt, sent)) === "refreshed") return
      // A token refreshed for the scope it already has would not satisfy a step-up: authorize anew.
      if (error === "insufficient_scope") await attempt.invalidateCredentials?.("tokens")
      // Every document `auth()` will use is validated first, and kept as the provider's discovery state.
      await Discovery.discover(attempt, serverUrl, named, attempt.fetchFn, allowed)
      let result = await auth(attempt, options)
      if (result === "REDIRECT") {
        const code = attempt.takeCode()
        if (code === undefined) throw new Error("the browser step brought back no authorization code")
        result = await auth(attempt, { ...options, authorizationCode: code })
      }
      if (result !== "AUTHORIZED") throw new Error(`the authorization ended with ${result}`)
    } catch (cause) {
      if (cause instanceof RefreshUnavailable) throw cause
      const unavailable = attempt.unavailable()
      if (unavailable !== undefined) throw unavailable
      const reason = cause instanceof Error ? cause.message : String(cause)
      throw new AuthorizationFailed(status, `authorization failed: ${reason}`, { cause })
    } finally {
      await provider.release(attempt)
    }
  }

  // One at a time per server: a waiter finds the token the one before it obtained.
  const authorizeOnce = (response: Response, sent: string | undefined): Promise<void> =>
    Effect.runPromise(
      flight.withPermit(Effect.tryPromise({ try: () => authorize(response, sent), catch: (cause) => cause }))
    )

  return async (input, init) => {
    let sent = (await provider.tokens())?.access_token
    let response = await next(input, withToken(sent, init))
    let answered: string | undefined
    for (let attempt = 0; attempt < maxAttempts && challenged(response); attempt++) {
      const challenge = `${response.status} ${response.headers.get("www-authenticate") ?? ""}`
      if (final.has(`${challenge} ${sent ?? ""}`)) break
      if (challenge === answered) {
        final.add(`${challenge} ${sent ?? ""}`)
        break
      }
      answered = challenge
      await authorizeOnce(response, sent)
      sent = (await provider.tokens())?.access_token
      response = await next(input, withToken(sent, init))
    }
    return response
  }
}
