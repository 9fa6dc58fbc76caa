/**
 * One call of an agent's action, as one value: made once where the call enters — a caller's
 * `executeAction` or `execute`, a model's tool call in a chat turn, a pending call resumed after its decision
 * — and read by every step of the pipeline: the action as the agent registered it, the MCP tool when there is
 * one, the arguments (the approval token taken out; for an mcpTool action, the tool's own), the label that
 * errors and events name it by, the token it presents, who asks (its scope, and the path of agents shown to a
 * person), and whether a pending approval ends it as a value (a chat turn pauses on it) or as its APPROVAL
 * failure (a direct caller). Its approval binding is computed once, the first time a step needs it
 * ({@link bindingOf}).
 *
 * An mcpTool action's parameters are fixed, `{ tool, arguments }`: a direct call's are taken apart here,
 * once (`arguments` an object, a JSON object's text, or absent), and what does not fit is kept for step 4 to
 * refuse, after authority and approval have had their say.
 */
import * as Effect from "effect/Effect"
import type * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import { ExecutionFailure, ValidationError } from "../../ActionError.ts"
import type * as ApprovalStore from "../../ApprovalStore.ts"
import { bind } from "../approvals/binding.ts"
import type * as Telemetry from "../events/telemetry.ts"
import { isPlainObject } from "../json.ts"
import { parseArguments } from "../tool/arguments.ts"
import type { Registered, Registry } from "./registered.ts"
import { labelOf } from "../label.ts"
import type * as ToolHints from "../../ToolHints.ts"

/** A call's arguments as the steps pass them on. */
export type Args = Readonly<Record<string, unknown>>

/** One call (see the module doc). */
export interface Call {
  /** The action's name in the agent (for a name the agent does not have, that name). */
  readonly name: string
  /** The action as registered; `undefined` for a name the agent does not have (authority, then NOT_FOUND). */
  readonly entry: Registered | undefined
  /** The MCP server's tool, for an mcpTool action. */
  readonly tool: string | undefined
  /** The raw arguments (for an mcpTool action, the tool's own), without the approval token. */
  readonly arguments: Args
  /** An mcpTool call whose `{ tool, arguments }` does not fit: step 4 refuses it with this. */
  readonly malformed: ValidationError | undefined
  /** `action`, or `action/tool` for an MCP tool: what errors and events name the call by. */
  readonly label: string
  /** What the approval binding digests: the raw arguments as the call entered (`{ tool, arguments }` for MCP). */
  readonly bound: Args
  readonly token: string | undefined
  readonly correlationId: string | undefined
  /** The model's tool call it answers in a chat turn (its span names it). */
  readonly toolCall: Telemetry.ToolCallSpan | undefined
  /** The secrets the turn knows (read once per turn), which the call's span and shown arguments are redacted of. */
  readonly secrets: ReadonlyArray<Redacted.Redacted<string>> | undefined
  /** Who asks: the turn (or run, or request) and the model's call id. */
  readonly scope: ApprovalStore.Scope | undefined
  /** The path of agents the call came through, outermost first (shown to a person deciding it). */
  readonly agents: ReadonlyArray<string> | undefined
  /** A pending approval ends the call as a value (`true`: a chat turn) or as its APPROVAL failure. */
  readonly pauses: boolean
  /** Its approval binding, once a step has asked for it ({@link bindingOf}): computed once per call value. */
  binding: Result.Result<ApprovalStore.Binding, ValidationError> | undefined
  /**
   * For an MCP tool that needs approval: the digest of the tool's definition the call is bound to — the one a
   * person was shown (a resumed call's), or, once the approval step has listed it, the one it runs.
   */
  definition: string | undefined
  readonly hints: ToolHints.Hints | undefined
}

/** What a front door knows of a call besides its name and arguments. */
export interface Options {
  readonly token?: string | undefined
  readonly correlationId?: string | undefined
  readonly toolCall?: Telemetry.ToolCallSpan | undefined
  readonly secrets?: ReadonlyArray<Redacted.Redacted<string>> | undefined
  readonly scope?: ApprovalStore.Scope | undefined
  readonly agents?: ReadonlyArray<string> | undefined
  readonly pauses?: boolean | undefined
  /** The digest of the MCP tool's definition a person was shown (a resumed call's). */
  readonly definition?: string | undefined
  /** What the MCP tool's server says of it, as offered (events carry it). */
  readonly hints?: ToolHints.Hints | undefined
}

