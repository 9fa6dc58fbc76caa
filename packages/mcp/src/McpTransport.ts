/**
 * How `McpClientSdk` reaches a server: the SDK's
 * `StdioClientTransport` for a command, its `StreamableHTTPClientTransport`
 * for a URL, each with what a connection needs to report failures well — a
 * stdio server's exit status and stderr tail, its non-JSON stdout lines
 * (banners), the end of the last HTTP payload.
 *
 * @example
 * ```ts
 * import { McpClientSdk, McpTransport } from "@rolecraft/mcp"
 * import { Effect } from "effect"
 *
 * // the default transports, with a log line per connection
 * const layer = McpClientSdk.layer({
 *   open: (server, options) =>
 *     McpTransport.openDefault(server, options).pipe(Effect.tap((opened) => Effect.logInfo(`MCP over ${opened.kind}`)))
 * })
 * ```
 *
 * @since 0.1.0
 */
import type { ChildProcess } from "node:child_process"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { deserializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js"
import type { FetchLike, Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import type { Action } from "@rolecraft/core"
import * as Core from "@rolecraft/core/McpClient"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import * as Environment from "./internal/environment.ts"
import * as ProcessTree from "./internal/processTree.ts"
import { hide, secretsOf } from "./internal/redact.ts"

/**
 * What is known of a server process when its connection fails: exit code or
 * signal, and the tail of its stderr.
 *
 * @category models
 * @since 0.1.0
 */
export interface Diagnostics {
  readonly exitCode?: number | undefined
  readonly signal?: string | undefined
  readonly stderr?: string | undefined
}

/**
 * A transport ready to connect, with what the connection needs to know of it.
 *
 * - `kind`: `"stdio"` (non-JSON lines on stdout are banners to skip),
 *   `"http"` (payload failures fail pending calls; 404 means an expired
 *   session), or `"memory"`.
 * - `diagnostics()`: exit status and stderr tail, read when it fails.
 * - `received()`: the end of the last payload received (HTTP), for snippets.
 * - `onNoise(listener)`: where lines that are not JSON-RPC go (stdio
 *   banners); the connection logs them.
 *
 * @category models
 * @since 0.1.0
 */
export interface Opened {
  readonly transport: Transport
  readonly kind: "stdio" | "http" | "memory"
  readonly diagnostics: () => Diagnostics
  readonly received: () => string | undefined
  readonly onNoise?: ((listener: (line: string) => void) => void) | undefined
}

/**
 * Opens a transport to a server (not yet started: the SDK `Client` starts it
 * when it connects). Finalizers added to the `Scope` run when the connection
 * closes.
 *
 * @category models
 * @since 0.1.0
 */
export type Open = (
  server: Action.McpServer,
  options: Core.ConnectOptions
) => Effect.Effect<Opened, Core.McpClientError, Scope.Scope>

const stderrLimit = 2_048
const maxMessageBytes = 10 * 1024 * 1024
const snippetLimit = 500

const connectError = (message: string, cause?: unknown) =>
  new Core.McpClientError({ reason: "Connect", sent: false, message, ...(cause === undefined ? {} : { cause }) })

/**
 * Splits a stdio server's stdout into JSON-RPC messages as the SDK's own
 * `ReadBuffer` does (newline-delimited, 10 MB at most per message), except
 * that a line that is not a JSON-RPC message is handed to `onNoise` and
 * skipped instead of being reported as a transport error (a banner printed
 * by a server's launcher must not break the connection).
 */
const lineReader = (onNoise: (line: string) => void) => {
  let buffer: Buffer | undefined
  return {
    append(chunk: Buffer) {
      const size = (buffer?.length ?? 0) + chunk.length
      if (size > maxMessageBytes) {
        buffer = undefined
        throw new Error(`ReadBuffer exceeded maximum size of ${maxMessageBytes} bytes`)
      }
      buffer = buffer === undefined ? chunk : Buffer.concat([buffer, chunk])
    },
    readMessage(): JSONRPCMessage | null {
      while (buffer !== undefined) {
        const index = buffer.indexOf("\n")
        if (index === -1) return null
        const line = buffer.toString("utf8", 0, index).replace(/\r$/, "")
        buffer = buffer.subarray(index + 1)
        const message = Result.try(() => deserializeMessage(line))
        if (Result.isSuccess(message)) return message.success
        if (line.trim() !== "") onNoise(line)
      }
      return null
    },
    clear() {
      buffer = undefined
    }
  }
}

/**
 * Spawns a stdio server with the SDK's `StdioClientTransport`: the command
 * with its arguments, working directory and environment; stderr is piped and
 * its last ~2 KB kept.
 *
 * The environment: what the server needs of this process's to run and to
 * reach the network — `PATH`, `HOME` and the other places things are, the
 * locale (`LANG`, `LC_*`, `TZ`), the certificate authorities
 * (`NODE_EXTRA_CA_CERTS`, `SSL_CERT_FILE`, …) and the proxies (`HTTPS_PROXY`
 * and the others, either case, without any `user:password@`; `NO_PROXY`) —
 * then the server's `env`, then the credential under its variable name. A
 * variable whose name says it holds a credential (`TOKEN`, `SECRET`,
 * `PASSWORD`, `API_KEY`, …) and npm's `npm_config_*` settings are never
 * inherited: a server that needs one is given it in its `env`.
 *
 * Closing the transport ends the server's whole process tree (a launcher
 * such as `npx` and the server it started): a server that answered is asked
 * to stop first (stdin closed, then SIGTERM, then SIGKILL, and SIGTERM for
 * what it leaves running), one that never answered is ended at once
 * (SIGKILL).
 *
 * @category constructors
 * @since 0.1.0
 */
export const openStdio = (
  server: Exclude<Action.McpServer, string>,
  options: Core.ConnectOptions
): Effect.Effect<Opened, Core.McpClientError> =>
  Effect.sync(() => {
    const secrets = secretsOf(options)
    const credential = options.credential
    const transport = new StdioClientTransport({
      command: server.command,
      args: [...(server.args ?? [])],
      env: {
        ...Environment.inherited(process.env),
        ...server.env,
        ...(credential === undefined ? {} : { [credential.variable]: Redacted.value(credential.value) })
      },
      ...(server.cwd === undefined ? {} : { cwd: server.cwd }),
      stderr: "pipe"
    })
    let stderr = ""
    transport.stderr?.on("data", (chunk: Buffer | string) => {
      // The tail, never starting with half a surrogate pair.
      stderr = (stderr + chunk.toString()).slice(-stderrLimit).replace(/^[\uDC00-\uDFFF]/, "")
    })
    let exit: { readonly code: number | null; readonly signal: NodeJS.Signals | null } | undefined
    let noise: (line: string) => void = () => {}
    // The one boundary with the SDK's internals. The transport keeps private
    // its child process, whose exit status a crash report needs, and its line
    // reader, which reports a banner line as an error without the line.
    const internals = transport as unknown as { _readBuffer: unknown; readonly _process?: ChildProcess }
    // Whether the server ever sent a message: one that never answered did not start.
    let answered = false
    const reader = lineReader((line) => noise(line))
    internals._readBuffer = {
      ...reader,
      readMessage: () => {
        const message = reader.readMessage()
        if (message !== null) answered = true
        return message
      }
    }
    const start = transport.start.bind(transport)
    transport.start = () =>
      start().then(() => {
        internals._process?.once("exit", (code, signal) => {
          exit = { code, signal }
        })
      })
    // Closing ends the server's whole process tree (a launcher such as npx leaves its server running when only
    // it is stopped), read before anything is stopped. A server that answered is first asked to stop as the SDK
    // does (stdin closed, then SIGTERM, then SIGKILL); one that never answered is ended at once.
    const close = transport.close.bind(transport)
    let closing: Promise<void> | undefined
    transport.close = () => {
      closing ??= (() => {
        const root = transport.pid
        const family = root === null || !answered ? [] : ProcessTree.tree(root)
        if (answered) return close().then(() => ProcessTree.end(family.slice(1)))
        if (root !== null) ProcessTree.kill(root)
        return close()
      })()
      return closing
    }
    return {
      transport,
      kind: "stdio",
      diagnostics: () => ({
        ...(exit?.code === null || exit?.code === undefined ? {} : { exitCode: exit.code }),
        ...(exit?.signal === null || exit?.signal === undefined ? {} : { signal: exit.signal }),
        stderr: hide(stderr, secrets)
      }),
      received: () => undefined,
      onNoise: (listener) => {
        noise = listener
      }
    } satisfies Opened
  })

/**
 * Opens a streamable HTTP server with the SDK's
 * `StreamableHTTPClientTransport`; the credential goes in
 * `Authorization: Bearer <value>`. Responses pass through a recorder that
 * keeps the end of the last payload for error snippets. `extra.wrapFetch`
 * wraps the fetch the transport uses (`McpClientSdk.layerOAuth` adds
 * authorization there).
 *
 * Fails with `Connect` when the URL cannot be parsed.
 *
 * @category constructors
 * @since 0.1.0
 */
export const openHttp = (
  url: string,
  options: Core.ConnectOptions,
  extra?: { readonly wrapFetch?: ((fetch: FetchLike) => FetchLike) | undefined }
): Effect.Effect<Opened, Core.McpClientError> =>
  Effect.suspend(() => {
    if (!URL.canParse(url)) return Effect.fail(connectError(`not a valid URL: ${url}`))
    const secrets = secretsOf(options)
    let received: string | undefined
    const record = (response: Response): Response => {
      if (response.body === null) return response
      const decoder = new TextDecoder()
      let seen = ""
      const body = response.body.pipeThrough(
        new TransformStream<Uint8Array, Uint8Array>({
          transform(chunk, controller) {
            seen = (seen + decoder.decode(chunk, { stream: true })).slice(-snippetLimit).replace(/^[\uDC00-\uDFFF]/, "")
            received = seen
            controller.enqueue(chunk)
          }
        })
      )
      return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers })
    }
    const recording: FetchLike = (input, init) => fetch(input, init).then(record)
    const credential = options.credential
    const transport = new StreamableHTTPClientTransport(new URL(url), {
      fetch: extra?.wrapFetch === undefined ? recording : extra.wrapFetch(recording),
      ...(credential === undefined
        ? {}
        : { requestInit: { headers: { Authorization: `Bearer ${Redacted.value(credential.value)}` } } })
    })
    return Effect.succeed<Opened>({
      transport,
      kind: "http",
      diagnostics: () => ({}),
      received: () => (received === undefined ? undefined : hide(received, secrets))
    })
  })

/**
 * The default {@link Open}: {@link openHttp} for a URL, {@link openStdio}
 * for a command.
 *
 * @category constructors
 * @since 0.1.0
 */
export const openDefault: Open = (server, options) =>
  typeof server === "string" ? openHttp(server, options) : openStdio(server, options)

// Loose result schemas: the SDK's own reject a whole result or list for one
// block or tool they do not know; here each is judged on its own.
