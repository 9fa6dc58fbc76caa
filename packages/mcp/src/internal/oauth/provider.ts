/**
 * The MCP SDK's `OAuthClientProvider` for one server, over Rolecraft's
 * services: what it keeps goes to the `McpTokenStore` under the server's URL
 * (verbatim), the browser step goes to the user's `Authorization` service
 * (its answer's `state` and `iss` are checked and its `code` kept for the SDK's second
 * `auth()` call), the client credentials grant delegates to the SDK's own
 * `ClientCredentialsProvider` or `PrivateKeyJwtProvider` for how the client
 * authenticates and what the token request says, and the JWT bearer grant
 * asks the user's function for its assertion with what discovery found. Every token it sees is
 * told to `onSecret`, so the connection hides it from what it writes.
 */
import { randomBytes } from "node:crypto"
import { ClientCredentialsProvider, PrivateKeyJwtProvider } from "@modelcontextprotocol/sdk/client/auth-extensions.js"
import type { OAuthClientProvider, OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js"
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens
} from "@modelcontextprotocol/sdk/shared/auth.js"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Core from "@rolecraft/core/McpClient"
import * as McpOAuth from "../../McpOAuth.ts"
import { type Entry, McpTokenStore } from "../../McpTokenStore.ts"
import * as Discovery from "./discovery.ts"

/** The services the provider runs its effects with. */
export type Services = McpTokenStore | McpOAuth.Authorization

/** The default redirect URI. */
export const defaultRedirectUrl = "http://127.0.0.1:8976/callback"

/** A provider, and the code its last browser step brought back (taken once). */
export interface Provider extends OAuthClientProvider {
  readonly takeCode: () => string | undefined
}

const refused = (message: string) => new Core.McpClientError({ reason: "Connect", sent: false, message })

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
  const update = (change: (entry: Entry) => Entry) =>
    run(Effect.flatMap(store.get(server), (entry) => store.set(server, change(entry))))
  let state: string | undefined
  let code: string | undefined

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

  const provider: Provider = {
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
      state = randomBytes(16).toString("base64url")
      return state
    },
    clientInformation: async () => {
      if (delegate !== undefined) return delegate.clientInformation()
      if (preRegistered !== undefined) return preRegistered
      return (await read()).clientInformation as OAuthClientInformationMixed | undefined
    },
    saveClientInformation: async (information) => {
      if (delegate !== undefined || preRegistered !== undefined) return
      if (typeof information.client_secret === "string") onSecret(information.client_secret)
      await update((entry) => ({ ...entry, clientInformation: information }))
    },
    tokens: async () => {
      const tokens = (await read()).tokens as OAuthTokens | undefined
      if (tokens !== undefined) {
        onSecret(tokens.access_token)
        if (tokens.refresh_token !== undefined) onSecret(tokens.refresh_token)
      }
      return tokens
    },
    saveTokens: async (tokens) => {
      onSecret(tokens.access_token)
      if (tokens.refresh_token !== undefined) onSecret(tokens.refresh_token)
      await update((entry) => ({ ...entry, tokens }))
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
      if (state !== undefined && answer.searchParams.get("state") !== state) {
        throw refused("the authorization answer's state does not match the request's (a forged or stale redirect)")
      }
      const mixedUp = Discovery.checkResponseIssuer(
        answer,
        (await read()).discoveryState as OAuthDiscoveryState | undefined
      )
      if (mixedUp !== undefined) throw refused(mixedUp)
      const received = answer.searchParams.get("code")
      if (received === null) throw refused("the authorization answer has no code")
      code = received
    },
    takeCode: () => {
      const taken = code
      code = undefined
      return taken
    },
    saveCodeVerifier: (verifier) => update((entry) => ({ ...entry, codeVerifier: verifier })),
    codeVerifier: async () => {
      const verifier = (await read()).codeVerifier
      if (verifier === undefined) throw refused("no PKCE code verifier was saved for this authorization")
      return verifier
    },
    saveDiscoveryState: (discovered) =>
      update((entry) => ({ ...entry, discoveryState: discovered as unknown as Record<string, unknown> })),
    discoveryState: async () => (await read()).discoveryState as OAuthDiscoveryState | undefined,
    invalidateCredentials: (scope) =>
      update((entry) => {
        switch (scope) {
          case "all":
            return {}
          case "client":
            return { ...entry, clientInformation: undefined }
          case "tokens":
            return { ...entry, tokens: undefined }
          case "verifier":
            return { ...entry, codeVerifier: undefined }
          case "discovery":
            return { ...entry, discoveryState: undefined }
        }
      }),
    ...(delegate?.addClientAuthentication === undefined
      ? {}
      : { addClientAuthentication: delegate.addClientAuthentication.bind(delegate) }),
    ...(delegate?.prepareTokenRequest === undefined
      ? {}
      : { prepareTokenRequest: delegate.prepareTokenRequest.bind(delegate) })
  }
  return provider
}
