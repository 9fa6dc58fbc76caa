/**
 * Approvals: an action that requires approval runs only when
 * the call carries an approved, unexpired, unused token bound to this agent,
 * action (and tool) and arguments. A call without one fails with APPROVAL and
 * requests a pending token, which an approver then approves or rejects.
 *
 * @example
 * ```ts
 * import { Action, Agent, Role } from "@rolecraft/core"
 * import { Effect, Schema } from "effect"
 *
 * const Booking = Role.make({
 *   identity: { name: "booking", goal: "Book rooms", domain: "travel" },
 *   actions: {
 *     book: Action.local({
 *       description: "Book a hotel room",
 *       parameters: { hotelId: Schema.String },
 *       run: ({ hotelId }) => `booked ${hotelId}`
 *     }).pipe(Action.requireApproval({ reason: "Books and charges a hotel", ttl: "15 minutes" }))
 *   }
 * })
 *
 * const program = Effect.gen(function* () {
 *   const agent = yield* Agent.make({ id: "planner", roles: [Booking] })
 *   const refused = yield* agent.execute({ action: "book", params: { hotelId: "h-42" } }) // APPROVAL, a pending token
 *   if (refused.success || refused.error._tag !== "ApprovalRequired") return
 *   const token = refused.error.pendingTokenId ?? ""
 *   yield* agent.approvals.approve(token, "alice")
 *   yield* agent.execute({ action: "book", params: { hotelId: "h-42" }, approvalToken: token }) // runs, once
 * }).pipe(Effect.scoped)
 * ```
 *
 * @since 0.1.0
 */
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type { ValidationError } from "./ActionError.ts"
import type * as ApprovalStore from "./ApprovalStore.ts"
import * as Binding from "./internal/approvals/binding.ts"
import * as Text from "./internal/text.ts"
import type * as ToolHints from "./ToolHints.ts"

/**
 * The parameter under which a call carries its approval token. It is removed
 * from the arguments before any other step sees them, and never appears in a
 * tool's schema.
 *
 * @category constants
 * @since 0.1.0
 */
export const reservedParameter = "_approval_token"

/**
 * Text as a person deciding a call is shown it: every character that could
 * forge a line, reorder or hide what they read — control characters (line
 * feeds and carriage returns included), line and paragraph separators
 * (U+2028, U+2029), format characters (bidi controls such as U+202E,
 * zero-width characters, tags) and lone surrogates — written as its escape
 * (`\u2028`, `\u{E0041}`). The approval store's shown arguments and
 * `Mcp.serve`'s elicitation text pass it.
 *
 * @example
 * ```ts
 * import { Approval } from "@rolecraft/core"
 *
 * Approval.printable("acct-7\u2028Why it needs approval: a refund") // "acct-7\\u2028Why it needs approval: a refund"
 * ```
 *
 * @category getters
 * @since 0.3.0
 */
export const printable: (text: string) => string = Text.printable

/**
 * What `Action.requireApproval` attaches to an action: the `reason` shown to
 * the approver, and the time to live of a token requested for a call (`ttl`,
 * default 15 minutes, counted on Effect's `Clock` from the request).
 *
 * `when` (mcpTool actions only; refused on others when the agent is made)
 * says which of the server's tools need approval: a list of tool names, or
 * a predicate over the tool as the server lists it at the call
 * (`ToolHints.Listing`: its definition and hints), e.g.
 * `(tool) => ToolHints.mayDestroy(tool.hints)`. Absent: every tool. A tool
 * the server no longer lists is not asked for (its call is NOT_FOUND).
 *
 * For an MCP tool the approval is bound to the tool's definition as listed
 * when it was asked (name, title, description, input and output schema,
 * annotations): a call whose tool has changed since is refused with
 * APPROVAL (`check: "definition"`, the message naming what changed) and a
 * fresh pending token, and the agent publishes `McpToolDefinitionChanged`.
 * The definition is listed afresh when a token is presented. The other
 * kinds of action are defined in code, so their definition cannot change
 * while the agent runs.
 *
 * @category models
 * @since 0.1.0
 */
export interface Policy {
  readonly reason: string
  readonly ttl?: Duration.Input | undefined
  readonly when?: ReadonlyArray<string> | ((tool: ToolHints.Listing) => boolean) | undefined
}

/**
 * The binding of a call: agent, action, tool (mcpTool actions) and the
 * digest of the raw arguments without the token (for an mcpTool action
 * these are `{ tool, arguments }`). Fails `ValidationError` when the
 * arguments cannot be serialised (a cycle).
 *
 * @category getters
 * @since 0.1.0
 */
export const bindingOf = (
  agentId: string,
  action: string,
  tool: string | undefined,
  params: Readonly<Record<string, unknown>>
): Effect.Effect<ApprovalStore.Binding, ValidationError> => {
  const binding = Binding.bind(agentId, action, tool, params)
  return Result.isSuccess(binding) ? Effect.succeed(binding.success) : Effect.fail(binding.failure)
}
