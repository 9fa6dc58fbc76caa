/**
 * OAuth discovery that validates every document it follows, before the MCP
 * SDK's `auth()` uses any of it. The SDK's `auth()` takes the discovery state
 * the provider keeps; this module finds it, checks it, and saves it there, so
 * the SDK registers, authorizes and exchanges codes only with what passed:
 *
 * - a `resource_metadata` URL from a server's challenge is followed only on
 *   the server's own origin (or an origin the user allowed); otherwise the
 *   server's well-known URL is used (no request to where a server points);
 * - the protected resource document's `resource` is the server, or the part
 *   of its site that holds it (RFC 9728 §3.3: the root document names the
 *   origin);
 * - the authorization server is `https`, or on a loopback address;
 * - its metadata's `issuer` is the URL the metadata was found under
 *   (RFC 8414 §3.3) — on the 2025-03-26 fallback, where the MCP server's
 *   origin is its own authorization server, an issuer on that origin;
 * - each of its endpoints is `https` (or loopback) and on the issuer's origin
 *   (or an origin the user allowed), so a code and its PKCE verifier go only
 *   to the token endpoint of the issuer that issued the code — the mix-up
 *   defence when no `iss` comes back;
 * - an `iss` in the authorization response names the issuer, and one is
 *   required when the metadata says it is sent (RFC 9207 §2.4).
 *
 * A document that breaks a rule is an {@link DiscoveryRefused} naming the
 * document and the rule; nothing is registered or asked for.
 */
import {
  discoverAuthorizationServerMetadata,
  discoverOAuthProtectedResourceMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState
} from "@modelcontextprotocol/sdk/client/auth.js"
import type { OAuthProtectedResourceMetadata } from "@modelcontextprotocol/sdk/shared/auth.js"
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js"

/** Origins the user allows beyond the rules' own (see `McpOAuth.Options.discovery`). */
export interface Allowed {
  /** Origins a `resource_metadata` URL may be on besides the server's. */
  readonly resourceMetadataOrigins: ReadonlyArray<string>
  /** Origins an authorization server's endpoints may be on besides its issuer's. */
  readonly endpointOrigins: ReadonlyArray<string>
}

/** A discovered document that breaks a rule; the message names the document and the rule. */
export class DiscoveryRefused extends Error {
  constructor(message: string) {
    super(message)
    this.name = "DiscoveryRefused"
  }
}

const endpointFields = [
  "authorization_endpoint",
  "token_endpoint",
  "registration_endpoint",
  "revocation_endpoint",
  "introspection_endpoint"
] as const

const parse = (text: string): URL | undefined => {
  try {
    return new URL(text)
  } catch {
    return undefined
  }
}

const originOf = (text: string): string | undefined => parse(text)?.origin

/** A loopback host by address or by the one name reserved for it (RFC 8252 §7.3, RFC 6761 §6.3). */
export const isLoopback = (url: URL): boolean => {
  const host = url.hostname
  return host === "localhost" || host === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)
}

/** `https`, or any scheme-`http` URL on a loopback host. */
const secure = (url: URL): boolean => url.protocol === "https:" || (url.protocol === "http:" && isLoopback(url))

/** Two URLs that name one thing: parsed, without a fragment, tolerating one trailing `/`. */
export const sameUrl = (a: string, b: string): boolean => {
  const x = parse(a)
  const y = parse(b)
  if (x === undefined || y === undefined) return a === b
  x.hash = ""
  y.hash = ""
  const [p, q] = [x.href, y.href]
  return p === q || (p.endsWith("/") && p.slice(0, -1) === q) || (q.endsWith("/") && q.slice(0, -1) === p)
}

const insecure = (what: string, url: string) =>
  new DiscoveryRefused(`${what} ${url} is neither https nor on a loopback address (OAuth 2.1 §1.5)`)

/**
 * The `resource_metadata` URL to follow for `server`: the challenge's when it
 * is on the server's origin or an allowed one, else none (the well-known URL).
 */
export const resourceMetadataUrl = (server: string, named: URL | undefined, allowed: Allowed): URL | undefined => {
  if (named === undefined) return undefined
  const own = originOf(server)
  return named.origin === own || allowed.resourceMetadataOrigins.includes(named.origin) ? named : undefined
}

/**
 * Whether `resource` identifies `server`: the server's URL, or a part of its
 * site that holds it — the same origin, and a path that is the server's or a
 * prefix of it ending at a `/` (the root document of RFC 9728 names the origin).
 */
export const identifies = (resource: string, server: string): boolean => {
  const claimed = parse(resource)
  const own = parse(server)
  if (claimed === undefined || own === undefined) return false
  if (claimed.origin !== own.origin) return false
  const prefix = claimed.pathname.endsWith("/") ? claimed.pathname : `${claimed.pathname}/`
  const path = own.pathname.endsWith("/") ? own.pathname : `${own.pathname}/`
  return path.startsWith(prefix)
}

