/**
 * The door of a local HTTP server that serves a page: what a request must
 * show before the server does any work for it. A page on another origin can
 * make a browser send requests to a server on 127.0.0.1 — a `text/plain`
 * POST needs no permission — and a page on a name an attacker rebinds to
 * 127.0.0.1 is, to the browser, on the server's own origin. So a door lets a
 * request through only with:
 *
 * - a `Host` the listener answers to: the names that reach it, with its port
 *   (on a loopback address `127.0.0.1`, `localhost` and `[::1]`; on `0.0.0.0`
 *   or `::` also each interface's address; else the address itself), and
 *   those given in `allowedHosts` (e.g. a proxy's name);
 * - when a browser says where the request comes from (`Origin`), `http://`
 *   and one of those hosts, or an origin given in `allowedOrigins`;
 * - for a request that changes anything: a JSON content type (no simple
 *   cross-origin request can have one) and the token the page was served
 *   with, in the header `tokenHeader`: a fresh random nonce and its
 *   HMAC-SHA256 under a key made with the door, so tokens cannot be forged
 *   and the server keeps none of them.
 *
 * Anything else is refused — 403, or 415 for another content type — before
 * the body is read. The web chat example and `@rolecraft/inspector` stand
 * behind one.
 *
 * @example
 * ```ts
 * import { HttpDoor } from "@rolecraft/core"
 *
 * const door = HttpDoor.make({ host: "127.0.0.1", port: 4000 })
 * const token = door.pageToken() // put it in the served page
 * door.refusal({ headers: { host: "127.0.0.1:4000" } }, false) // undefined: let through
 * door.refusal({ headers: { host: "evil.example:4000" } }, false) // { status: 403, reason: "this Host is not served" }
 * door.refusal(
 *   { headers: { host: "127.0.0.1:4000", "content-type": "application/json", "x-page-token": token } },
 *   true
 * ) // undefined
 * ```
 *
 * @since 0.3.0
 */

/**
 * Why a request is refused: its HTTP status (403, or 415 for a body that is
 * not JSON) and a short reason to answer with.
 *
 * @category models
 * @since 0.3.0
 */
export interface Refusal {
  readonly status: 403 | 415
  readonly reason: string
}

/**
 * What a door reads of a request: its headers, names in lower case (as
 * `node:http` and Effect's `HttpServerRequest` give them).
 *
 * @category models
 * @since 0.3.0
 */
export interface Request {
  readonly headers: Readonly<Record<string, string | undefined>>
}

/**
 * Who may call a server, and its page tokens.
 *
 * - `refusal(request, changes)`: why the request is refused, or `undefined`
 *   to let it through; `changes` says whether it changes anything (it then
 *   needs a JSON body and a valid page token).
 * - `pageToken()`: a fresh token for one served page.
 * - `tokenHeader`: the header a page sends its token in.
 *
 * @category models
 * @since 0.3.0
 */
export interface HttpDoor {
  readonly refusal: (request: Request, changes: boolean) => Refusal | undefined
  readonly pageToken: () => string
  readonly tokenHeader: string
}

/**
 * What {@link make} takes: the listener's `host` (its bound address or name)
 * and `port`; `allowedHosts` (as a `Host` header says them: name, and port
 * unless it is the scheme's default) and `allowedOrigins`
 * (`scheme://host[:port]`) that the server also answers; `tokenHeader`, the
 * header a page sends its token in (default `"x-page-token"`).
 *
 * @category models
 * @since 0.3.0
 */
export interface Options {
  readonly host: string
  readonly port: number
  readonly allowedHosts?: ReadonlyArray<string> | undefined
  readonly allowedOrigins?: ReadonlyArray<string> | undefined
  readonly tokenHeader?: string | undefined
}

const loopbackNames = ["127.0.0.1", "localhost", "[::1]"]

const shown = (address: string): string => (address.includes(":") ? `[${address.split("%")[0]}]` : address)

// node:os and node:crypto are loaded by the first door made, not when the package is imported.
const namesOf = (host: string): ReadonlyArray<string> => {
  if (host === "localhost" || host === "::1" || host.startsWith("127."))
    return [...new Set([...loopbackNames, shown(host)])]
  if (host !== "0.0.0.0" && host !== "::") return [shown(host)]
  const interfaces = process.getBuiltinModule("node:os").networkInterfaces()
  const addresses = Object.values(interfaces).flatMap((entries) => entries ?? [])
  return [...new Set([...loopbackNames, ...addresses.map((entry) => shown(entry.address))])]
}

/**
 * The door of a server listening on `host:port` (see the module doc).
 *
 * @category constructors
 * @since 0.3.0
 */
export const make = (options: Options): HttpDoor => {
  const crypto = process.getBuiltinModule("node:crypto")
  const tokenHeader = (options.tokenHeader ?? "x-page-token").toLowerCase()
  const own = namesOf(options.host).map((name) => `${name}:${options.port}`)
  const hosts = new Set([...own, ...(options.allowedHosts ?? []).map((host) => host.toLowerCase())])
  const origins = new Set([
    ...own.map((host) => `http://${host}`),
    ...(options.allowedOrigins ?? []).map((origin) => origin.toLowerCase().replace(/\/+$/, ""))
  ])
  const key = crypto.randomBytes(32)
  const hmac = (nonce: string): Buffer => crypto.createHmac("sha256", key).update(nonce).digest()

  const validToken = (token: string | undefined): boolean => {
    const [nonce, mac, ...rest] = (token ?? "").split(".")
    if (nonce === undefined || mac === undefined || rest.length > 0 || nonce.length !== 22) return false
    const given = Buffer.from(mac, "base64url")
    const expected = hmac(nonce)
    return given.length === expected.length && crypto.timingSafeEqual(given, expected)
  }

  return {
    tokenHeader,
    refusal: ({ headers }, changes) => {
      const host = headers.host
      if (host === undefined || !hosts.has(host.toLowerCase()))
        return { status: 403, reason: "this Host is not served" }
      const origin = headers.origin
      if (origin !== undefined && !origins.has(origin.toLowerCase())) {
        return { status: 403, reason: "requests from this Origin are not served" }
      }
      if (!changes) return undefined
      const type = (headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase()
      if (type !== "application/json") return { status: 415, reason: "the body must be application/json" }
      if (!validToken(headers[tokenHeader])) return { status: 403, reason: "the page token is missing or invalid" }
      return undefined
    },
    pageToken: () => {
      const nonce = crypto.randomBytes(16).toString("base64url")
      return `${nonce}.${hmac(nonce).toString("base64url")}`
    }
  }
}
