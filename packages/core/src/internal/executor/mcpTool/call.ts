/**
 * One direct call `{ tool, arguments }` of an MCP server's tool, over the
 * agent's shared connection: connect (or borrow), find the tool (allow-list,
 * then the cached list, refreshed once before answering NOT_FOUND), convert
 * the tool's arguments against its `inputSchema` (their one conversion), call it with what is left of the
 * action's timeout (passed to the client, so the server cancels it when it
 * passes or when the call is interrupted), and turn the result into a value
 * (`content.ts`). One timeout bounds all the I/O of the call.
 */
import type * as FromJsonSchema from "../../schema/fromJsonSchema.ts"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Action from "../../../Action.ts"
import { type ActionError, ActionNotFound, ExecutionFailure, Timeout, ValidationError } from "../../../ActionError.ts"
import * as Conversion from "../../schema/decode.ts"
import {
  type CallToolResult,
  type Connection,
  type McpClient,
  type McpClientError,
  serverKey,
  type ToolDefinition
} from "../../../McpClient.ts"
import type * as McpContent from "./content.ts"
import * as IdempotencyKey from "../../idempotencyKey.ts"
import * as Lazy from "../../lazy.ts"
import * as Redact from "../../redact.ts"
import * as TimeLimit from "../../resilience/timeLimit.ts"
import { type Credential, connectionOf, type Pool } from "./connection.ts"
import { toActionError } from "./failure.ts"
import { labelOf } from "../../label.ts"
import * as DefinitionDigest from "../../approvals/definition.ts"
import { ApprovalRequired } from "../../../ActionError.ts"

/**
 * The default timeout of one tool call when neither the action nor its
 * resilience policy sets one: 60 seconds, passed to the client explicitly.
 */
export const defaultTimeout: Duration.Duration = Duration.seconds(60)

/**
 * What the executor needs of an attempt: the action, the server's `tool` and the call's `args` — the tool's own
 * arguments, decoded here once, against the tool's input schema.
 */
export interface Call {
  readonly name: string
  readonly action: Action.McpTool<any, any>
  readonly tool: string
  readonly args: Readonly<Record<string, unknown>>
  readonly agent: { readonly mcp: Pool }
  /** The digest of the tool's definition the call's approval is bound to: the tool must still be that one. */
  readonly approved?: string | undefined
}

// The JSON Schema importer and the result reader are loaded by the first call.
const JsonSchemaImport = Lazy.make((): Promise<typeof FromJsonSchema> => import("../../schema/fromJsonSchema.ts"))
const Content = Lazy.make((): Promise<typeof McpContent> => import("./content.ts"))

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

/** The tools of a list the action allows (its allow-list, when it has one). */
export const allowed = (action: Action.McpTool<any, any>, tools: ReadonlyArray<ToolDefinition>) => {
  const allowList = action.tools
  if (allowList === undefined) return tools
  const last = allowedLists.get(action)
  if (last?.tools === tools) return last.allowed
  const kept = tools.filter((tool) => allowList.includes(tool.name))
  allowedLists.set(action, { tools, allowed: kept })
  return kept
}

const names = (tools: ReadonlyArray<ToolDefinition>) => tools.map((tool) => tool.name)

/** What a call needs of its action, computed once per action value. */
export interface Prepared {
  readonly serverKey: string
  readonly timeout: Duration.Duration
  readonly allowList: ReadonlySet<string> | undefined
}

const preparedByAction = new WeakMap<Action.McpTool<any, any>, Prepared>()

/** What a call needs of `action` (see {@link Prepared}), made on its first call. */
export const prepare = (action: Action.McpTool<any, any>): Prepared => {
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

/** The server's tools: the connection's cached list, or a fresh one with `refresh`; a failure mapped to its category. */
export const listed = (call: Call, connection: Connection, refresh: boolean) =>
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

const isInvalidParamsText = (text: string) => /^MCP error -32602\b/.test(text)

/**
 * Bounds the steps of a call before its request is sent (connecting, listing) by what is left of the
 * action's timeout, so one timeout bounds all the I/O of the call. Nothing was sent to the tool yet, so the
 * TIMEOUT is retryable. A step that is already done (a cached connection or list) sets no timer.
 */
export const within = <A, R>(
  call: Omit<Call, "args" | "tool">,
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

/**
 * One call (see the module doc). Scoped: the call borrows its connection from the pool until it ends.
 */
export const run = (call: Call, client: McpClient["Service"], credential: Credential | undefined) =>
  Effect.scoped(
    Effect.clockWith((clock) => {
      const { name, action, args, tool } = call
      const label = labelOf(name, tool)
      const prepared = prepare(action)
      const deadline = clock.currentTimeMillisUnsafe() + Duration.toMillis(prepared.timeout)
      const left = () => deadline - clock.currentTimeMillisUnsafe()
      const connection = connectionOf(call, client, credential, prepared)
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
          // A result that reports a failed protocol request in its text is a failure, even without `isError`.
          const protocol = result.isError !== true && content.reportsProtocolFailure(result)
          if (result.isError !== true && !protocol)
            return Effect.succeed(content.toValue(result, { outputSchema: definition.outputSchema }))
          const text = content.toText(result)
          if (isInvalidParamsText(text)) return refused(text, undefined)
          return Effect.fail(
            new ExecutionFailure({
              action: name,
              message: `${label}: ${protocol ? "the tool's result reports a failed MCP request" : "the tool reported an error"}: ${text}`,
              // Redacted before it is cut, so a secret the cut would split is never left half shown.
              excerpt: Redact.text(text, credential === undefined ? [] : [credential.value]).slice(0, 1_000)
            })
          )
        }
        return Effect.flatMap(
          within(call, label, left(), "listing its tools", findTool(call, current, tool)),
          (definition) => {
            // An approved call runs only the definition it was approved for, even if it changed since step 2.
            const approved = call.approved
            if (approved !== undefined && DefinitionDigest.digest(definition) !== approved) {
              const parts = DefinitionDigest.changes(approved, DefinitionDigest.digest(definition))
              return Effect.fail(
                new ApprovalRequired({
                  action: name,
                  reason: action.policies.approval?.reason ?? "",
                  check: "definition",
                  message: `${label}: the tool changed since it was approved (its ${parts.join(", ")} changed); it did not run`
                })
              )
            }
            // The arguments' one conversion: against the tool's own input schema.
            const converted = JsonSchemaImport.use(({ fromJsonSchema }) =>
              Conversion.decode(fromJsonSchema(definition.inputSchema), args, { action: label })
            )
            return Effect.flatMap(converted, (argumentsIn) => {
              // The call itself gets what is left, and the client cancels it on the server when that passes.
              const timeout = Duration.millis(Math.max(1, left()))
              // The call's idempotency key, when it has one, goes in the request's `_meta`.
              const key = IdempotencyKey.current()
              const options =
                key === undefined ? { timeout } : { timeout, meta: { [IdempotencyKey.idempotencyKeyMeta]: key } }
              const called = current.callTool(tool, argumentsIn, options).pipe(
                Effect.catch((error) => {
                  // An expired HTTP session never ran the request: reconnect and retry once.
                  if (error.reason !== "SessionExpired") return failed(error)
                  return Effect.andThen(
                    call.agent.mcp.drop(connection.key, current),
                    Effect.flatMap(connection.get, (reopened) => {
                      current = reopened
                      return Effect.catch(current.callTool(tool, argumentsIn, options), failed)
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
