/**
 * The nine typed failures of an action call, and the two errors that
 * are not action categories: {@link RoleDefinitionError} and {@link RetrievalFailure}.
 *
 * Every action error carries `action` (the name that was called), `message`,
 * `category`, `retryable` (defaulted per tag; an instance may say otherwise,
 * e.g. a transient failure whose outcome is unknown) and an optional `cause`.
 * Match on `_tag` (or `category`) to decide what to do: only TIMEOUT and
 * TRANSIENT are retried by default.
 *
 * They are expected outcomes and plain data, cheap to keep: no stack frames
 * (`stack` is the `Tag: message` line; where a call failed is in its span),
 * while a `cause` — a thrown error, a library's error — keeps its own stack,
 * as text. `RoleDefinitionError` keeps its stack.
 *
 * @example
 * ```ts
 * import type { Agent } from "@rolecraft/core"
 * import { Effect } from "effect"
 *
 * declare const agent: Agent.Agent
 *
 * const nights = agent.executeAction("nights", { checkIn: "2026-05-12" }).pipe(
 *   // the fields that failed: ["checkOut"] (each issue also says why: "missing")
 *   Effect.catchTag("ValidationError", (error) => Effect.succeed(error.issues.map((issue) => issue.path)))
 * )
 * ```
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import { expected } from "./internal/expectedError.ts"

/**
 * The nine categories, one per tag.
 *
 * @category schemas
 * @since 0.1.0
 */
export const Category = Schema.Literals([
  "NOT_FOUND",
  "VALIDATION",
  "AUTHORITY",
  "APPROVAL",
  "GUARDRAIL",
  "CONTRACT",
  "TIMEOUT",
  "TRANSIENT",
  "EXECUTION"
])

/**
 * @category models
 * @since 0.1.0
 */
export type Category = typeof Category.Type

const common = <C extends Category>(category: C, retryable: boolean) => ({
  action: Schema.String,
  message: Schema.String,
  category: Schema.Literal(category).pipe(Schema.withConstructorDefault(Effect.succeed(category))),
  retryable: Schema.Boolean.pipe(Schema.withConstructorDefault(Effect.succeed(retryable))),
  cause: Schema.optionalKey(Schema.Defect())
})

/**
 * One field that failed validation: `path` is a dotted path such as
 * `guests[1].age` (empty for the arguments as a whole).
 *
 * @category schemas
 * @since 0.1.0
 */
export const Issue = Schema.Struct({ path: Schema.String, message: Schema.String })

/**
 * @category models
 * @since 0.1.0
 */
export type Issue = typeof Issue.Type

/**
 * NOT_FOUND: no action, or no tool of an MCP server, has that name.
 * `available` lists the names that do exist. Not retryable.
 *
 * @category errors
 * @since 0.1.0
 */
export class ActionNotFound extends expected(
  Schema.TaggedError<ActionNotFound>()("ActionNotFound", {
    ...common("NOT_FOUND", false),
    available: Schema.Array(Schema.String)
  })
) {}

const shownNames = 20

/**
 * Makes an {@link ActionNotFound} whose message names what was asked for and
 * what exists instead: `no action "bok"; available: book, cancel, search`.
 * Past 20 names the list ends with `… and N more` (`available` keeps them
 * all); with none it says `no action is available`.
 *
 * @example
 * ```ts
 * import { ActionError } from "@rolecraft/core"
 *
 * const error = ActionError.actionNotFound("bok", ["book", "cancel"])
 * // error.message === 'no action "bok"; available: book, cancel'
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const actionNotFound = (action: string, available: ReadonlyArray<string>): ActionNotFound => {
  const listed = available.slice(0, shownNames).join(", ")
  const more = available.length > shownNames ? ` … and ${available.length - shownNames} more` : ""
  return new ActionNotFound({
    action,
    message: `no action ${JSON.stringify(action)}; ${
      available.length === 0 ? "no action is available" : `available: ${listed}${more}`
    }`,
    available: [...available]
  })
}

/**
 * VALIDATION: bad or missing arguments, or a misconfiguration found at call
 * time (a service not provided, an unset secret variable, a bad placeholder).
 * `issues` names each failing field path. Not retryable.
 *
 * @category errors
 * @since 0.1.0
 */
export class ValidationError extends expected(
  Schema.TaggedError<ValidationError>()("ValidationError", {
    ...common("VALIDATION", false),
    issues: Schema.Array(Issue)
  })
) {}

/**
 * AUTHORITY: the agent's authority denies the action (or `action/tool`).
 * Not retryable.
 *
 * @category errors
 * @since 0.1.0
 */
export class Unauthorized extends expected(
  Schema.TaggedError<Unauthorized>()("Unauthorized", {
    ...common("AUTHORITY", false)
  })
) {}

/**
 * Which approval check refused a call.
 *
 * @category schemas
 * @since 0.1.0
 */
export const ApprovalCheck = Schema.Literals([
  "missing",
  "unknown",
  "pending",
  "rejected",
  "expired",
  "used",
  "agent",
  "action",
  "arguments",
  "definition",
  "decided"
])

/**
 * @category models
 * @since 0.1.0
 */
export type ApprovalCheck = typeof ApprovalCheck.Type

/**
 * APPROVAL: the action requires an approved token and the call carried none,
 * or one that is pending, rejected, expired, used, or bound to another agent,
 * action or arguments; or a decision came for a call already decided
 * otherwise (`check: "decided"`, the message saying `"already decided:
 * approved by …"`). `reason` is the action's stated reason, `check` says
 * which check refused, `pendingTokenId` is the live pending token of the
 * call as it was made, when one is to be asked for. Not retryable.
 *
 * @category errors
 * @since 0.1.0
 */
