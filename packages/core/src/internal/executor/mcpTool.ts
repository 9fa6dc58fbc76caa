/**
 * The mcpTool executor: one direct call `{ tool, arguments }` of an
 * MCP server's tool, over the agent's shared connection to that server, with
 * every failure turned into one of the nine categories.
 *
 * The attempt: read the `McpClient` service (missing → VALIDATION) and the
 * credential (`apiKeyEnv` through Effect `Config`; unset → VALIDATION naming
 * it); get the connection (opened lazily, shared, reconnected after a crash);
 * find the tool (allow-list, then the cached list, refreshed once before
 * answering NOT_FOUND); convert `arguments` against its `inputSchema`
 *; call it with the attempt's timeout passed to the
 * client, so it is cancelled on the server when it passes or when the attempt
 * is interrupted; turn the result into a value (`McpContent.toValue`).
 * Every error leaves through `scrub` with the credential.
 */
import type * as ConfigModule from "effect/Config"
import type * as FromJsonSchema from "../schema/fromJsonSchema.ts"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import * as Action from "../../Action.ts"
import {
  type ActionError,
  ActionNotFound,
  ExecutionFailure,
  Timeout,
  TransientFailure,
  ValidationError
} from "../../ActionError.ts"
import * as Conversion from "../schema/decode.ts"
import {
  type CallToolResult,
  type Connection,
  describeServer,
  McpClient,
  type McpClientError,
  serverKey,
  type ToolDefinition,
  type Server as McpClientServer
} from "../../McpClient.ts"
import type * as McpContent from "./mcpContent.ts"
import * as Role from "../../Role.ts"
import * as Tool from "../schema/tool.ts"
import type { BackingOff, Pool } from "./mcpPool.ts"
import * as Lazy from "../lazy.ts"
import * as Redact from "../redact.ts"
import * as TimeLimit from "../run/timeLimit.ts"

/**
 * The default timeout of one tool call when neither the action nor its
 * resilience policy sets one: 60 seconds, passed to the client explicitly.
 */
export const defaultTimeout: Duration.Duration = Duration.seconds(60)

/**
 * What the executor needs of an attempt (a subset of `Attempt`).
 */
export interface Call {
  readonly name: string
  readonly action: Action.McpTool<any, any>
  readonly args: Readonly<Record<string, unknown>>
  readonly agent: { readonly mcp: Pool }
}

type Credential = { readonly variable: string; readonly value: Redacted.Redacted<string> }

const clientIds = new WeakMap<object, number>()
let nextClientId = 0

/** Connections are per agent and per service instance (a test may swap layers between calls). */
const clientId = (client: object): number => {
  let id = clientIds.get(client)
  if (id === undefined) {
    id = nextClientId++
    clientIds.set(client, id)
  }
  return id
}

const notProvided = (name: string) =>
  new ValidationError({
    action: name,
    message: `${name}: McpClient not provided (provide McpClientSdk.layer from @rolecraft/mcp, or a test layer)`,
    issues: [{ path: "", message: "the McpClient service is not provided" }]
  })

// Only an action that names a credential reads the environment through Effect's Config.
const Config = Lazy.make((): Promise<typeof ConfigModule> => import("effect/Config"))
// The JSON Schema importer and the result reader are loaded by the first call.
const JsonSchemaImport = Lazy.make((): Promise<typeof FromJsonSchema> => import("../schema/fromJsonSchema.ts"))
const Content = Lazy.make((): Promise<typeof McpContent> => import("./mcpContent.ts"))

const readCredential = (
  name: string,
  variable: string | undefined
): Effect.Effect<Credential | undefined, ValidationError> =>
  variable === undefined
    ? Effect.succeed(undefined)
    : Config.use((Config) => Config.Redacted(variable)).pipe(
        Effect.mapError(
          () =>
            new ValidationError({
              action: name,
              message: `${name}: the credential variable ${variable} (apiKeyEnv) is not set`,
              issues: [{ path: "apiKeyEnv", message: `the variable ${variable} is not set` }]
            })
        ),
        Effect.flatMap((value) =>
          Redacted.value(value).length < Redact.minimumSecretLength
            ? Effect.fail(
                new ValidationError({
                  action: name,
                  message: `${name}: the credential variable ${variable} (apiKeyEnv) is shorter than ${Redact.minimumSecretLength} characters`,
                  issues: [
                    {
                      path: "apiKeyEnv",
                      message: `the value of ${variable} is shorter than ${Redact.minimumSecretLength} characters`
                    }
                  ]
                })
              )
            : Effect.succeed<Credential>({ variable, value })
        )
      )

