/**
 * Which `Host` and `Origin` values an HTTP listener answers: the names that
 * reach it, with its port — for a loopback listener `127.0.0.1`, `localhost`
 * and `[::1]`; for one on every interface (`0.0.0.0`, `::`) those and each
 * interface's address; else its own address — and the values a server adds.
 * A request with another `Host`, or with an `Origin` (a browser's) that is
 * not one of them, is refused before anything reads it: a page on another
 * origin, or on a name rebound to this address, cannot drive the server.
 */
import type { AddressInfo } from "node:net"
import { networkInterfaces } from "node:os"

/** The accepted `Host` values (name and port, lower case) and `Origin` values (`http://` and a host). */
export interface Allowed {
  readonly hosts: ReadonlySet<string>
  readonly origins: ReadonlySet<string>
}

const loopbackNames = ["127.0.0.1", "localhost", "[::1]"]

const isLoopback = (address: string): boolean =>
  address === "::1" || address.startsWith("127.") || address === "localhost"

const isUnspecified = (address: string): boolean => address === "0.0.0.0" || address === "::"

const shown = (address: string): string => (address.includes(":") ? `[${address.split("%")[0]}]` : address)

/** The names that reach a listener on `address`, without the port. */
const namesOf = (address: string): ReadonlyArray<string> => {
  if (isLoopback(address)) return [...new Set([...loopbackNames, shown(address)])]
  if (!isUnspecified(address)) return [shown(address)]
  const interfaces = Object.values(networkInterfaces()).flatMap((entries) => entries ?? [])
  return [...new Set([...loopbackNames, ...interfaces.map((entry) => shown(entry.address))])]
}

/**
 * What a listener at `address` accepts: the names that reach it with its
 * port, and `extra` hosts (as a `Host` header says them: name, and port
 * unless it is the scheme's default) and origins (`scheme://host[:port]`).
 */
export const allowedFor = (
  address: AddressInfo,
  extra: { readonly hosts?: ReadonlyArray<string> | undefined; readonly origins?: ReadonlyArray<string> | undefined }
): Allowed => {
  const hosts = namesOf(address.address).map((name) => `${name}:${address.port}`)
  const extraHosts = (extra.hosts ?? []).map((host) => host.toLowerCase())
  const extraOrigins = (extra.origins ?? []).map((origin) => origin.toLowerCase().replace(/\/+$/, ""))
  return {
    hosts: new Set([...hosts, ...extraHosts]),
    origins: new Set([...hosts.map((host) => `http://${host}`), ...extraOrigins])
  }
}

// A header quoted back, at most 100 characters of it.
const quoted = (value: string): string => JSON.stringify(value.length > 100 ? `${value.slice(0, 99)}…` : value)

/**
 * Why a request with these headers is refused (`undefined` when it is
 * accepted): no `Host`, a `Host` not allowed, or an `Origin` not allowed (a
 * request without `Origin` comes from no browser page, and is judged by its
 * `Host` alone).
 */
export const refusal = (allowed: Allowed, host: string | undefined, origin: string | undefined): string | undefined => {
  if (host === undefined || host === "") return "the request has no Host header"
  if (!allowed.hosts.has(host.toLowerCase())) return `the Host ${quoted(host)} is not allowed`
  if (origin !== undefined && !allowed.origins.has(origin.toLowerCase())) {
    return `the Origin ${quoted(origin)} is not allowed`
  }
  return undefined
}
