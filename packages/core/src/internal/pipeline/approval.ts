/**
 * The approval step of the pipeline (step 2): for an action that requires approval, the token
 * a call presents checked against the `ApprovalStore` (consumed once, bound to the agent,
 * action and arguments), or the call's live pending one asked for — a chat turn's call then
 * ends as a pending value it pauses on; refuses with APPROVAL, or
 * with the store's own category when the store refuses or fails (VALIDATION for text it cannot
 * hold, TRANSIENT when it cannot be reached, EXECUTION for a row that does not decode). And the one place the reserved `_approval_token` is taken out of
 * a user's raw arguments ({@link strip}, called by the agent's front doors): inside the
 * library the token travels as an argument of the pipeline.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import {
  type ActionError,
  type ApprovalCheck,
  ApprovalRequired,
  type ExecutionFailure,
  type TransientFailure,
  type ValidationError
} from "../../ActionError.ts"
import * as ApprovalStore from "../../ApprovalStore.ts"
import type { Policy } from "../../Approval.ts"
import { reservedParameter } from "../../Approval.ts"
import * as IdempotencyKey from "../../IdempotencyKey.ts"
import * as StoreBoundary from "../../StoreBoundary.ts"
import { write } from "../json.ts"
import { Pending } from "../pending.ts"
import * as Secrets from "../secrets.ts"
import { printable, shorten } from "../text.ts"
import { bindingOf, type Call } from "./call.ts"
import * as DefinitionDigest from "../approvals/definition.ts"
import type { Definition } from "../approvals/definition.ts"
import type { ToolDefinition } from "../../McpClient.ts"
import * as ToolHints from "../../ToolHints.ts"

/**
 * Splits the reserved approval parameter from raw call arguments. The
 * returned `params` never contain it; the caller's object is not mutated.
 * `requestToken` (from `ActionRequest.approvalToken`) wins over the
 * parameter; a parameter that is not a string counts as a token no store
 * knows (`""`).
 *
 * @since 0.1.0
 */
export const strip = (
  params: Readonly<Record<string, unknown>>,
  requestToken?: string
): { readonly params: Readonly<Record<string, unknown>>; readonly token: string | undefined } => {
  if (!Object.hasOwn(params, reservedParameter)) return { params, token: requestToken }
  const { [reservedParameter]: raw, ...rest } = params
  return { params: rest, token: requestToken ?? (typeof raw === "string" ? raw : "") }
}

/**
 * The store a call uses: the `ApprovalStore` provided to the call, else the
 * agent's own (`fallback`).
 *
 * @since 0.1.0
 */
export const storeOf = (
  fallback: ApprovalStore.ApprovalStore["Service"]
): Effect.Effect<ApprovalStore.ApprovalStore["Service"]> =>
  Effect.map(
    Effect.serviceOption(ApprovalStore.ApprovalStore),
    Option.getOrElse(() => fallback)
  )

/**
 * What an agent uses when no `ApprovalStore` is provided to a call: the one
 * provided where the agent is made, else a fresh in-memory store of its own.
 *
 * @since 0.1.0
 */
export const defaultStore: Effect.Effect<ApprovalStore.ApprovalStore["Service"]> = Effect.map(
  Effect.serviceOption(ApprovalStore.ApprovalStore),
  Option.getOrElse(ApprovalStore.makeMemory)
)

// The call's idempotency key goes with the consume: the same call run again (a durable run after a crash)
// finds its token used by itself and proceeds. Read only when a token is presented.
const consume = (store: ApprovalStore.ApprovalStore["Service"], token: string, binding: ApprovalStore.Binding) =>
  Effect.flatMap(Effect.service(IdempotencyKey.IdempotencyKey), (key) =>
    store.consume(token, binding, key === undefined ? undefined : { key })
  )

/** The most characters of a call's arguments an approval store records to show a person. */
export const maxShownArguments = 8_192

/**
 * The arguments of a call as a person deciding it is shown them: their JSON text, every secret the agent
 * knows replaced (its actions' credentials, the model's key, the secrets the turn read), every character that
 * could forge a line or hide text escaped, cut to
 * {@link maxShownArguments} characters; `undefined` when they have no JSON text.
 */