const timeoutOf = (action: Action.McpTool<any, any>): Duration.Duration => {
  const input = action.policies.resilience?.attemptTimeout ?? action.timeout
  return input === undefined ? defaultTimeout : Duration.fromInputUnsafe(input)
}

// The allowed part of the last list seen per action: an unchanged list gives the same array, so the chat
// toolkit (which rebuilds only when a list changes) is not rebuilt every step for an allow-listed action.
const allowedLists = new WeakMap<
  Action.McpTool<any, any>,
  { readonly tools: ReadonlyArray<ToolDefinition>; readonly allowed: ReadonlyArray<ToolDefinition> }
>()

const allowed = (action: Action.McpTool<any, any>, tools: ReadonlyArray<ToolDefinition>) => {
  const allowList = action.tools
  if (allowList === undefined) return tools
  const last = allowedLists.get(action)
  if (last?.tools === tools) return last.allowed
  const kept = tools.filter((tool) => allowList.includes(tool.name))
  allowedLists.set(action, { tools, allowed: kept })
  return kept
}

const names = (tools: ReadonlyArray<ToolDefinition>) => tools.map((tool) => tool.name)

const tail = (text: string) => text.trim().split("\n").slice(-20).join("\n")

/** How a failure of the server or its transport reads: exit status and the tail of stderr. */
const diagnostics = (error: McpClientError): string => {
  const exit =
    error.exitCode !== undefined
      ? ` (exit code ${error.exitCode})`
      : error.signal !== undefined
        ? ` (killed by ${error.signal})`
        : ""
  const stderr = error.stderr === undefined || error.stderr.trim() === "" ? "" : `; stderr: ${tail(error.stderr)}`
  const snippet = error.snippet === undefined ? "" : `; received: ${error.snippet}`
  return `${error.message}${exit}${snippet}${stderr}`
}

/**
 * Maps a client failure to its category. `label` is `action` or
 * `action/tool`; `idempotent` allows retrying a failure whose outcome is
 * unknown (the request may have run on the server).
 */
export const toActionError = (
  name: string,
  label: string,
  error: McpClientError,
  options: { readonly idempotent: boolean; readonly timeout: Duration.Duration }
): ActionError => {
  const unknownOutcome = (status?: number) =>
    new TransientFailure({
      action: name,
      message: `${label}: ${diagnostics(error)}`,
      outcomeUnknown: error.sent,
      retryable: !error.sent || options.idempotent,
      ...(status === undefined ? {} : { status }),
      cause: error
    })
  switch (error.reason) {
    case "Connect":
    case "Closed":
    case "Protocol":
    case "SessionExpired":
      return unknownOutcome()
    case "Timeout":
      // The request was sent: whether the tool ran is unknown, so only an idempotent action may repeat it.
      return new Timeout({
        action: name,
        after: options.timeout,
        retryable: options.idempotent,
        message: `${label}: the MCP request timed out after ${Duration.format(options.timeout)} and was cancelled`,
        cause: error
      })
    case "Http": {
      const status = error.status ?? 0
      if (status === 429) {
        return new TransientFailure({ action: name, message: `${label}: ${error.message}`, status, cause: error })
      }
      if (status === 408 || status >= 500) return unknownOutcome(status)
      return new ExecutionFailure({
        action: name,
        message: `${label}: ${error.message}`,
        excerpt: error.message.slice(0, 1_000),
        ...(status === 0 ? {} : { status }),
        cause: error
      })
    }
    case "InvalidParams":
      return new ValidationError({
        action: name,
        message: `${label}: the MCP server refused the arguments: ${error.message}`,
        issues: [{ path: "arguments", message: error.message }],
        cause: error
      })
    case "MethodNotFound":
    case "Rpc":
      return new ExecutionFailure({
        action: name,
        message: `${label}: the MCP server answered with an error: ${error.message}`,
        excerpt: error.message.slice(0, 1_000),
        cause: error
      })
  }
}

