/**
 * The web chat's door: what a request must show before the server does any
 * work for it. A page on another origin can make the browser send requests
 * to the chat — a `text/plain` POST needs no permission — and a page on a
 * name the attacker rebinds to 127.0.0.1 is, to the browser, on the chat's
 * own origin. So every request must carry:
 *
 * - a `Host` the listener answers to: the names that reach it, with its port
 *   (on a loopback address `127.0.0.1`, `localhost` and `[::1]`; on `0.0.0.0`
 *   or `::` also each interface's address; else the address itself), and
 *   those given in `allowedHosts` (e.g. a proxy's name);
 * - when a browser says where the request comes from (`Origin`), `http://`
 *   and one of those hosts, or an origin given in `allowedOrigins`;
 * - for a request that changes anything (a POST): a JSON content type (no
 *   simple cross-origin request) and the per-page token the page was served
 *   with (`x-chat-token`): a fresh random nonce and its HMAC-SHA256 under a
 *   key made when the server starts, so tokens cannot be forged and the
 *   server keeps none of them.
 *
 * Anything else is answered 403 (415 for another content type) before the
 * body is read.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto"
import { networkInterfaces } from "node:os"

/** Who may call the chat, and how to mint and check page tokens. */
export interface Door {
  /** Why a request is refused, with its status, or `undefined` to let it through. */
  readonly refusal: (
    request: {
      readonly method: string
      readonly headers: Readonly<Record<string, string | undefined>>
    },
    changes: boolean
  ) => { readonly status: 403 | 415; readonly reason: string } | undefined
  /** A fresh token for one served page. */
  readonly pageToken: () => string
}

/** The header a page sends its token in. */
export const tokenHeader = "x-chat-token"

const loopbackNames = ["127.0.0.1", "localhost", "[::1]"]

const shown = (address: string): string => (address.includes(":") ? `[${address.split("%")[0]}]` : address)

const namesOf = (host: string): ReadonlyArray<string> => {
  if (host === "localhost" || host === "::1" || host.startsWith("127."))
    return [...new Set([...loopbackNames, shown(host)])]
  if (host !== "0.0.0.0" && host !== "::") return [shown(host)]
  const addresses = Object.values(networkInterfaces()).flatMap((entries) => entries ?? [])
  return [...new Set([...loopbackNames, ...addresses.map((entry) => shown(entry.address))])]
}

const hmac = (key: Buffer, nonce: string): Buffer => createHmac("sha256", key).update(nonce).digest()

/**
 * The door of a chat listening on `host:port`; `allowedHosts` and
 * `allowedOrigins` widen who may call it.
 */
export const make = (options: {
  readonly host: string
  readonly port: number
  readonly allowedHosts?: ReadonlyArray<string> | undefined
  readonly allowedOrigins?: ReadonlyArray<string> | undefined
}): Door => {
  const own = namesOf(options.host).map((name) => `${name}:${options.port}`)
  const hosts = new Set([...own, ...(options.allowedHosts ?? []).map((host) => host.toLowerCase())])
  const origins = new Set([
    ...own.map((host) => `http://${host}`),
    ...(options.allowedOrigins ?? []).map((origin) => origin.toLowerCase().replace(/\/+$/, ""))
  ])
  const key = randomBytes(32)

  const validToken = (token: string | undefined): boolean => {
    const [nonce, mac, ...rest] = (token ?? "").split(".")
    if (nonce === undefined || mac === undefined || rest.length > 0 || nonce.length !== 22) return false
    const given = Buffer.from(mac, "base64url")
    const expected = hmac(key, nonce)
    return given.length === expected.length && timingSafeEqual(given, expected)
  }

  return {
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
      const nonce = randomBytes(16).toString("base64url")
      return `${nonce}.${hmac(key, nonce).toString("base64url")}`
    }
  }
}
