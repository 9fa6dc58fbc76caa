/**
 * One `tools/call` of a served agent: a name that was not offered is the
 * JSON-RPC error the specification gives for an unknown tool (-32602), and
 * nothing runs; otherwise `agent.execute` runs the call with the client at
 * hand (its progress token, its log level, elicitation and sampling), and
 * the response becomes an MCP result: content blocks as the action made
 * them, anything else as the text a chat turn writes plus
 * `structuredContent`, a failure as an `isError` result. An approval-gated
 * call without a token asks the person at the client through elicitation
 * when the client can be asked, and runs once on acceptance; otherwise the
 * refusal carries its pending token id for the client to send back. A
 * pending token belongs to the session that asked (the call's scope is the
 * session): a token a session of another client asked for is refused and
 * nothing runs (another session of the same client, as its `initialize`
 * names it, may present it).
 */
import {
  type CallToolRequest,
  type CallToolResult,
  type CreateMessageResult,
  CreateMessageResultSchema,
  type ElicitResult,
  ElicitResultSchema,
  ErrorCode,
  McpError,
  type ServerNotification,
  type ServerRequest
} from "@modelcontextprotocol/sdk/types.js"
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js"
import type { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { type ActionResponse, type ActionTool, type Agent, Approval, Progress, ToolContent } from "@rolecraft/core"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as McpPeer from "../../McpPeer.ts"
import * as Log from "./log.ts"

type AnyAgent = Agent.Any
type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>

/** Where a client puts an approval token on a `tools/call`: the request's `_meta` under this key. */
export const approvalMetaKey = "rolecraft/approvalToken"

/** What a call needs of the server that serves it. */
export interface Serving {
  readonly agent: AnyAgent
  readonly tools: ReadonlyMap<string, ActionTool.ActionTool>
  readonly run: <A>(effect: Effect.Effect<A, never, any>, signal: AbortSignal) => Promise<A>
  readonly approveInBand: boolean
  /** The sessions that asked for tokens, by their scope (the oldest forgotten past 10,000). */
  readonly owners: Map<string, Server>
}

/** The most sessions whose tokens are remembered (the oldest forgotten first). */
const maxOwners = 10_000

/** Records the session `owner` (its server) as one that may ask for tokens. */
export const own = (serving: Serving, owner: string, server: Server): void => {
  serving.owners.set(owner, server)
  if (serving.owners.size > maxOwners) {
    const oldest = serving.owners.keys().next()
    if (oldest.done !== true) serving.owners.delete(oldest.value)
  }
}

const failureResult = (category: string, message: string, extra?: Record<string, unknown>): CallToolResult => {
  const error = { category, message, ...extra }
  return {
    isError: true,
    content: [{ type: "text", text: JSON.stringify({ error }) }],
    ...(extra === undefined ? {} : { structuredContent: { error } })
  }
}

const redactBlock = (agent: AnyAgent, block: ToolContent.Block): Effect.Effect<ToolContent.Block> => {
  if (block.type === "text") return Effect.map(agent.redact(block.text), (text) => ({ type: "text", text }))
  if (block.type === "resource" && "text" in block.resource) {
    const resource = block.resource
    return Effect.map(agent.redact(resource.text), (text) => ({ type: "resource", resource: { ...resource, text } }))
  }
  return Effect.succeed(block)
}

// A string result is its text; content blocks go as they are (their text redacted); anything else is the text a
// chat turn answers with, redacted, plus `structuredContent` for an object: the JSON of that text, so the two agree.
const successResult = (agent: AnyAgent, action: string, value: unknown): Effect.Effect<CallToolResult> => {
  if (ToolContent.isContent(value)) {
    return Effect.map(
      Effect.forEach(value.blocks, (block) => redactBlock(agent, block)),
      (content) => ({
        content: content as CallToolResult["content"]
      })
    )
  }
  const text = ToolContent.success(value, { action })
  if (Result.isFailure(text)) return Effect.succeed(failureResult(text.failure.category, text.failure.message))
  return Effect.map(agent.redact(text.success), (shown) => {
    const content: CallToolResult["content"] = [{ type: "text", text: shown }]
    if (ToolContent.structured(value) === undefined) return { content }
    const structured = Result.try(() => JSON.parse(shown) as Record<string, unknown>)
    return Result.isSuccess(structured) ? { content, structuredContent: structured.success } : { content }
  })
}

const toResult = (
  agent: AnyAgent,
  action: string,
  response: ActionResponse.ActionResponse
): Effect.Effect<CallToolResult> => {
  if (response.success) return successResult(agent, action, response.value)
  const error = response.error
  if (error._tag === "ApprovalRequired" && error.pendingTokenId !== undefined) {
    const message = `${error.message}. Once a person approves the pending token ${error.pendingTokenId}, call again with it as _meta["${approvalMetaKey}"] (or the _approval_token argument)`
    return Effect.succeed(
      failureResult(error.category, message, {
        check: error.check,
        reason: error.reason,
        pendingTokenId: error.pendingTokenId
      })
    )
  }
  return Effect.succeed(failureResult(error.category, error.message))
}

const peerOf = (server: Server, extra: Extra): McpPeer.Peer => {
  const request = <A>(what: string, capability: "elicitation" | "sampling", send: () => Promise<A>) =>
    server.getClientCapabilities()?.[capability] === undefined
      ? Effect.fail(McpPeerErrorOf(`the MCP client did not declare ${capability}`))
      : Effect.tryPromise({
          try: send,
          catch: (cause) => McpPeerErrorOf(`the MCP client did not answer the ${what} request: ${String(cause)}`, cause)
        })
  return {
    elicit: (params) =>
      request<ElicitResult>("elicitation", "elicitation", () =>
        extra.sendRequest({ method: "elicitation/create", params }, ElicitResultSchema)
      ),
    sample: (params) =>
      request<CreateMessageResult>("sampling", "sampling", () =>
        extra.sendRequest({ method: "sampling/createMessage", params }, CreateMessageResultSchema)
      )
  }
}

const McpPeerErrorOf = (message: string, cause?: unknown): McpPeer.McpPeerError =>
  new McpPeer.McpPeerError(cause === undefined ? { message } : { message, cause })

// Runs the call with what the client gives it: progress (when it sent a token), its log level, and itself.
const withClient = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  agent: AnyAgent,
  server: Server,
  extra: Extra,
  logs: Log.Level
): Effect.Effect<A, E, R> => {
  const token = extra._meta?.progressToken
  const reporter =
    token === undefined
      ? undefined
      : (update: Progress.Update) =>
          Effect.promise(() =>
            extra
              .sendNotification({
                method: "notifications/progress",
                params: {
                  progressToken: token,
                  progress: update.progress,
                  ...(update.total === undefined ? {} : { total: update.total }),
                  ...(update.message === undefined ? {} : { message: update.message })
                }
              })
              .catch(() => undefined)
          )
  return effect.pipe(
    Log.forward(logs, extra, agent.redact),
    Effect.provideService(Progress.Reporter, reporter),
    Effect.provideService(McpPeer.Current, peerOf(server, extra))
  )
}