const backingOff = (name: string, action: Action.McpTool<any, any>, failure: BackingOff) =>
  new TransientFailure({
    action: name,
    retryAfter: Duration.millis(failure.retryAfterMs),
    message:
      `${name}: not reconnecting to ${describeServer(action.server)} for another ${failure.retryAfterMs} ms ` +
      `after the last attempt failed: ${diagnostics(failure.error)}`,
    cause: failure.error
  })

/** What a call needs of its action, computed once per action value. */
interface Prepared {
  readonly serverKey: string
  readonly timeout: Duration.Duration
  readonly allowList: ReadonlySet<string> | undefined
}

const preparedByAction = new WeakMap<Action.McpTool<any, any>, Prepared>()

const prepare = (action: Action.McpTool<any, any>): Prepared => {
  let prepared = preparedByAction.get(action)
  if (prepared === undefined) {
    prepared = {
      serverKey: serverKey(action.server, action.apiKeyEnv),
      timeout: timeoutOf(action),
      allowList: action.tools === undefined ? undefined : new Set(action.tools)
    }
    preparedByAction.set(action, prepared)
  }
  return prepared
}

const connectionOf = (call: Call, client: McpClient["Service"], credential: Credential | undefined) => {
  const { name, action } = call
  const key = `${clientId(client)}|${prepare(action).serverKey}`
  const open = () => client.connect(action.server, { name, ...(credential === undefined ? {} : { credential }) })
  const get = Effect.mapError(call.agent.mcp.get(key, open), (error) =>
    error._tag === "BackingOff"
      ? backingOff(name, action, error)
      : toActionError(name, name, error, { idempotent: true, timeout: prepare(action).timeout })
  )
  return { key, get }
}

const listed = (call: Call, connection: Connection, refresh: boolean) =>
  Effect.mapError(connection.listTools({ refresh }), (error) =>
    toActionError(call.name, call.name, error, { idempotent: true, timeout: prepare(call.action).timeout })
  )

const notFound = (call: Call, tool: string, tools: ReadonlyArray<ToolDefinition>) => {
  const available = names(allowed(call.action, tools))
  return new ActionNotFound({
    action: call.name,
    message: `${call.name}: the MCP server has no tool named ${tool}${
      call.action.tools !== undefined && !call.action.tools.includes(tool) ? " that this action allows" : ""
    }; available: ${available.length === 0 ? "none" : available.join(", ")}`,
    available
  })
}

const indexes = new WeakMap<ReadonlyArray<ToolDefinition>, ReadonlyMap<string, ToolDefinition>>()

/** A listed tool by name (lists are cached by the connection, so each is indexed once). */
const lookup = (tools: ReadonlyArray<ToolDefinition>, name: string): ToolDefinition | undefined => {
  let index = indexes.get(tools)
  if (index === undefined) {
    index = new Map(tools.map((tool) => [tool.name, tool]))
    indexes.set(tools, index)
  }
  return index.get(name)
}

/** The tool, from the cached list or, when it is not there, from a refreshed one (a tool removed since the list was read). */
const findTool = (call: Call, connection: Connection, tool: string) =>
  Effect.flatMap(listed(call, connection, false), (tools) => {
    const allowList = prepare(call.action).allowList
    if (allowList !== undefined && !allowList.has(tool)) return Effect.fail(notFound(call, tool, tools))
    const found = lookup(tools, tool)
    if (found !== undefined) return Effect.succeed(found)
    return Effect.flatMap(listed(call, connection, true), (refreshed) => {
      const again = lookup(refreshed, tool)
      return again === undefined ? Effect.fail(notFound(call, tool, refreshed)) : Effect.succeed(again)
    })
  })

const argumentsOf = (label: string, raw: unknown): Result.Result<Record<string, unknown>, ValidationError> => {
  if (raw === undefined) return Result.succeed({})
  if (typeof raw === "string") return Tool.parseArguments(raw, { tool: label })
  return Result.succeed(raw as Record<string, unknown>)
}

const isInvalidParamsText = (text: string) => /^MCP error -32602\b/.test(text)

/**
 * Bounds the steps of a call before its request is sent (connecting, listing) by what is left of the
 * action's timeout, so one timeout bounds all the I/O of the call. Nothing was sent to the tool yet, so the
 * TIMEOUT is retryable. A step that is already done (a cached connection or list) sets no timer.
 */