const make = (
  name: string,
  entry: Registered | undefined,
  tool: string | undefined,
  args: Args,
  bound: Args,
  malformed: ValidationError | undefined,
  options: Options
): Call => ({
  name,
  entry,
  tool,
  arguments: args,
  malformed,
  label: labelOf(name, tool),
  bound,
  token: options.token,
  correlationId: options.correlationId,
  toolCall: options.toolCall,
  secrets: options.secrets,
  scope: options.scope ?? (options.correlationId === undefined ? undefined : { turn: options.correlationId }),
  agents: options.agents,
  pauses: options.pauses === true,
  binding: undefined,
  definition: options.definition,
  hints: options.hints
})

const invalid = (label: string, path: string, message: string): ValidationError =>
  new ValidationError({ action: label, message: `${label}: ${message}`, issues: [{ path, message }] })

/**
 * A call of `name` with a user's raw `params` (the approval token already taken out). For an mcpTool action,
 * `params` are `{ tool, arguments }`, taken apart here; anything else is kept to be refused at step 4.
 */
export const ofParams = (registry: Registry, name: string, params: Args, options: Options = {}): Call => {
  const entry = registry.get(name)
  if (entry?.action._tag !== "mcpTool") return make(name, entry, undefined, params, params, undefined, options)
  const tool = typeof params.tool === "string" ? params.tool : undefined
  if (tool === undefined) {
    const malformed = invalid(name, "tool", "tool must be the name of the MCP server's tool, a string")
    return make(name, entry, undefined, {}, params, malformed, options)
  }
  const raw = params.arguments
  const label = labelOf(name, tool)
  const parsed =
    raw === undefined || typeof raw === "string"
      ? parseArguments(raw, { tool: label })
      : isPlainObject(raw)
        ? Result.succeed(raw)
        : Result.fail(invalid(label, "arguments", "arguments must be an object, or a JSON object's text"))
  return Result.isSuccess(parsed)
    ? make(name, entry, tool, parsed.success, params, undefined, options)
    : make(name, entry, tool, {}, params, parsed.failure, options)
}

/**
 * A call of the action `name` (and MCP tool `tool`) with arguments already parsed: a model's tool call, or a
 * pending call resumed.
 */
export const ofTool = (
  registry: Registry,
  name: string,
  tool: string | undefined,
  args: Args,
  options: Options = {}
): Call => make(name, registry.get(name), tool, args, boundOf(tool, args), undefined, options)

/** What a binding digests of a call of `tool` (an MCP tool's) with `args`: `{ tool, arguments }`, else the arguments. */
export const boundOf = (tool: string | undefined, args: Args): Args =>
  tool === undefined ? args : { tool, arguments: args }

/**
 * The approval binding of `call` for the agent `agentId`: made once per call value, then the same binding
 * (and digest) every time it is asked. Fails `ValidationError` when the arguments cannot be serialised.
 */
export const bindingOf = (agentId: string, call: Call): Effect.Effect<ApprovalStore.Binding, ValidationError> => {
  // The digest of its raw arguments is made the first time a step asks, then kept on the call.
  call.binding ??= bind(agentId, call.name, call.tool, call.bound)
  const bound = call.binding
  if (Result.isFailure(bound)) return Effect.fail(bound.failure)
  // An MCP tool's binding holds the digest of its definition once it is known, and is kept with it.
  if (call.definition !== undefined && bound.success.definitionDigest !== call.definition) {
    const withDefinition = { ...bound.success, definitionDigest: call.definition }
    call.binding = Result.succeed(withDefinition)
    return Effect.succeed(withDefinition)
  }
  return Effect.succeed(bound.success)
}

/**
 * What the role's callbacks (hooks, contracts, result mapper, fallback) and the guardrails see of a call's
 * arguments: the arguments themselves, or for an MCP tool `{ tool, arguments }`, as they are declared.
 */
export const viewOf = (call: Call, args: Args): Args =>
  call.tool === undefined ? args : { tool: call.tool, arguments: args }

/**
 * The arguments of a call from what its before hook gave back (step 3): the object itself, or for an MCP tool
 * its `arguments`. A hook may change an MCP call's arguments but not its tool, which authority and approval
 * have decided on: a changed tool is EXECUTION, arguments that are not an object VALIDATION.
 */
export const fromView = (call: Call, view: Args): Result.Result<Args, ExecutionFailure | ValidationError> => {
  if (call.tool === undefined) return Result.succeed(view)
  if (view.tool !== call.tool) {
    return Result.fail(
      new ExecutionFailure({
        action: call.name,
        message: `${call.name}: the before hook changed the MCP tool of the call from ${call.tool} to ${String(view.tool)}; it may change only its arguments`
      })
    )
  }
  const args = view.arguments ?? {}
  return isPlainObject(args)
    ? Result.succeed(args)
    : Result.fail(invalid(call.label, "arguments", "the before hook must leave arguments an object"))
}