// Every line's text is printable: no argument, description or reason can forge a line, reorder or hide characters.
const describeCall = (tool: ActionTool.ActionTool, args: Record<string, unknown>, reason: string): string =>
  [
    `Allow the call ${Approval.printable(tool.name)}?`,
    `What it does: ${Approval.printable(tool.description)}`,
    `Arguments: ${Approval.printable(JSON.stringify(args))}`,
    `Why it needs approval: ${Approval.printable(reason)}`
  ].join("\n")

/** The token a call presents: `_meta`'s, else the reserved argument's (an own key only). */
const presented = (request: CallToolRequest, args: Record<string, unknown>): string | undefined => {
  const meta = request.params._meta?.[approvalMetaKey]
  if (typeof meta === "string") return meta
  const argument = Object.hasOwn(args, Approval.reservedParameter) ? args[Approval.reservedParameter] : undefined
  return typeof argument === "string" ? argument : undefined
}

/**
 * Whether a presented token belongs to another client (a token no store knows is left to the pipeline): one asked
 * for by no session of this server, or by a session of a client its `initialize` named otherwise. Another session
 * of the same client passes: a command-line client opens a session per command (the MCP Inspector's CLI).
 */
const foreign = (serving: Serving, token: string, owner: string, server: Server): Effect.Effect<boolean> =>
  serving.agent.approvals.get(token).pipe(
    Effect.map((found) => {
      if (Option.isNone(found)) return false
      const asker = found.value.scope?.turn
      if (asker === owner) return false
      const session = asker === undefined ? undefined : serving.owners.get(asker)
      if (session === undefined) return true
      return session.getClientVersion()?.name !== server.getClientVersion()?.name
    }),
    Effect.orElseSucceed(() => false)
  )

