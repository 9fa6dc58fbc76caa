/**
 * Streamable HTTP with sessions: an `initialize` POST without a session id
 * opens a session (its own SDK server and transport, the id in
 * `mcp-session-id`); every later POST, the GET stream and DELETE of that
 * session go to its transport, so a server→client request (elicitation,
 * sampling) and its answer meet in one place, and a session keeps its log
 * level and subscriptions. An unknown session id is 404 (the client starts
 * over), a request without one that is not an `initialize` POST is 400.
 * Live sessions are capped, in all (503 beyond) and per client address (429
 * beyond), and a session that asks for nothing but pings for longer than
 * its idle timeout is closed. Host and Origin are checked before anything
 * else.
 */
import { randomUUID } from "node:crypto"
import type { IncomingMessage, ServerResponse } from "node:http"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import * as Origin from "../origin.ts"
import type * as Server from "./server.ts"

/** One live session: the client address that opened it, and when it last asked for something. */
interface Live {
  readonly session: Server.Session
  readonly transport: StreamableHTTPServerTransport
  readonly client: string
  lastSeen: number
}

/** The most bytes of one POST body read (the MCP SDK's own limit). */
const maxBodyBytes = 4 * 1024 * 1024

/** Reads a POST body whole, at most {@link maxBodyBytes}; `undefined` past it. */
const readBody = (request: IncomingMessage): Promise<string | undefined> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    let size = 0
    request.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size > maxBodyBytes) {
        resolve(undefined)
        request.destroy()
        return
      }
      chunks.push(chunk)
    })
    request.on("error", reject)
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
  })

/** Whether a JSON-RPC body asks for something: any message but `ping` (and answers to the server's requests). */
const asks = (body: unknown): boolean =>
  (Array.isArray(body) ? body : [body]).some(
    (message) =>
      typeof message === "object" &&
      message !== null &&
      typeof (message as { readonly method?: unknown }).method === "string" &&
      (message as { readonly method: string }).method !== "ping"
  )

/** Who a request comes from, for the cap of sessions a client may hold: its address. */
const clientOf = (request: IncomingMessage): string => request.socket.remoteAddress ?? "unknown"

/** The sessions of one listener. */
export interface Sessions {
  readonly live: Map<string, Live>
  readonly handle: (request: IncomingMessage, response: ServerResponse) => void
  /** Closes sessions idle for longer than `idleMs`. */
  readonly sweep: (now: number) => void
  readonly closeAll: () => Promise<void>
}

const jsonError = (response: ServerResponse, status: number, message: string, headers?: Record<string, string>) =>
  response
    .writeHead(status, { "content-type": "application/json", ...headers })
    .end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }))

const closeLive = (entry: Live): Promise<void> =>
  Promise.allSettled([entry.transport.close(), entry.session.server.close()]).then(() => undefined)

/** Routes the requests of one listener to its sessions. */
export const make = (options: {
  readonly path: string
  readonly allowed: () => Origin.Allowed
  readonly open: () => Server.Session
  readonly maxSessions: number
  readonly maxSessionsPerClient: number
  readonly idleMs: number
}): Sessions => {
  const live = new Map<string, Live>()
  const handle = (request: IncomingMessage, response: ServerResponse) => {
    const allowed = options.allowed()
    const refused = Origin.refusal(allowed, request.headers.host, request.headers.origin)
    if (refused !== undefined) return jsonError(response, 403, `Forbidden: ${refused}.`)
    const pathname = new URL(request.url ?? "/", "http://localhost").pathname
    if (pathname !== options.path) {
      response.writeHead(404, { "content-type": "text/plain" }).end("Not found")
      return
    }
    const id = request.headers["mcp-session-id"]
    if (typeof id === "string") {
      const entry = live.get(id)
      if (entry === undefined) return jsonError(response, 404, "Session not found: initialize a new session.")
      if (request.method !== "POST") {
        void entry.transport.handleRequest(request, response).catch(() => fail(response))
        return
      }
      // Only a request that asks for something keeps a session alive: pings alone let it go idle.
      void readBody(request)
        .then((text): Promise<void> | undefined => {
          if (text === undefined) {
            jsonError(response, 413, `Payload too large (at most ${maxBodyBytes} bytes).`)
            return undefined
          }
          let body: unknown
          try {
            body = JSON.parse(text)
          } catch {
            response
              .writeHead(400, { "content-type": "application/json" })
              .end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32700, message: "Parse error" }, id: null }))
            return undefined
          }
          if (asks(body)) entry.lastSeen = Date.now()
          return entry.transport.handleRequest(request, response, body)
        })
        .catch(() => fail(response))
      return
    }
    if (request.method !== "POST") {
      return jsonError(response, 400, "Bad Request: no valid session id; send initialize first.", { allow: "POST" })
    }
    if (live.size >= options.maxSessions) {
      return jsonError(response, 503, `Too many sessions (at most ${options.maxSessions}); try again later.`)
    }
    const client = clientOf(request)
    let held = 0
    for (const entry of live.values()) if (entry.client === client) held++
    if (held >= options.maxSessionsPerClient) {
      return jsonError(
        response,
        429,
        `Too many sessions from this client (at most ${options.maxSessionsPerClient}); close one or try again later.`
      )
    }
    const session = options.open()
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sessionId) => {
        live.set(sessionId, { session, transport, client, lastSeen: Date.now() })
      },
      onsessionclosed: (sessionId) => {
        live.delete(sessionId)
      },
      enableDnsRebindingProtection: true,
      allowedHosts: [...allowed.hosts],
      allowedOrigins: [...allowed.origins]
    })
    transport.onclose = () => {
      if (transport.sessionId !== undefined) live.delete(transport.sessionId)
    }
    // A POST that did not open a session (not an initialize) leaves nothing behind.
    response.on("close", () => {
      if (transport.sessionId === undefined || !live.has(transport.sessionId)) {
        void transport.close()
        void session.server.close()
      }
    })
    session.server
      .connect(transport)
      .then(() => transport.handleRequest(request, response))
      .catch(() => fail(response))
  }
  const fail = (response: ServerResponse) => {
    if (!response.headersSent) jsonError(response, 500, "Internal server error.")
  }
  return {
    live,
    handle,
    sweep: (now) => {
      for (const [id, entry] of live) {
        if (now - entry.lastSeen > options.idleMs) {
          live.delete(id)
          void closeLive(entry)
        }
      }
    },
    closeAll: () => {
      const entries = [...live.values()]
      live.clear()
      return Promise.all(entries.map(closeLive)).then(() => undefined)
    }
  }
}
