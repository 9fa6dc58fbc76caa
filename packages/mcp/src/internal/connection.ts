/**
 * One connection to an MCP server: the transport opened, one SDK `Client`
 * connected over it (bounded by the connect timeout) and watched for what
 * the server sends unasked, closed — stopping a stdio server — when the
 * scope closes. The connection lists and calls the server's tools.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import type { Action } from "@rolecraft/core"
import { LanguageModel } from "@rolecraft/core/LanguageModel"
import * as Core from "@rolecraft/core/McpClient"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import type * as McpElicitation from "../McpElicitation.ts"
import type * as McpOAuth from "../McpOAuth.ts"
import * as McpSampling from "../McpSampling.ts"
import * as McpTransport from "../McpTransport.ts"
import { connectFailure, toError } from "./failure.ts"
import * as OAuthFetch from "./oauth/fetch.ts"
import * as OAuthProvider from "./oauth/provider.ts"
import * as Requests from "./requests.ts"
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
  /** How the client authorizes with an HTTP server that asks (none: a 401 fails the call). */
  readonly oauth?:
    | {
        readonly options: (url: string) => McpOAuth.Options | undefined
        readonly context: Context.Context<OAuthProvider.Services>
        /** The authorizations in flight, shared by every connection of the client. */
        readonly flights: OAuthFetch.Flights
      }
    | undefined
  /** Who answers a server's elicitation requests (none: they are declined). */
  readonly elicitation?: McpElicitation.McpElicitation["Service"] | undefined
  /** Who answers a server's sampling requests (none: the model in context at connect, or no sampling). */
  readonly sampling?: Requests.Answers["sampling"]
  /** The roots the client lists (none: roots are not declared). */
  readonly roots?: Requests.Answers["roots"]
}

/** The default attempts of `McpOAuth.Options.maxAttempts`. */
const defaultMaxAttempts = 3

/** Opens the transport: over HTTP with OAuth when the client has it and the default opener is used. */
const open = (
  settings: Settings,
  server: Action.McpServer,
  connectOptions: Core.ConnectOptions,
  onSecret: (secret: string) => void
) => {
  const oauth = settings.oauth
  const options = typeof server === "string" && oauth !== undefined ? oauth.options(server) : undefined
  if (
    typeof server !== "string" ||
    oauth === undefined ||
    options === undefined ||
    settings.open !== McpTransport.openDefault
  ) {
    return settings.open(server, connectOptions)
  }
  const provider = OAuthProvider.make(options, server, oauth.context, onSecret)
  const attempts = Math.max(1, Math.floor(options.maxAttempts ?? defaultMaxAttempts))
  return McpTransport.openHttp(server, connectOptions, {
    wrapFetch: (next) =>
      OAuthFetch.make(provider, server, next, fetch, attempts, oauth.flights.of(server), {
        resourceMetadataOrigins: options.discovery?.resourceMetadataOrigins ?? [],
        endpointOrigins: options.discovery?.endpointOrigins ?? []
      })
  })
}

/** Opens a connection to `server` (see the module doc). */
export const connect = (
  settings: Settings,
  server: Action.McpServer,
  connectOptions: Core.ConnectOptions,
  onObtained?: (secret: string) => void
): Effect.Effect<Core.Connection, Core.McpClientError, Scope.Scope> =>
  Effect.gen(function* () {
    // The connection's secrets: its credential's value, and every OAuth token and client secret it meets.
    const secrets: Array<string> = [...secretsOf(connectOptions)]
    const onSecret = (secret: string) => {
      if (secret === "" || secrets.includes(secret)) return
      secrets.push(secret)
      onObtained?.(secret)
    }
    const opened = yield* open(settings, server, connectOptions, onSecret)
    // Sampling: the user's service, else the model in context (the agent's), else none.
    const model = settings.sampling === undefined ? yield* Effect.serviceOption(LanguageModel) : Option.none()
    const answers: Requests.Answers = {
      roots: settings.roots,
      sampling: settings.sampling ?? (Option.isSome(model) ? McpSampling.fromLanguageModel(model.value) : undefined)
    }
    const context = yield* Effect.context<never>()
    const session: Session = {
      client: new Client(settings.clientInfo, { capabilities: Requests.capabilities(answers) }),
      opened,
      state: { open: true, generation: 0, tools: undefined },
      pending: new Set(),
      secrets,
      who: `MCP server ${connectOptions.name} (${Core.describeServer(server)})`,
      log: (level, message) => {
        const text = hide(message, secrets)
        Effect.runForkWith(context)(level === "Warn" ? Effect.logWarning(text) : Effect.logDebug(text))
      },
      notify: (notification) => {
        const report = connectOptions.onNotification
        if (report !== undefined) Effect.runForkWith(context)(report(notification))
      },
      listTimeoutMs: settings.listTimeoutMs,
      maxListPages: settings.maxListPages,
      onListingStopped: connectOptions.onListingStopped
    }
    const { client, state } = session
    watch(session)
    Requests.answer(client, connectOptions.name, settings.elicitation, (message) => session.log("Debug", message))
    Requests.listen(session)
    Requests.serve(client, connectOptions.name, answers)

    yield* Effect.addFinalizer(() =>
      Effect.tryPromise(() => client.close()).pipe(
        Effect.ignore,
        Effect.andThen(Effect.sync(() => (state.open = false)))
      )
    )
    yield* Effect.tryPromise({
      try: (signal) => client.connect(opened.transport, { signal, timeout: settings.connectTimeoutMs }),
      catch: (error) => error
    }).pipe(
      Effect.catch((error) =>
        Effect.gen(function* () {
          const failure = connectFailure(
            session,
            yield* toError(session, error, "connect"),
            error,
            settings.connectTimeoutMs
          )
          // A server that did not start is ended, its whole process tree, before its failure is told.
          yield* Effect.promise(() => opened.transport.close().catch(() => undefined))
          return yield* Effect.fail(failure)
        })
      )
    )

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
