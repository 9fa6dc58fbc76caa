/**
 * One authorization attempt of a server's OAuth provider: the MCP SDK's `OAuthClientProvider` for one `auth()`
 * (or the two of a browser step), with its own `state`, PKCE verifier (kept in the token store under that state),
 * code and client registration, so that two attempts that overlap never use each other's. Its fetch for the
 * authorization server notices a refresh that could not reach it: the SDK would go on to a new browser step, the
 * attempt ends TRANSIENT instead ({@link RefreshUnavailable}).
 */
import { randomBytes } from "node:crypto"
import type { OAuthClientProvider, OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js"
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens
} from "@modelcontextprotocol/sdk/shared/auth.js"
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js"
import * as Effect from "effect/Effect"
import * as Core from "@rolecraft/core/McpClient"
import * as McpOAuth from "../../McpOAuth.ts"
import type { Entry } from "../../McpTokenStore.ts"
import * as Discovery from "./discovery.ts"

/** The SDK's provider for one attempt. */
export interface Attempt extends OAuthClientProvider {
  /** The code the browser step brought back (taken once). */
  readonly takeCode: () => string | undefined
  readonly fetchFn: FetchLike
  /** A refresh of this attempt that could not reach the authorization server, if one did not. */
  readonly unavailable: () => RefreshUnavailable | undefined
}

/** A refresh that could not reach the authorization server (a network error or a 5xx): transient, not a refusal. */
export class RefreshUnavailable extends Error {
  constructor(cause: unknown) {
    super(
      `the authorization server could not be reached to refresh the token (${cause instanceof Error ? cause.message : String(cause)})`,
      { cause }
    )
    this.name = "RefreshUnavailable"
  }
}

/** What every attempt of one server's provider shares. */
export interface Base {
  readonly server: string
  readonly options: McpOAuth.Options
  readonly redirectUrl: string
  /** The SDK provider of a grant without a user, when the options name one. */
  readonly delegate: OAuthClientProvider | undefined
  readonly metadata: OAuthClientMetadata
  readonly preRegistered: OAuthClientInformationMixed | undefined
  readonly onSecret: (secret: string) => void
  readonly run: <A, E>(effect: Effect.Effect<A, E, McpOAuth.Authorization>) => Promise<A>
  readonly read: () => Promise<Entry>
  /** A compare-and-set change of the server's entry. */
  readonly update: (next: (entry: Entry) => Entry) => Promise<void>
  readonly tokens: () => Promise<OAuthTokens | undefined>
}

const refused = (message: string) => new Core.McpClientError({ reason: "Connect", sent: false, message })

export interface Own {
  readonly id: string
  state: string | undefined
  code: string | undefined
  refreshToken: string | undefined
  unavailable: RefreshUnavailable | undefined
  /** The client registration this attempt authorizes as (its code is bound to that client). */
  client: OAuthClientInformationMixed | undefined
}