const shownArguments = (call: Call, secrets: Secrets.Read | undefined): Effect.Effect<string | undefined> => {
  const written = write(call.arguments)
  if (Result.isFailure(written)) return Effect.succeed(undefined)
  const known = call.secrets === undefined ? Secrets.known(secrets) : Effect.succeed(call.secrets)
  return Effect.map(known, (read) => shorten(printable(Secrets.redactor(read)(written.success)), maxShownArguments))
}

const noPause: Effect.Effect<undefined> = Effect.succeed(undefined)

/** A consumed token: the call goes on. */
const proceeds = (): undefined => undefined

/**
 * Step 2 for one call. Without a policy it succeeds (a token given anyway is
 * ignored). With one:
 *
 * - no token: the call's pending token is asked for (the live one when this
 *   call, in the same scope, was asked for before; else a new one, with the
 *   policy's `reason` and `ttl`, recording the call's scope, path of agents
 *   and redacted arguments for a person to decide it by), and the call ends:
 *   with a {@link Pending} value for a call that pauses (a chat turn's), else
 *   failing `ApprovalRequired` with `check: "missing"` and that
 *   `pendingTokenId`;
 * - a token: it is consumed against this call's binding (with the call's
 *   idempotency key, so the same call run again proceeds); a refusal fails
 *   `ApprovalRequired` with the store's `check` (`unknown`, `pending`,
 *   `rejected`, `expired`, `used`, `agent`, `action`, `arguments`,
 *   `definition`). Every refusal but `rejected` also carries the
 *   `pendingTokenId` of the call as it was made, asked for the same way, so
 *   the caller can ask a person again; a rejected token is a person's answer
 *   and is not asked again.
 *
 * The call's binding is the call value's own, computed once. When the store
 * refuses or fails, the call fails with the store's category (nothing ran):
 * VALIDATION naming a text the store cannot hold (a tool name with a NUL),
 * TRANSIENT when it cannot be reached, EXECUTION when a stored token does
 * not decode. Uses the `ApprovalStore` provided to the call, else `store`.
 */
export const verify = (options: {
  readonly agentId: string
  readonly policy: Policy | undefined
  readonly call: Call
  readonly store: ApprovalStore.ApprovalStore["Service"]
  readonly secrets: Secrets.Read | undefined
  readonly definition?: Definition | undefined
}): Effect.Effect<
  Pending | undefined,
  ApprovalRequired | ValidationError | TransientFailure | ExecutionFailure | ActionError
> => {
  const { policy, call } = options
  if (policy === undefined) return noPause
  const lookup = options.definition
  const tool = call.tool
  if (lookup === undefined || tool === undefined) return decide(options, policy, undefined)
  // An MCP tool: its definition as listed now (afresh when a token is presented), which the approval binds.
  // A server that cannot be read now (unreachable, no McpClient) is asked for as if every tool needed approval,
  // bound to no definition: a token so bound is refused once the definition can be read.
  const listed = Effect.catch(lookup.find(tool, call.token !== undefined), () => Effect.succeed(unreadable))
  return Effect.flatMap(listed, (found) => {
    if (found === unreadable) return decide(options, policy, undefined)
    if (found === undefined) return policy.when === undefined ? decide(options, policy, undefined) : noPause
    if (!applies(policy.when, ToolHints.listing(call.name, found))) return noPause
    return decide(options, policy, { lookup, definition: found, digest: DefinitionDigest.digest(found) })
  })
}

const unreadable = Symbol("unreadable")

/** Whether `policy` asks for approval of the MCP tool `definition` of the action `action`. */
export const appliesTo = (policy: Policy, action: string, definition: ToolDefinition): boolean =>
  applies(policy.when, ToolHints.listing(action, definition))

/** Whether an approval policy's `when` covers a tool of the server (absent: every tool). */
const applies = (when: Policy["when"], listing: ToolHints.Listing): boolean =>
  when === undefined ? true : typeof when === "function" ? when(listing) : when.includes(listing.name)

