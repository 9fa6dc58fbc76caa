/**
 * OAuth 2.1 for MCP servers over streamable HTTP, as `McpClientSdk.layerOAuth`
 * runs it with the MCP SDK's own client auth (`auth()` and an
 * `OAuthClientProvider`): when a server answers 401 (or 403
 * `insufficient_scope`), the client discovers the protected resource's and
 * the authorization server's metadata, registers itself (dynamic client
 * registration), or uses a client metadata document URL or a pre-registered
 * client, authorizes with PKCE (S256) and a resource indicator, gets a token
 * — refreshing it when it expires — and sends the request again. With
 * `grant: ClientCredentials` there is no user and no browser step.
 *
 * What the user provides: the browser step ({@link Authorization}: given the
 * authorization URL, come back with the URL the authorization server
 * redirected to) and where tokens are kept (`McpTokenStore`).
 *
 * @example
 * ```ts
 * import { McpClientSdk, McpOAuth, McpTokenStore } from "@rolecraft/mcp"
 * import { Layer } from "effect"
 *
 * const client = McpClientSdk.layerOAuth({ clientName: "my-agent" }).pipe(
 *   Layer.provide([McpTokenStore.layerMemory, McpOAuth.layerFollowRedirects])
 * )
 * ```
 *
 * @since 0.2.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Redacted from "effect/Redacted"
import * as Core from "@rolecraft/core/McpClient"

/**
 * The client credentials grant (no user): a client secret sent with HTTP
 * Basic (`clientSecret`), or a JWT assertion signed with a private key
 * (`privateKey`, PEM, `algorithm` such as `"ES256"` or `"RS256"`).
 * `expectedIssuer`, when given, is the only authorization server the
 * credentials are sent to.
 *
 * @category models
 * @since 0.2.0
 */
export type ClientCredentials =
  | {
      readonly _tag: "ClientSecret"
      readonly clientId: string
      readonly clientSecret: Redacted.Redacted<string>
      readonly scope?: string | undefined
      readonly expectedIssuer?: string | undefined
    }
  | {
      readonly _tag: "PrivateKeyJwt"
      readonly clientId: string
      readonly privateKey: Redacted.Redacted<string>
      readonly algorithm: string
      readonly scope?: string | undefined
      readonly expectedIssuer?: string | undefined
    }

/**
 * The JWT bearer grant (RFC 7523) with an assertion obtained elsewhere — for
 * enterprise-managed authorization, an identity assertion grant (ID-JAG) an
 * identity provider issued for this authorization server and resource in a
 * token exchange (RFC 8693). `assertion` is asked for each token, given the
 * authorization server's issuer and the resource (the MCP server) discovery
 * found; the client authenticates with `clientId` and `clientSecret`.
 *
 * @category models
 * @since 0.2.0
 */
export interface JwtBearer {
  readonly _tag: "JwtBearer"
  readonly clientId: string
  readonly clientSecret: Redacted.Redacted<string>
  readonly assertion: (target: {
    readonly authorizationServer: string
    readonly resource: string
  }) => Effect.Effect<Redacted.Redacted<string>, Core.McpClientError>
}