export class ApprovalRequired extends expected(
  Schema.TaggedError<ApprovalRequired>()("ApprovalRequired", {
    ...common("APPROVAL", false),
    reason: Schema.String,
    check: ApprovalCheck,
    pendingTokenId: Schema.optionalKey(Schema.String)
  })
) {}

/**
 * GUARDRAIL: an input or output guardrail rejected the call. `rule` names the
 * rule (e.g. `maxLength` or the blocked pattern's source). Not retryable.
 *
 * @category errors
 * @since 0.1.0
 */
export class GuardrailViolation extends expected(
  Schema.TaggedError<GuardrailViolation>()("GuardrailViolation", {
    ...common("GUARDRAIL", false),
    stage: Schema.Literals(["input", "output"]),
    rule: Schema.String
  })
) {}

/**
 * CONTRACT: a precondition, postcondition or invariant failed. Not retryable.
 *
 * @category errors
 * @since 0.1.0
 */
export class ContractViolation extends expected(
  Schema.TaggedError<ContractViolation>()("ContractViolation", {
    ...common("CONTRACT", false),
    stage: Schema.Literals(["pre", "post", "invariant", "state"]),
    rule: Schema.String
  })
) {}

/**
 * TIMEOUT: an attempt timeout or the whole step's deadline passed; `after` is
 * the duration that ran out. Retryable.
 *
 * @category errors
 * @since 0.1.0
 */
export class Timeout extends expected(
  Schema.TaggedError<Timeout>()("Timeout", {
    ...common("TIMEOUT", true),
    after: Schema.Duration
  })
) {}

/**
 * TRANSIENT: a network failure, 408/429/5xx, MCP transport loss, an open
 * circuit or a full bulkhead. `retryAfter` is the server's requested wait,
 * `outcomeUnknown` says the request may have reached the server (such a
 * failure is created with `retryable: false` unless the call is idempotent).
 * Retryable by default.
 *
 * @category errors
 * @since 0.1.0
 */
export class TransientFailure extends expected(
  Schema.TaggedError<TransientFailure>()("TransientFailure", {
    ...common("TRANSIENT", true),
    status: Schema.optionalKey(Schema.Int),
    retryAfter: Schema.optionalKey(Schema.Duration),
    outcomeUnknown: Schema.Boolean.pipe(Schema.withConstructorDefault(Effect.succeed(false)))
  })
) {}

/**
 * EXECUTION: a local body failed, an upstream refused permanently (other 4xx,
 * MCP `isError`, a model refusal), or a hook or fallback failed. `status` and
 * a short body `excerpt` are kept for upstream refusals. Not retryable.
 *
 * @category errors
 * @since 0.1.0
 */
export class ExecutionFailure extends expected(
  Schema.TaggedError<ExecutionFailure>()("ExecutionFailure", {
    ...common("EXECUTION", false),
    status: Schema.optionalKey(Schema.Int),
    excerpt: Schema.optionalKey(Schema.String)
  })
) {}

/**
 * Any of the nine action errors.
 *
 * @category models
 * @since 0.1.0
 */
export type ActionError =
  | ActionNotFound
  | ValidationError
  | Unauthorized
  | ApprovalRequired
  | GuardrailViolation
  | ContractViolation
  | Timeout
  | TransientFailure
  | ExecutionFailure

/**
 * The schema of the union, for encoding errors into responses.
 *
 * @category schemas
 * @since 0.1.0
 */
export const ActionError = Schema.Union([
  ActionNotFound,
  ValidationError,
  Unauthorized,
  ApprovalRequired,
  GuardrailViolation,
  ContractViolation,
  Timeout,
  TransientFailure,
  ExecutionFailure
])

const tags: ReadonlySet<string> = new Set([
  "ActionNotFound",
  "ValidationError",
  "Unauthorized",
  "ApprovalRequired",
  "GuardrailViolation",
  "ContractViolation",
  "Timeout",
  "TransientFailure",
  "ExecutionFailure"
])

/**
 * Whether a value is one of the nine action errors.
 *
 * @category guards
 * @since 0.1.0
 */
export const isActionError = (u: unknown): u is ActionError =>
  Predicate.hasProperty(u, "_tag") && typeof u._tag === "string" && tags.has(u._tag) && u instanceof Error

/**
 * Thrown by `Capability.make` and `Role.make` (and failed by `Agent.make`)
 * when a definition breaks a rule. The message names the capability (or role)
 * and key, says why, and says what to do instead.
 *
 * @category errors
 * @since 0.1.0
 */
export class RoleDefinitionError extends Schema.TaggedError<RoleDefinitionError>()("RoleDefinitionError", {
  message: Schema.String,
  capability: Schema.optionalKey(Schema.String),
  role: Schema.optionalKey(Schema.String),
  key: Schema.optionalKey(Schema.String)
}) {}

/**
 * Knowledge retrieval failed (a `KnowledgeBase` source could not answer
 * before the run). Not one of the nine
 * categories: it fails `executeAction` and `execute` alike.
 *
 * @category errors
 * @since 0.1.0
 */
export class RetrievalFailure extends expected(
  Schema.TaggedError<RetrievalFailure>()("RetrievalFailure", {
    action: Schema.String,
    message: Schema.String,
    source: Schema.optionalKey(Schema.String),
    cause: Schema.optionalKey(Schema.Defect())
  })
) {}