/** A new attempt, and what it keeps (its provider reads its claim's owner from it). */
export const make = (base: Base, plain: FetchLike): { readonly made: Attempt; readonly own: Own } => {
  const { server, options, redirectUrl, delegate, metadata, preRegistered, onSecret, run, read, update, tokens } = base
  const own: Own = {
    id: randomBytes(12).toString("base64url"),
    state: undefined,
    code: undefined,
    refreshToken: undefined,
    unavailable: undefined,
    client: undefined
  }
  // A refresh that cannot reach the authorization server must not turn into a new browser step (the SDK would go on).
  const fetchFn: FetchLike = async (url, init) => {
    const refreshing = init?.body instanceof URLSearchParams && init.body.get("grant_type") === "refresh_token"
    if (!refreshing) return plain(url, init)
    const response = await plain(url, init).catch((cause: unknown) => {
      own.unavailable = new RefreshUnavailable(cause)
      throw cause
    })
    if (response.status >= 500) own.unavailable = new RefreshUnavailable(`HTTP ${response.status}`)
    return response
  }
  const forget = (entry: Entry): Entry => {
    if (own.state === undefined || entry.codeVerifiers?.[own.state] === undefined) return entry
    const { [own.state]: _, ...rest } = entry.codeVerifiers
    return { ...entry, codeVerifiers: rest }
  }
  const unclaimed = (entry: Entry): Entry =>
    entry.refreshing?.by === own.id ? { ...entry, refreshing: undefined } : entry
  const made: Attempt = {
    fetchFn,
    unavailable: () => own.unavailable,
    get redirectUrl() {
      return delegate === undefined ? redirectUrl : undefined
    },
    ...(delegate === undefined && options.clientMetadataUrl !== undefined
      ? { clientMetadataUrl: options.clientMetadataUrl }
      : {}),
    get clientMetadata() {
      return delegate?.clientMetadata ?? metadata
    },
    state: () => {
      // The SDK asks for a state only on its way to a browser step: a refresh that failed to send ends here instead.
      if (own.unavailable !== undefined) throw own.unavailable
      own.state = randomBytes(16).toString("base64url")
      return own.state
    },
    clientInformation: async () => {
      if (delegate !== undefined) return delegate.clientInformation()
      if (preRegistered !== undefined) return preRegistered
      // Read once per attempt: another attempt's registration written meanwhile must not change whose code this is.
      own.client ??= (await read()).clientInformation as OAuthClientInformationMixed | undefined
      return own.client
    },
    saveClientInformation: async (information) => {
      if (delegate !== undefined || preRegistered !== undefined) return
      if (typeof information.client_secret === "string") onSecret(information.client_secret)
      own.client = information
      await update((entry) => ({ ...entry, clientInformation: information }))
    },
    tokens: async () => {
      const stored = await tokens()
      own.refreshToken = stored?.refresh_token
      return stored
    },
    saveTokens: async (saved) => {
      onSecret(saved.access_token)
      if (saved.refresh_token !== undefined) onSecret(saved.refresh_token)
      // Compare-and-set on the refresh token this attempt read: if another process's refresh was written
      // meanwhile, that one stands (it is the authorization server's current one) and this attempt uses it.
      await update((entry) => {
        const current = (entry.tokens as OAuthTokens | undefined)?.refresh_token
        if (own.refreshToken !== undefined && current !== undefined && current !== own.refreshToken) {
          return unclaimed(forget(entry))
        }
        return unclaimed(forget({ ...entry, tokens: saved }))
      })
    },
    redirectToAuthorization: async (url) => {
      if (delegate !== undefined) throw refused("the client credentials grant has no browser step")
      const answer = await run(
        Effect.flatMap(Effect.service(McpOAuth.Authorization), (authorization) =>
          authorization.authorize({ url, server, redirectUrl })
        )
      )
      const error = answer.searchParams.get("error")
      if (error !== null) {
        const description = answer.searchParams.get("error_description")
        throw refused(`the authorization server refused: ${error}${description === null ? "" : ` (${description})`}`)
      }
      if (own.state !== undefined && answer.searchParams.get("state") !== own.state) {
        throw refused("the authorization answer's state does not match the request's (a forged or stale redirect)")
      }
      const mixedUp = Discovery.checkResponseIssuer(
        answer,
        (await read()).discoveryState as OAuthDiscoveryState | undefined
      )
      if (mixedUp !== undefined) throw refused(mixedUp)
      const received = answer.searchParams.get("code")
      if (received === null) throw refused("the authorization answer has no code")
      own.code = received
    },
    takeCode: () => {
      const taken = own.code
      own.code = undefined
      return taken
    },
    saveCodeVerifier: (verifier) => {
      const state = own.state
      return update((entry) =>
        state === undefined
          ? { ...entry, codeVerifier: verifier }
          : { ...entry, codeVerifiers: { ...entry.codeVerifiers, [state]: verifier } }
      )
    },
    codeVerifier: async () => {
      const entry = await read()
      const verifier = own.state === undefined ? entry.codeVerifier : entry.codeVerifiers?.[own.state]
      if (verifier === undefined) throw refused("no PKCE code verifier was saved for this authorization")
      return verifier
    },
    saveDiscoveryState: (discovered) =>
      update((entry) => ({ ...entry, discoveryState: discovered as unknown as Record<string, unknown> })),
    discoveryState: async () => (await read()).discoveryState as OAuthDiscoveryState | undefined,
    invalidateCredentials: (scope) => {
      if (scope === "all" || scope === "client") own.client = undefined
      return update((entry) => {
        switch (scope) {
          case "all":
            return entry.refreshing === undefined ? {} : { refreshing: entry.refreshing }
          case "client":
            return { ...entry, clientInformation: undefined }
          case "tokens":
            return { ...entry, tokens: undefined }
          case "verifier":
            return forget(entry)
          case "discovery":
            return { ...entry, discoveryState: undefined }
        }
      })
    },
    ...(delegate?.addClientAuthentication === undefined
      ? {}
      : { addClientAuthentication: delegate.addClientAuthentication.bind(delegate) }),
    ...(delegate?.prepareTokenRequest === undefined
      ? {}
      : { prepareTokenRequest: delegate.prepareTokenRequest.bind(delegate) })
  }
  return { made, own }
}