/**
 * How the client authorizes with the servers that ask for it.
 *
 * - `redirectUrl`: where the authorization server sends the browser back
 *   (the client's registered redirect URI). Default
 *   `http://127.0.0.1:8976/callback`.
 * - `clientName`: the name registered (default `"rolecraft"`).
 * - `clientMetadataUrl`: an `https` URL with a path where the client's
 *   metadata document is published, used as its `client_id` when the
 *   authorization server supports client ID metadata documents (else the
 *   client registers).
 * - `client`: a pre-registered client (`clientId`, and `clientSecret` for a
 *   confidential one), used instead of registering.
 * - `scope`: the scope asked for when neither the server's challenge nor its
 *   metadata names one (default none).
 * - `grant`: `"authorization_code"` (default, with the {@link Authorization}
 *   browser step), {@link ClientCredentials} or {@link JwtBearer}.
 * - `maxAttempts`: how many authorizations one request may start (a new
 *   challenge after each, e.g. a step-up to more scopes) before its 401 or
 *   403 is final (default 3; a challenge seen before is final at once).
 * - `discovery`: what discovery may follow beyond its rules. Every document
 *   is validated before it is used: a `resource_metadata` URL in a server's
 *   challenge is followed only on the server's origin (else the server's
 *   well-known URL is used); the protected resource metadata's `resource`
 *   must be the server; the authorization server and each of its endpoints
 *   must be `https` or on a loopback address; its metadata's `issuer` must be
 *   the URL it was found under; every endpoint must be on the issuer's
 *   origin; an `iss` in the browser step's answer must be the issuer (and is
 *   required when the metadata says it is sent). A document that breaks a
 *   rule fails the call with EXECUTION naming the rule, before any
 *   registration or token request. `resourceMetadataOrigins` lists other
 *   origins (`"https://auth.example.com"`) a `resource_metadata` URL may be
 *   on; `endpointOrigins` other origins an authorization server's endpoints
 *   may be on. Default: none.
 *
 * @category models
 * @since 0.2.0
 */
export interface Options {
  readonly redirectUrl?: string | undefined
  readonly clientName?: string | undefined
  readonly clientMetadataUrl?: string | undefined
  readonly client?:
    | { readonly clientId: string; readonly clientSecret?: Redacted.Redacted<string> | undefined }
    | undefined
  readonly scope?: string | undefined
  readonly grant?: "authorization_code" | ClientCredentials | JwtBearer | undefined
  readonly maxAttempts?: number | undefined
  readonly discovery?:
    | {
        readonly resourceMetadataOrigins?: ReadonlyArray<string> | undefined
        readonly endpointOrigins?: ReadonlyArray<string> | undefined
      }
    | undefined
}

/**
 * One browser step: `url` is the authorization server's authorization URL
 * for `server` (the MCP server's URL); `redirectUrl` the client's redirect
 * URI, where the answer will come back.
 *
 * @category models
 * @since 0.2.0
 */
export interface AuthorizationRequest {
  readonly url: URL
  readonly server: string
  readonly redirectUrl: string
}

/**
 * The browser step, provided by the user: show `request.url` to the user
 * (open a browser, print it) and succeed with the URL the authorization
 * server redirected the browser to (`redirectUrl?code=…&state=…`, or
 * `?error=…`). The client checks `state` and takes the `code`. Fails with
 * `McpClientError` (the call then fails with EXECUTION).
 *
 * @category services
 * @since 0.2.0
 */
export class Authorization extends Context.Service<
  Authorization,
  { readonly authorize: (request: AuthorizationRequest) => Effect.Effect<URL, Core.McpClientError> }
>()("@rolecraft/mcp/McpOAuth/Authorization") {}

const maxHops = 10

const refused = (message: string) => new Core.McpClientError({ reason: "Connect", sent: false, message })

/**
 * A browser step with no user: it requests the authorization URL itself and
 * follows the authorization server's redirects (at most 10) until one leads
 * to the redirect URI. For tests, examples and authorization servers that
 * approve without a login page; a server that shows a page fails it.
 *
 * @category layers
 * @since 0.2.0
 */
export const layerFollowRedirects: Layer.Layer<Authorization> = Layer.succeed(
  Authorization,
  Authorization.of({
    authorize: ({ url, redirectUrl }) =>
      Effect.tryPromise({
        try: async (signal) => {
          let next = url
          for (let hop = 0; hop < maxHops; hop++) {
            if (next.href.startsWith(redirectUrl)) return next
            const response = await fetch(next, { redirect: "manual", signal })
            await response.body?.cancel()
            const location = response.headers.get("location")
            if (location === null) {
              throw refused(
                `the authorization server answered HTTP ${response.status} at ${next.origin}${next.pathname} ` +
                  "without redirecting (it may want a user to log in)"
              )
            }
            next = new URL(location, next)
          }
          throw refused(`the authorization server redirected more than ${maxHops} times`)
        },
        catch: (error) =>
          error instanceof Core.McpClientError
            ? error
            : refused(`the authorization request failed: ${error instanceof Error ? error.message : String(error)}`)
      })
  })
)