const within = <A, R>(
  call: Omit<Call, "args">,
  label: string,
  left: number,
  what: string,
  step: Effect.Effect<A, ActionError, R>
): Effect.Effect<A, ActionError, R> => {
  const timeout = prepare(call.action).timeout
  const expired = () =>
    Effect.fail(
      new Timeout({
        action: call.name,
        after: timeout,
        message: `${label}: the MCP server did not finish ${what} within the action's timeout of ${Duration.format(timeout)}`
      })
    )
  return left <= 0 ? expired() : TimeLimit.timeoutOrElse(step, Duration.millis(left), expired)
}

// Scoped: the call borrows its connection from the pool until it ends.
const run = (call: Call, client: McpClient["Service"], credential: Credential | undefined) =>
  Effect.scoped(
    Effect.clockWith((clock) => {
      const { name, action, args } = call
      const tool = String(args.tool)
      const label = `${name}/${tool}`
      const prepared = prepare(action)
      const deadline = clock.currentTimeMillisUnsafe() + Duration.toMillis(prepared.timeout)
      const left = () => deadline - clock.currentTimeMillisUnsafe()
      const connection = connectionOf(call, client, credential)
      const raw = argumentsOf(label, args.arguments)
      const mapped = (error: McpClientError) =>
        toActionError(name, label, error, { idempotent: action.idempotent, timeout: prepared.timeout })
      return Effect.flatMap(within(call, label, left(), "connecting", connection.get), (opened) => {
        let current = opened
        // Refused arguments, or a tool that vanished since it was listed: NOT_FOUND when a fresh list lacks it.
        const refused = (message: string, cause: unknown) =>
          Effect.flatMap(
            listed(call, current, true),
            (tools): Effect.Effect<never, ActionError> =>
              lookup(tools, tool) !== undefined
                ? Effect.fail(
                    new ValidationError({
                      action: name,
                      message: `${label}: the MCP server refused the arguments: ${message}`,
                      issues: [{ path: "arguments", message }],
                      cause
                    })
                  )
                : Effect.fail(notFound(call, tool, tools))
          )
        const failed = (error: McpClientError): Effect.Effect<never, ActionError> => {
          if (error.reason === "InvalidParams") return refused(error.message, error)
          // A lost connection is forgotten, so the next call reconnects.
          if (error.reason === "Closed" || error.reason === "SessionExpired") {
            return Effect.andThen(call.agent.mcp.drop(connection.key, current), Effect.fail(mapped(error)))
          }
          return Effect.fail(mapped(error))
        }
        const answer = (result: CallToolResult, definition: ToolDefinition): Effect.Effect<unknown, ActionError> =>
          Content.use((content) => answered(content, result, definition))
        const answered = (
          content: typeof McpContent,
          result: CallToolResult,
          definition: ToolDefinition
        ): Effect.Effect<unknown, ActionError> => {
          if (result.isError !== true)
            return Effect.succeed(content.toValue(result, { outputSchema: definition.outputSchema }))
          const text = content.toText(result)
          if (isInvalidParamsText(text)) return refused(text, undefined)
          return Effect.fail(
            new ExecutionFailure({
              action: name,
              message: `${label}: the tool reported an error: ${text}`,
              // Redacted before it is cut, so a secret the cut would split is never left half shown.
              excerpt: Redact.text(text, credential === undefined ? [] : [credential.value]).slice(0, 1_000)
            })
          )
        }
        return Effect.flatMap(
          within(call, label, left(), "listing its tools", findTool(call, current, tool)),
          (definition) => {
            if (Result.isFailure(raw)) return Effect.fail(raw.failure)
            const converted = JsonSchemaImport.use(({ fromJsonSchema }) =>
              Conversion.decode(fromJsonSchema(definition.inputSchema), raw.success, { action: label })
            )
            return Effect.flatMap(converted, (argumentsIn) => {
              // The call itself gets what is left, and the client cancels it on the server when that passes.
              const timeout = Duration.millis(Math.max(1, left()))
              const called = current.callTool(tool, argumentsIn, { timeout }).pipe(
                Effect.catch((error) => {
                  // An expired HTTP session never ran the request: reconnect and retry once.
                  if (error.reason !== "SessionExpired") return failed(error)
                  return Effect.andThen(
                    call.agent.mcp.drop(connection.key, current),
                    Effect.flatMap(connection.get, (reopened) => {
                      current = reopened
                      return Effect.catch(current.callTool(tool, argumentsIn, { timeout }), failed)
                    })
                  )
                })
              )
              return Effect.flatMap(called, (result) => answer(result, definition))
            })
          }
        )
      })
    })
  )

