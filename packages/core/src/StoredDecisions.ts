/**
 * The decisions a paused turn's calls have in the approval store: for a
 * program that lets someone else decide — a person on `@rolecraft/inspector`'s
 * page, an operator's tool deciding from `ApprovalStore`'s listing — and then
 * resumes with exactly what was recorded, so the decider and the resume
 * never disagree.
 *
 * `read(state)` looks each pending call's token up once; `whenDecided(state)`
 * looks again on a schedule until none is waiting. Give the `decisions` to
 * `agent.resume`: it records them again under the same rules, and the same
 * decision again is that decision, so the resume runs an approved call once
 * and tells the model of a rejected one.
 *
 * @example
 * ```ts
 * import { type Agent, StoredDecisions } from "@rolecraft/core"
 * import { Effect } from "effect"
 *
 * declare const agent: Agent.Agent
 *
 * const program = Effect.gen(function* () {
 *   const result = yield* agent.chat("Book the Lisbon hotel")
 *   if (result._tag !== "AwaitingApproval") return result
 *   // a person decides on the inspector's page meanwhile
 *   const { decisions } = yield* StoredDecisions.whenDecided(result.state)
 *   return yield* agent.resume(result.state, decisions)
 * })
 * ```
 *
 * @since 0.3.0
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import { ApprovalStore } from "./ApprovalStore.ts"
import type { Decisions, PausedState, PendingCall } from "./Chat.ts"
import * as Decision from "./Decision.ts"
import type { StoreError } from "./StoreBoundary.ts"

/**
 * What the store says of a paused turn's pending calls:
 *
 * - `decisions`: one per decided call, by its `toolCallId` — approved (or
 *   approved and used) as `Decision.approve(approver)`, rejected as
 *   `Decision.reject(approver, reason)`, with the approver and reason the
 *   store recorded;
 * - `waiting`: the calls whose token is still pending and unexpired;
 * - `expired`: the calls whose token expired undecided, or that the store
 *   does not know (another store, or one swept): no one can decide them, and
 *   resuming without a decision for them fails as `agent.resume` says.
 *
 * @category models
 * @since 0.3.0
 */
export interface StoredDecisions {
  readonly decisions: Decisions
  readonly waiting: ReadonlyArray<PendingCall>
  readonly expired: ReadonlyArray<PendingCall>
}

/**
 * Reads the store's decision on each of `state`'s pending calls (nested
 * agents' and a handed-off agent's included: they are in `state.pending`).
 * Needs the `ApprovalStore` the turn used; fails with its `StoreError`.
 *
 * @category constructors
 * @since 0.3.0
 */
export const read = (state: PausedState): Effect.Effect<StoredDecisions, StoreError, ApprovalStore> =>
  Effect.gen(function* () {
    const store = yield* ApprovalStore
    const decisions: Record<string, Decision.Decision> = {}
    const waiting: Array<PendingCall> = []
    const expired: Array<PendingCall> = []
    const tokens = yield* Effect.forEach(state.pending, (call) => store.get(call.pendingTokenId), {
      concurrency: 4
    })
    const at = yield* Clock.currentTimeMillis
    state.pending.forEach((call, i) => {
      const token = Option.getOrUndefined(tokens[i] ?? Option.none())
      if (token === undefined) expired.push(call)
      else if (token.status === "rejected")
        decisions[call.toolCallId] = Decision.reject(token.approver ?? "", token.rejection ?? "")
      else if (token.status !== "pending") decisions[call.toolCallId] = Decision.approve(token.approver ?? "")
      else if (at >= token.expiresAt) expired.push(call)
      else waiting.push(call)
    })
    return { decisions, waiting, expired }
  })

/**
 * {@link read}, again on `schedule` (default: every 500 ms) until no call
 * is waiting; answers as the last read. Runs for as long as a call waits:
 * bound it with `Effect.timeout`, or rely on the tokens' own time to live
 * (an expired call stops waiting).
 *
 * @category constructors
 * @since 0.3.0
 */
export const whenDecided = (
  state: PausedState,
  options?: { readonly schedule?: Schedule.Schedule<unknown, StoredDecisions> | undefined }
): Effect.Effect<StoredDecisions, StoreError, ApprovalStore> =>
  Effect.repeat(read(state), {
    schedule: options?.schedule ?? Schedule.spaced("500 millis"),
    until: (stored) => stored.waiting.length === 0
  })