/** Checks a protected resource document found for `server`; answers the authorization server to use. */
export const checkResource = (server: string, metadata: OAuthProtectedResourceMetadata | undefined): string => {
  if (metadata !== undefined && !identifies(metadata.resource, server)) {
    throw new DiscoveryRefused(
      `the protected resource metadata names the resource ${metadata.resource}, not the server ${server} (RFC 9728 §3.3)`
    )
  }
  const named = metadata?.authorization_servers?.[0]
  const issuer = named ?? new URL("/", server).href
  const url = parse(issuer)
  if (url === undefined) throw new DiscoveryRefused(`the authorization server ${issuer} is not a URL`)
  if (!secure(url)) throw insecure("the authorization server", issuer)
  return issuer
}

/**
 * Checks an authorization server's metadata found under `issuer`. `named`:
 * the issuer came from a protected resource document, so the metadata's
 * `issuer` must be it exactly; otherwise (the 2025-03-26 fallback: the MCP
 * server's own origin is its authorization server) an issuer on that origin.
 */
export const checkIssuer = (
  issuer: string,
  metadata: OAuthDiscoveryState["authorizationServerMetadata"],
  allowed: Allowed,
  named = true
): void => {
  if (metadata === undefined) return
  if (named ? !sameUrl(metadata.issuer, issuer) : originOf(metadata.issuer) !== originOf(issuer)) {
    throw new DiscoveryRefused(
      `the authorization server metadata found under ${issuer} gives the issuer ${metadata.issuer} (RFC 8414 §3.3)`
    )
  }
  const own = originOf(metadata.issuer)
  const fields = metadata as unknown as Readonly<Record<string, unknown>>
  for (const field of endpointFields) {
    const value = fields[field]
    if (typeof value !== "string") continue
    const url = parse(value)
    if (url === undefined) throw new DiscoveryRefused(`the ${field} of ${issuer} is not a URL`)
    if (!secure(url)) throw insecure(`the ${field} of ${issuer},`, value)
    if (url.origin !== own && !allowed.endpointOrigins.includes(url.origin)) {
      throw new DiscoveryRefused(
        `the ${field} of ${issuer} is on another origin (${url.origin}): a code goes only to its issuer`
      )
    }
  }
}

/** Whether a protected resource document named the authorization server (else the server's origin is it). */
const namedByResource = (metadata: OAuthProtectedResourceMetadata | undefined): boolean =>
  (metadata?.authorization_servers?.length ?? 0) > 0

/** Whether a discovery state the provider kept still passes the rules for `server`. */
const valid = (server: string, state: OAuthDiscoveryState, allowed: Allowed): boolean => {
  try {
    const issuer = checkResource(server, state.resourceMetadata)
    if (!sameUrl(issuer, state.authorizationServerUrl)) return false
    checkIssuer(issuer, state.authorizationServerMetadata, allowed, namedByResource(state.resourceMetadata))
    return true
  } catch {
    return false
  }
}

/**
 * Discovers and validates what `auth()` will use for `server`, and saves it
 * as the provider's discovery state. A kept state that passes is used as it
 * is (no request); one that does not is discovered again.
 */
export const discover = async (
  provider: OAuthClientProvider,
  server: string,
  named: URL | undefined,
  fetchFn: FetchLike,
  allowed: Allowed
): Promise<void> => {
  const kept = await provider.discoveryState?.()
  if (kept !== undefined && valid(server, kept, allowed)) return
  const followed = resourceMetadataUrl(server, named, allowed)
  let resourceMetadata: OAuthProtectedResourceMetadata | undefined
  try {
    resourceMetadata = await discoverOAuthProtectedResourceMetadata(
      server,
      followed === undefined ? {} : { resourceMetadataUrl: followed },
      fetchFn
    )
  } catch {
    // No protected resource metadata: the server's origin is its authorization server (the MCP SDK's fallback).
  }
  const issuer = checkResource(server, resourceMetadata)
  const authorizationServerMetadata = await discoverAuthorizationServerMetadata(issuer, { fetchFn })
  checkIssuer(issuer, authorizationServerMetadata, allowed, namedByResource(resourceMetadata))
  await provider.saveDiscoveryState?.({
    authorizationServerUrl: issuer,
    ...(followed === undefined ? {} : { resourceMetadataUrl: followed.href }),
    ...(resourceMetadata === undefined ? {} : { resourceMetadata }),
    ...(authorizationServerMetadata === undefined ? {} : { authorizationServerMetadata })
  })
}

/**
 * Checks an authorization response's `iss` (RFC 9207): when present it must
 * name the issuer; when the metadata says it is sent, it must be present.
 * Answers the refusal's message, or `undefined` when the response passes.
 */
export const checkResponseIssuer = (answer: URL, state: OAuthDiscoveryState | undefined): string | undefined => {
  const metadata = state?.authorizationServerMetadata
  const issuer = metadata?.issuer ?? state?.authorizationServerUrl
  const iss = answer.searchParams.get("iss")
  const required =
    (metadata as { readonly authorization_response_iss_parameter_supported?: unknown } | undefined)
      ?.authorization_response_iss_parameter_supported === true
  if (iss === null) {
    return required ? `the authorization response has no iss, though ${issuer} says it sends one (RFC 9207)` : undefined
  }
  if (issuer === undefined || !sameUrl(iss, issuer)) {
    return `the authorization response's iss ${iss} is not the issuer ${issuer ?? "(unknown)"} (RFC 9207)`
  }
  return undefined
}
