/**
 * A server's tools over one connection: `tools/list` followed over every
 * page (each name once; a listing whose cursor does not advance ends early
 * with what it found and says why), cached per connection and refetched after
 * `notifications/tools/list_changed` (a listed tool that is not a usable
 * definition is left out with a warning, the others are kept); `tools/call`
 * with its result read loosely — a content block of an unknown type is kept
 * (the SDK's own schema would reject the whole result) and
 * `structuredContent` is not validated here (the agent checks it against
 * the tool's `outputSchema`).
 */
import { PaginatedResultSchema, ResultSchema } from "@modelcontextprotocol/sdk/types.js"
import type * as Core from "@rolecraft/core/McpClient"
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import * as z from "zod/v4"
import { hide } from "./redact.ts"
import { request, toMillis } from "./request.ts"
import type { Session } from "./session.ts"

const CallResult = ResultSchema.extend({
  content: z.array(z.looseObject({ type: z.string() })).default([]),
  structuredContent: z.unknown().optional(),
  isError: z.unknown().optional()
})

// `nextCursor` read loosely: `null` (sent by some servers for "no more") and a cursor of another type are
// decided here, not failed by the schema with the whole listing.
const ListResult = PaginatedResultSchema.extend({ tools: z.array(z.unknown()), nextCursor: z.unknown().optional() })

/** A listed tool as a definition, or why it cannot be one. */
const toDefinition = (entry: unknown): Core.ToolDefinition | string => {
  if (!Predicate.isObject(entry)) return "a tool entry that is not an object"
  const { name, title, description, inputSchema, outputSchema, annotations } = entry
  if (typeof name !== "string" || name === "") return "a tool entry without a name"
  if (inputSchema !== undefined && !Predicate.isObject(inputSchema))
    return `tool ${name}: its inputSchema is not an object`
  return {
    name,
    ...(typeof title === "string" ? { title } : {}),
    ...(typeof description === "string" ? { description } : {}),
    inputSchema: inputSchema ?? { type: "object" },
    ...(Predicate.isObject(outputSchema) ? { outputSchema } : {}),
    ...(Predicate.isObject(annotations) ? { annotations: annotationsOf(annotations) } : {})
  }
}

/** A tool's annotations: the hints and title the server sent, each kept only when of its type. */
const annotationsOf = (given: { readonly [key: string]: unknown }): Core.ToolAnnotations => {
  const kept: Record<string, string | boolean> = {}
  if (typeof given.title === "string") kept.title = given.title
  for (const hint of ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"] as const) {
    const value = given[hint]
    if (typeof value === "boolean") kept[hint] = value
  }
  return kept as Core.ToolAnnotations
}

const page = (session: Session, cursor: string | undefined) =>
  request(session, "list", session.listTimeoutMs, (signal, timeout) =>
    session.client.request({ method: "tools/list", params: cursor === undefined ? {} : { cursor } }, ListResult, {
      signal,
      timeout
    })
  )

/** What a page's `nextCursor` says: the end (absent, `null` or `""`), the next cursor, or that it is not one. */
const cursorOf = (
  next: unknown
): { readonly end: true } | { readonly cursor: string } | { readonly invalid: string } =>
  next === undefined || next === null || next === ""
    ? { end: true }
    : typeof next === "string"
      ? { cursor: next }
      : { invalid: typeof next }

/** Says why a listing ended early: a warning in the log, and the connection's `onListingStopped`. */
const stopped = (
  session: Session,
  reason: Core.ListingStopped["reason"],
  why: string,
  pages: number,
  tools: number
): Effect.Effect<void> => {
  const message = hide(
    `${session.who}: tools/list stopped after ${pages} page${pages === 1 ? "" : "s"} with ${tools} ` +
      `tool${tools === 1 ? "" : "s"}: ${why}`,
    session.secrets
  )
  session.log("Warn", message)
  const report = session.onListingStopped
  return report === undefined ? Effect.void : report({ reason, pages, tools, message })
}

// Every page of the list, each bounded by the list timeout, each tool name once; it ends at the last page, or
// early — keeping what it found — on a cursor seen before, a page with no new name, a cursor that is not a
// string, or the page limit.
const fetchTools = (session: Session) =>
  Effect.gen(function* () {
    const tools: Array<Core.ToolDefinition> = []
    const names = new Set<string>()
    const cursors = new Set<string>()
    let cursor: string | undefined
    for (let pages = 1; ; pages++) {
      const result = yield* page(session, cursor)
      const before = tools.length
      for (const entry of result.tools) {
        const tool = toDefinition(entry)
        if (typeof tool === "string") yield* Effect.logWarning(`${session.who} listed ${tool}; it is left out`)
        else if (!names.has(tool.name)) {
          names.add(tool.name)
          tools.push(tool)
        }
      }
      const next = cursorOf(result.nextCursor)
      if ("end" in next) break
      const stop = (reason: Core.ListingStopped["reason"], why: string) =>
        stopped(session, reason, why, pages, tools.length)
      if ("invalid" in next) {
        yield* stop("InvalidCursor", `its nextCursor is a ${next.invalid}, not a string`)
        break
      }
      if (cursors.has(next.cursor)) {
        yield* stop("RepeatedCursor", "the server sent a cursor it had sent before")
        break
      }
      if (tools.length === before) {
        yield* stop("NoNewTools", "a page listed no tool that was not listed already")
        break
      }
      if (pages >= session.maxListPages) {
        yield* stop("PageLimit", `the server has more pages than the limit of ${session.maxListPages}`)
        break
      }
      cursors.add(next.cursor)
      cursor = next.cursor
    }
    return tools as ReadonlyArray<Core.ToolDefinition>
  })

/** The server's tools: the cached list, or (first, after a change, or with `refresh`) a fresh one. */
export const listTools =
  (session: Session): Core.Connection["listTools"] =>
  (listOptions) =>
    Effect.suspend(() => {
      const state = session.state
      if (listOptions?.refresh !== true && state.tools !== undefined) return Effect.succeed(state.tools)
      const generation = state.generation
      return Effect.tap(fetchTools(session), (tools) =>
        Effect.sync(() => {
          if (generation === state.generation) state.tools = tools
        })
      )
    })

/** Calls a tool, bounded by `timeout` (none when not given). */
export const callTool =
  (session: Session): Core.Connection["callTool"] =>
  (name, args, callOptions) =>
    Effect.map(
      request(session, "call", toMillis(callOptions.timeout, 0), (signal, timeout) =>
        session.client.request(
          // The SDK's request type wants a mutable record; the arguments are not changed.
          {
            method: "tools/call",
            params: {
              name,
              arguments: args as Record<string, unknown>,
              ...(callOptions.meta === undefined ? {} : { _meta: { ...callOptions.meta } })
            }
          },
          CallResult,
          {
            signal,
            timeout,
            resetTimeoutOnProgress: false,
            onprogress: (progress) =>
              session.notify({
                _tag: "Progress",
                tool: name,
                progress: progress.progress,
                ...(progress.total === undefined ? {} : { total: progress.total }),
                ...(progress.message === undefined ? {} : { message: hide(progress.message, session.secrets) })
              })
          }
        )
      ),
      (result): Core.CallToolResult => ({
        content: result.content,
        ...(Predicate.isObject(result.structuredContent) ? { structuredContent: result.structuredContent } : {}),
        ...(result.isError === true ? { isError: true } : {})
      })
    )
