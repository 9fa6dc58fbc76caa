/**
 * The MCP SDK's `OAuthClientProvider` for one server, over Rolecraft's
 * services: what it keeps goes to the `McpTokenStore` under the server's URL
 * (verbatim), the browser step goes to the user's `Authorization` service
 * (its answer's `state` is checked and its `code` kept for the SDK's second
 * `auth()` call), the client credentials grant delegates to the SDK's own
 * `ClientCredentialsProvider` or `PrivateKeyJwtProvider` for how the client
 * authenticates and what the token request says, and the JWT bearer grant
 * asks the user's function for its assertion with what discovery found. Every token it sees is
 * told to `onSecret`, so the connection hides it from what it writes.
 */
import { ClientCredentialsProvider, PrivateKeyJwtProvider } from "@modelcontextprotocol/sdk/client/auth-extensions.js"
import type { OAuthClientProvider, OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js"
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js"
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens
} from "@modelcontextprotocol/sdk/shared/auth.js"
import * as Context from "effect/Context"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import type * as McpOAuth from "../../McpOAuth.ts"
import { type Entry, McpTokenStore } from "../../McpTokenStore.ts"
import * as StoreBoundary from "@rolecraft/core/StoreBoundary"
import * as AttemptKernel from "./attempt.ts"
import type { Attempt } from "./attempt.ts"

/** The services the provider runs its effects with. */
export type Services = McpTokenStore | McpOAuth.Authorization

/** The default redirect URI. */
export const defaultRedirectUrl = "http://127.0.0.1:8976/callback"

/** What one server's connection asks of its OAuth state. */
export interface Provider {
  /** The stored tokens (every one told to `onSecret`). */
  readonly tokens: () => Promise<OAuthTokens | undefined>
  /** A new attempt; `plain` reaches the authorization server. */
  readonly attempt: (plain: FetchLike) => Attempt
  /**
   * Claims the refresh that follows the refusal of `sent` (the access token
   * a request carried): `"refreshed"` when the stored token is already
   * another one (use it), `"claimed"` when this attempt may authorize. A
   * refresh claimed by another process is waited for.
   */
  readonly claim: (attempt: Attempt, sent: string | undefined) => Promise<"claimed" | "refreshed">
  /** Gives up the claim of `attempt`, if it still holds it. */
  readonly release: (attempt: Attempt) => Promise<void>
}

/** How long a claimed refresh keeps others waiting when its process dies before it ends. */
const claimMs = 30_000
/** How often a waiting process reads the store again. */
const pollMs = 25
/** Compare-and-set tries before a change gives up (only a store under constant contention reaches it). */
const maxSwaps = 1_000

/** The SDK provider of a client credentials grant (it decides the token request and the client's authentication). */
const grantProvider = (grant: McpOAuth.ClientCredentials, name: string): OAuthClientProvider => {
  const common = {
    clientId: grant.clientId,
    clientName: name,
    ...(grant.scope === undefined ? {} : { scope: grant.scope })
  }
  const issuer = grant.expectedIssuer
  if (grant._tag === "ClientSecret") {
    const options = { ...common, clientSecret: Redacted.value(grant.clientSecret) }
    return issuer === undefined
      ? new ClientCredentialsProvider(options)
      : new ClientCredentialsProvider({ ...options, expectedIssuer: issuer })
  }
  const options = { ...common, privateKey: Redacted.value(grant.privateKey), algorithm: grant.algorithm }
  return issuer === undefined
    ? new PrivateKeyJwtProvider(options)
    : new PrivateKeyJwtProvider({ ...options, expectedIssuer: issuer })
}

const jwtBearerType = "urn:ietf:params:oauth:grant-type:jwt-bearer"

/** A provider of the JWT bearer grant: the assertion asked for with what discovery found. */
const jwtBearerProvider = (
  grant: McpOAuth.JwtBearer,
  server: string,
  discovered: () => Promise<OAuthDiscoveryState | undefined>,
  run: <A, E>(effect: Effect.Effect<A, E, Services>) => Promise<A>,
  onSecret: (secret: string) => void
): OAuthClientProvider => ({
  redirectUrl: undefined,
  clientMetadata: { client_name: grant.clientId, redirect_uris: [], grant_types: [jwtBearerType] },
  clientInformation: () => ({ client_id: grant.clientId, client_secret: Redacted.value(grant.clientSecret) }),
  tokens: () => undefined,
  saveTokens: () => undefined,
  redirectToAuthorization: () => undefined,
  saveCodeVerifier: () => undefined,
  codeVerifier: () => "",
  prepareTokenRequest: async () => {
    const state = await discovered()
    const authorizationServer = state?.authorizationServerMetadata?.issuer ?? state?.authorizationServerUrl ?? server
    const resource = state?.resourceMetadata?.resource ?? server
    const assertion = Redacted.value(await run(grant.assertion({ authorizationServer, resource })))
    onSecret(assertion)
    return new URLSearchParams({ grant_type: jwtBearerType, assertion })
  }
})

