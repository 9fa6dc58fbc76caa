/**
 * One connection to an MCP server: the transport opened, one SDK `Client`
 * connected over it (bounded by the connect timeout) and watched for what
 * the server sends unasked, closed — stopping a stdio server — when the
 * scope closes. The connection lists and calls the server's tools.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import type { Action } from "@rolecraft/core"
import * as Core from "@rolecraft/core/McpClient"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type * as McpTransport from "../McpTransport.ts"
import { toError } from "./failure.ts"
import { hide, secretsOf } from "./redact.ts"
import { watch } from "./replies.ts"
import type { Session } from "./session.ts"
import { callTool, listTools } from "./tools.ts"

/** What every connection of one client shares: see `McpClientSdk.Options`. */
export interface Settings {
  readonly clientInfo: { readonly name: string; readonly version: string }
  readonly connectTimeoutMs: number
  readonly listTimeoutMs: number
  readonly maxListPages: number
  readonly open: McpTransport.Open
}

/** Opens a connection to `server` (see the module doc). */
export const connect = (
  settings: Settings,
  server: Action.McpServer,
  connectOptions: Core.ConnectOptions
): Effect.Effect<Core.Connection, Core.McpClientError, Scope.Scope> =>
  Effect.gen(function* () {
    const opened = yield* settings.open(server, connectOptions)
    const secrets = secretsOf(connectOptions)
    const context = yield* Effect.context<never>()
    const session: Session = {
      client: new Client(settings.clientInfo, { capabilities: {} }),
      opened,
      state: { open: true, generation: 0, tools: undefined },
      pending: new Set(),
      secrets,
      who: `MCP server ${connectOptions.name} (${Core.describeServer(server)})`,
      log: (level, message) => {
        const text = hide(message, secrets)
        Effect.runForkWith(context)(level === "Warn" ? Effect.logWarning(text) : Effect.logDebug(text))
      },
      listTimeoutMs: settings.listTimeoutMs,
      maxListPages: settings.maxListPages,
      onListingStopped: connectOptions.onListingStopped
    }
    const { client, state } = session
    watch(session)

    yield* Effect.addFinalizer(() =>
      Effect.tryPromise(() => client.close()).pipe(
        Effect.ignore,
        Effect.andThen(Effect.sync(() => (state.open = false)))
      )
    )
    yield* Effect.tryPromise({
      try: (signal) => client.connect(opened.transport, { signal, timeout: settings.connectTimeoutMs }),
      catch: (error) => error
    }).pipe(Effect.catch((error) => Effect.flatMap(toError(session, error, "connect"), Effect.fail)))

    const version = client.getServerVersion()
    const instructions = client.getInstructions()
    const info: Core.ServerInfo = {
      name: version?.name ?? Core.describeServer(server),
      version: version?.version ?? "",
      ...(instructions === undefined ? {} : { instructions })
    }

    return {
      server: info,
      isOpen: () => state.open,
      listTools: listTools(session),
      callTool: callTool(session)
    } satisfies Core.Connection
  })
