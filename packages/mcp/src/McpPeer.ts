/**
 * The MCP client of the call being served: an action served by `Mcp.serve`
 * can ask the person at that client for input (`elicit`, MCP elicitation)
 * or ask the client's own model for a completion (`sample`, MCP sampling),
 * in the middle of its run. Both need the client to have declared the
 * capability; anywhere else (a chat turn, `agent.execute` outside
 * `Mcp.serve`) they fail with {@link McpPeerError}, which the pipeline
 * reports as EXECUTION.
 *
 * @example
 * ```ts
 * import { Action } from "@rolecraft/core"
 * import { McpPeer } from "@rolecraft/mcp"
 * import { Effect } from "effect"
 *
 * const signUp = Action.local({
 *   description: "Sign the user up",
 *   parameters: {},
 *   run: () =>
 *     Effect.gen(function* () {
 *       const answer = yield* McpPeer.elicit({
 *         message: "Which email should we use?",
 *         requestedSchema: { type: "object", properties: { email: { type: "string" } }, required: ["email"] }
 *       })
 *       return answer.action === "accept" ? `signed up ${String(answer.content?.email)}` : "cancelled"
 *     })
 * })
 * ```
 *
 * @since 0.2.0
 */
import type {
  CreateMessageRequest,
  CreateMessageResult,
  ElicitRequestFormParams,
  ElicitResult
} from "@modelcontextprotocol/sdk/types.js"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/**
 * An elicitation or sampling request could not be made or was not answered:
 * the call is not served over MCP, the client did not declare the
 * capability, or the request failed (the message says which).
 *
 * @category errors
 * @since 0.2.0
 */
export class McpPeerError extends Schema.TaggedError<McpPeerError>()("McpPeerError", {
  message: Schema.String,
  cause: Schema.optionalKey(Schema.Defect())
}) {}

/**
 * What `Mcp.serve` provides to each call it runs (see {@link Current}).
 *
 * @category models
 * @since 0.2.0
 */
export interface Peer {
  readonly elicit: (params: ElicitRequestFormParams) => Effect.Effect<ElicitResult, McpPeerError>
  readonly sample: (params: CreateMessageRequest["params"]) => Effect.Effect<CreateMessageResult, McpPeerError>
}

/**
 * The client of the call being served, `undefined` outside `Mcp.serve`.
 *
 * @category services
 * @since 0.2.0
 */
export const Current = Context.Reference<Peer | undefined>("@rolecraft/mcp/McpPeer/Current", {
  defaultValue: () => undefined
})

const peer: Effect.Effect<Peer, McpPeerError> = Effect.flatMap(Effect.service(Current), (current) =>
  current === undefined
    ? Effect.fail(new McpPeerError({ message: "this call is not served over MCP: there is no client to ask" }))
    : Effect.succeed(current)
)

/**
 * Asks the person at the MCP client to fill a form: `message` and a flat
 * JSON Schema `requestedSchema` (strings, numbers, booleans, enums). The
 * answer is `accept` with `content`, `decline` or `cancel`. Fails with
 * {@link McpPeerError} when the client declared no elicitation, or the
 * request fails.
 *
 * @category constructors
 * @since 0.2.0
 */
export const elicit = (params: ElicitRequestFormParams): Effect.Effect<ElicitResult, McpPeerError> =>
  Effect.flatMap(peer, (current) => current.elicit(params))

/**
 * Asks the MCP client's model for a message (`sampling/createMessage`):
 * `messages`, `maxTokens`, and optionally `systemPrompt`, `temperature`,
 * `modelPreferences`. The client decides which model answers, and may ask
 * its user first. Fails with {@link McpPeerError} when the client declared
 * no sampling, or the request fails.
 *
 * @category constructors
 * @since 0.2.0
 */
export const sample = (params: CreateMessageRequest["params"]): Effect.Effect<CreateMessageResult, McpPeerError> =>
  Effect.flatMap(peer, (current) => current.sample(params))