/**
 * The credential a call of `action` holds, for redacting what runs around it
 * (its result mapper, fallback, its role's hooks): none when unset or refused.
 */
export const secretsOf = (action: Action.McpTool<any, any>): Effect.Effect<ReadonlyArray<Redacted.Redacted<string>>> =>
  readCredential("", action.apiKeyEnv).pipe(
    Effect.map((credential) => (credential === undefined ? [] : [credential.value])),
    Effect.orElseSucceed(() => [])
  )

const withService = <A>(
  name: string,
  action: Action.McpTool<any, any>,
  body: (client: McpClient["Service"], credential: Credential | undefined) => Effect.Effect<A, ActionError>
): Effect.Effect<A, ActionError> =>
  Effect.flatMap(Effect.serviceOption(McpClient), (client) => {
    if (Option.isNone(client)) return Effect.fail(notProvided(name))
    if (action.apiKeyEnv === undefined) return body(client.value, undefined)
    return Effect.flatMap(readCredential(name, action.apiKeyEnv), (credential) =>
      Effect.mapError(body(client.value, credential), (error) =>
        credential === undefined ? error : Redact.scrub(error, [credential.value])
      )
    )
  })

/**
 * One attempt of a direct call `{ tool, arguments }` (see the module doc).
 * `arguments` may be an object, a JSON text (`""` is `{}`) or
 * absent (`{}`).
 *
 * Fails with: VALIDATION (no McpClient, unset credential variable, arguments
 * that do not fit the tool's input schema or that the server refuses),
 * NOT_FOUND (no such tool, or one outside the allow-list; `available` lists
 * the tools that may be called), EXECUTION (the tool answered `isError`, a
 * JSON-RPC error, an HTTP 4xx), TIMEOUT (retryable only for `idempotent`
 * actions: the request was sent), TRANSIENT (connect failure, server
 * exit or transport loss with its exit status and stderr tail, protocol
 * garbage, HTTP 429/5xx; `outcomeUnknown` when the request had been sent,
 * then retryable only for `idempotent` actions).
 */
export const execute = (call: Call): Effect.Effect<unknown, ActionError> =>
  withService(call.name, call.action, (client, credential) => run(call, client, credential))

/**
 * The tools an mcpTool action offers: its server's list (every page,
 * cached), filtered by the action's allow-list. For chat turns.
 */
export const listTools = (call: Omit<Call, "args">): Effect.Effect<ReadonlyArray<ToolDefinition>, ActionError> =>
  withService(call.name, call.action, (client, credential) =>
    Effect.scoped(
      Effect.clockWith((clock) => {
        const withArgs = { ...call, args: {} }
        const deadline = clock.currentTimeMillisUnsafe() + Duration.toMillis(prepare(call.action).timeout)
        const left = () => deadline - clock.currentTimeMillisUnsafe()
        const opened = within(call, call.name, left(), "connecting", connectionOf(withArgs, client, credential).get)
        return Effect.flatMap(opened, (connection) =>
          Effect.map(
            within(call, call.name, left(), "listing its tools", listed(withArgs, connection, false)),
            (tools) => allowed(call.action, tools)
          )
        )
      })
    )
  )

/**
 * What `Agent.make({ mcpServers })` accepts for one server: a stdio command
 * or URL (no credential, all tools, the default timeout), or a full mcpTool
 * action.
 */
export type ServerOption = McpClientServer

/**
 * The agent's own MCP servers (`Agent.make({ mcpServers })`) as a role of
 * mcpTool actions named by their keys; `undefined` when there are none.
 */
export const serversRole = (servers: Readonly<Record<string, ServerOption>> | undefined): Role.Any | undefined => {
  const entries = Object.entries(servers ?? {})
  if (entries.length === 0) return undefined
  return Role.make({
    identity: { name: "mcpServers", goal: "Use the tools of the agent's MCP servers", domain: "mcp" },
    actions: Object.fromEntries(
      entries.map(([key, server]) => [
        key,
        Action.isAction(server)
          ? server
          : Action.mcpTool({ description: `Tools of the MCP server ${key} (${describeServer(server)})`, server })
      ])
    )
  })
}