// Asks the person at the client to approve this exact call; approves or rejects the pending token with the answer.
const askInBand = (
  serving: Serving,
  server: Server,
  extra: Extra,
  tool: ActionTool.ActionTool,
  args: Record<string, unknown>,
  pending: { readonly id: string; readonly reason: string }
): Effect.Effect<"approved" | "declined"> => {
  const client = server.getClientVersion()?.name ?? "an MCP client"
  const approver = `the user of ${client} (MCP elicitation)`
  const store = serving.agent.approvals
  return Effect.gen(function* () {
    const answer = yield* peerOf(server, extra).elicit({
      message: describeCall(tool, args, pending.reason),
      requestedSchema: {
        type: "object",
        properties: { approve: { type: "boolean", title: "Approve this call", default: false } },
        required: ["approve"]
      }
    })
    if (answer.action === "accept" && answer.content?.approve === true) {
      yield* store.approve(pending.id, approver)
      return "approved" as const
    }
    yield* store.reject(
      pending.id,
      approver,
      `${answer.action === "accept" ? "not approved" : answer.action} at the MCP client`
    )
    return "declined" as const
  }).pipe(Effect.orElseSucceed(() => "declined" as const))
}

/** Answers one `tools/call`. */
export const call = (
  serving: Serving,
  server: Server,
  logs: Log.Level,
  request: CallToolRequest,
  extra: Extra,
  owner: string
): Promise<CallToolResult> => {
  const { agent, tools } = serving
  const name = request.params.name
  const tool = tools.get(name)
  if (tool === undefined) {
    const available = [...tools.keys()].join(", ")
    throw new McpError(
      ErrorCode.InvalidParams,
      agent.allows(name)
        ? `Unknown tool: ${name}; available: ${available || "none"}`
        : `Unknown tool: ${name}: the agent's authority does not allow it`
    )
  }
  const args = request.params.arguments ?? {}
  const token = presented(request, args)
  // The session is the call's scope: its pending tokens are its own, never shared with another session's.
  const execute = (approvalToken: string | undefined) =>
    agent.execute({
      action: tool.action,
      params: args,
      correlationId: owner,
      ...(approvalToken === undefined ? {} : { approvalToken })
    })
  const program = Effect.gen(function* () {
    if (token !== undefined && (yield* foreign(serving, token, owner, server))) {
      return failureResult(
        "APPROVAL",
        `${tool.name}: the approval token was asked for by another MCP session (another client), not this one; nothing ran`,
        { check: "session" }
      )
    }
    const response = yield* execute(token)
    const error = response.success ? undefined : response.error
    if (
      serving.approveInBand &&
      error?._tag === "ApprovalRequired" &&
      error.check === "missing" &&
      error.pendingTokenId !== undefined &&
      server.getClientCapabilities()?.elicitation !== undefined
    ) {
      const pending = { id: error.pendingTokenId, reason: error.reason }
      const answer = yield* askInBand(serving, server, extra, tool, args, pending)
      if (answer === "declined") {
        return failureResult(
          "APPROVAL",
          `${tool.name}: the user of the MCP client did not approve the call; nothing ran`
        )
      }
      return yield* Effect.flatMap(execute(pending.id), (again) => toResult(agent, tool.action, again))
    }
    return yield* toResult(agent, tool.action, response)
  }).pipe(
    Effect.catch((failure) => Effect.succeed(failureResult("RETRIEVAL", (failure as { message: string }).message)))
  )
  return serving.run(withClient(program, agent, server, extra, logs), extra.signal)
}