/** The definition a call's approval binds, when it is an MCP tool's. */
interface Listed {
  readonly lookup: Definition
  readonly definition: ToolDefinition
  readonly digest: string
}

const decide = (
  options: Parameters<typeof verify>[0],
  policy: Policy,
  listed: Listed | undefined
): Effect.Effect<Pending | undefined, ApprovalRequired | ValidationError | TransientFailure | ExecutionFailure> => {
  const { call, agentId } = options
  const action = call.name
  const refused = (check: ApprovalCheck, pendingTokenId?: string, detail?: string) =>
    new ApprovalRequired({
      action,
      message: `${call.label} requires approval (${policy.reason}): ${detail ?? ApprovalStore.describeCheck(check)}`,
      reason: policy.reason,
      check,
      ...(pendingTokenId === undefined ? {} : { pendingTokenId })
    })
  // A resumed call carries the digest its person was shown; a new one is bound to the definition listed now.
  const shown = call.definition
  if (listed !== undefined && shown === undefined) call.definition = listed.digest
  return Effect.flatMap(Effect.zip(bindingOf(agentId, call), storeOf(options.store)), ([given, store]) => {
    // The binding of the call as its tool is listed now (a resumed call's, when its tool has not changed).
    const binding =
      listed === undefined || given.definitionDigest === listed.digest
        ? given
        : { ...given, definitionDigest: listed.digest }
    // Asked only when the call has no token, or its token is refused: what a person is shown is written then.
    const ask = () =>
      Effect.flatMap(
        Effect.suspend(() => shownArguments(call, options.secrets)),
        (shown) =>
          store.request(binding, policy.reason, policy.ttl ?? ApprovalStore.defaultTtl, {
            scope: call.scope,
            agents: call.agents ?? [agentId],
            ...(shown === undefined ? {} : { arguments: shown })
          })
      )
    const askAgain = (check: ApprovalCheck, detail?: string) =>
      Effect.flatMap(ask(), (pending) => Effect.fail(refused(check, pending, detail)))
    // The tool changed since its approval was asked: said in an event, refused naming what changed, asked again.
    const changed = (before: string) => {
      if (listed === undefined) return askAgain("definition")
      const parts = DefinitionDigest.changes(before, listed.digest)
      const detail = `the tool changed since it was approved (its ${parts.join(", ")} changed); it did not run, and a new approval is asked for the tool as it is now`
      call.definition = listed.digest
      return Effect.andThen(
        listed.lookup.changed(call.tool ?? "", parts, `${call.label}: ${detail}`),
        askAgain("definition", detail)
      )
    }
    const token = call.token
    const paused = (tokenId: string): Effect.Effect<Pending, ApprovalRequired> => {
      const error = refused("missing", tokenId)
      const definition =
        listed === undefined
          ? undefined
          : {
              digest: listed.digest,
              ...(listed.definition.description === undefined ? {} : { description: listed.definition.description })
            }
      return call.pauses
        ? Effect.succeed(new Pending(tokenId, policy.reason, binding, error, definition))
        : Effect.fail(error)
    }
    const consumed = (presented: string): Effect.Effect<void, ApprovalRequired | StoreBoundary.StoreError> =>
      Effect.catchTag(Effect.asVoid(consume(store, presented, binding)), "ApprovalTokenError", (refusal) => {
        if (refusal.check === "rejected") return Effect.fail(refused("rejected"))
        if (refusal.check !== "definition") return askAgain(refusal.check)
        // A token bound to another definition of the tool: what it was bound to says what changed.
        return Effect.flatMap(store.get(presented), (found) =>
          changed(Option.match(found, { onNone: () => "", onSome: (token) => token.binding.definitionDigest ?? "" }))
        )
      })
    const step: Effect.Effect<Pending | undefined, ApprovalRequired | StoreBoundary.StoreError> =
      token === undefined
        ? Effect.flatMap(ask(), paused)
        : shown !== undefined && listed !== undefined && shown !== listed.digest
          ? changed(shown)
          : Effect.map(consumed(token), proceeds)
    return Effect.catchTag(step, "StoreError", (error) => Effect.fail(StoreBoundary.toActionError(error, action)))
  })
}