/** Makes the provider of `server` (its URL); `context` holds the services. */
export const make = (
  options: McpOAuth.Options,
  server: string,
  context: Context.Context<Services>,
  onSecret: (secret: string) => void
): Provider => {
  const run = <A, E>(effect: Effect.Effect<A, E, Services>): Promise<A> => Effect.runPromiseWith(context)(effect)
  const store = Context.get(context, McpTokenStore)
  const redirectUrl = options.redirectUrl ?? defaultRedirectUrl
  const grant = options.grant === undefined || options.grant === "authorization_code" ? undefined : options.grant
  const read = () => run(store.get(server))
  const delegate =
    grant === undefined
      ? undefined
      : grant._tag === "JwtBearer"
        ? jwtBearerProvider(
            grant,
            server,
            async () => (await read()).discoveryState as OAuthDiscoveryState | undefined,
            run,
            onSecret
          )
        : grantProvider(grant, options.clientName ?? "rolecraft")
  if (grant !== undefined)
    onSecret(Redacted.value(grant._tag === "PrivateKeyJwt" ? grant.privateKey : grant.clientSecret))

  // Every change is a compare-and-set on what was read: another process's write in between is read again, not lost.
  const change = (next: (entry: Entry) => Entry): Effect.Effect<void, StoreBoundary.StoreError> =>
    Effect.gen(function* () {
      for (let swap = 0; swap < maxSwaps; swap++) {
        const entry = yield* store.get(server)
        const changed = next(entry)
        if (JSON.stringify(changed) === JSON.stringify(entry)) return
        if (yield* store.compareAndSet(server, entry, changed)) return
      }
      return yield* new StoreBoundary.StoreError({
        store: "the MCP token store",
        category: "TRANSIENT",
        message: `the MCP token store: the entry of ${server} kept changing under ${maxSwaps} writes`
      })
    })
  const update = (next: (entry: Entry) => Entry) => run(change(next))

  const metadata: OAuthClientMetadata = {
    client_name: options.clientName ?? "rolecraft",
    redirect_uris: [redirectUrl],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    ...(options.scope === undefined ? {} : { scope: options.scope })
  }
  const preRegistered: OAuthClientInformationMixed | undefined =
    options.client === undefined
      ? undefined
      : {
          client_id: options.client.clientId,
          ...(options.client.clientSecret === undefined
            ? {}
            : { client_secret: Redacted.value(options.client.clientSecret) })
        }
  if (preRegistered?.client_secret !== undefined) onSecret(preRegistered.client_secret)

  const tokens = async () => {
    const stored = (await read()).tokens as OAuthTokens | undefined
    if (stored !== undefined) {
      onSecret(stored.access_token)
      if (stored.refresh_token !== undefined) onSecret(stored.refresh_token)
    }
    return stored
  }

  const base: AttemptKernel.Base = {
    server,
    options,
    redirectUrl,
    delegate,
    metadata,
    preRegistered,
    onSecret,
    run,
    read,
    update,
    tokens
  }
  const owns = new WeakMap<Attempt, AttemptKernel.Own>()
  const attempt = (plain: FetchLike): Attempt => {
    const { made, own } = AttemptKernel.make(base, plain)
    owns.set(made, own)
    return made
  }

  const claim = (made: Attempt, sent: string | undefined) => {
    const own = owns.get(made)
    if (own === undefined) return Promise.resolve("claimed" as const)
    return run(
      Effect.gen(function* () {
        for (let swap = 0; swap < maxSwaps; swap++) {
          const entry = yield* store.get(server)
          const stored = entry.tokens as OAuthTokens | undefined
          if (stored !== undefined && stored.access_token !== sent) return "refreshed" as const
          // Nothing another process could spend twice: authorize (a browser step is not shared across processes).
          if (stored?.refresh_token === undefined) return "claimed" as const
          const now = yield* Clock.currentTimeMillis
          if (entry.refreshing !== undefined && entry.refreshing.by !== own.id && entry.refreshing.until > now) {
            yield* Effect.sleep(pollMs)
            continue
          }
          const claimed: Entry = { ...entry, refreshing: { by: own.id, until: now + claimMs } }
          if (yield* store.compareAndSet(server, entry, claimed)) return "claimed" as const
        }
        return "claimed" as const
      })
    )
  }

  const release = (made: Attempt) => {
    const own = owns.get(made)
    if (own === undefined) return Promise.resolve()
    return update((entry) => (entry.refreshing?.by === own.id ? { ...entry, refreshing: undefined } : entry))
  }

  return { tokens, attempt, claim, release }
}
