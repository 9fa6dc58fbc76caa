/**
 * A decision on a call that waits for an approval — approve it, or reject
 * it with a reason — and the rule every store of decisions keeps: a pending
 * call is decided once, ever.
 *
 * - The first decision recorded for a call stands. Recording it is atomic in
 *   every store: of two deciders racing, one records.
 * - The same decision again (same verdict, approver and reason) is that
 *   decision, not a second one: it is answered as the recorded decision, so
 *   a decision re-sent after a lost reply, or re-run by an at-least-once
 *   engine, changes nothing.
 * - Any other decision — the other verdict, or another approver — is refused
 *   with APPROVAL `"already decided: approved by alice"` (or `"rejected by
 *   bob: too expensive"`), and the loser of a race is refused the same way.
 *
 * `ApprovalStore` keeps this rule for approval tokens (`approve`, `reject`);
 * `agent.resume` refuses a second, different decision on a paused call the
 * same way; other stores of decisions (a durable run's) use {@link judge}.
 *
 * @example
 * ```ts
 * import { Decision } from "@rolecraft/core"
 *
 * const first = Decision.approve("alice")
 * Decision.judge(undefined, first) // { _tag: "Record" }: the first decision stands
 * Decision.judge(first, Decision.approve("alice")) // { _tag: "Repeat", recorded: first }: that decision again
 * Decision.judge(first, Decision.reject("bob", "too expensive"))
 * // { _tag: "Refuse", recorded: first, message: "already decided: approved by alice" }
 * ```
 *
 * @since 0.2.0
 */
import * as Schema from "effect/Schema"

/**
 * An approval: the call may run; `approver` is recorded.
 *
 * @category schemas
 * @since 0.2.0
 */
export const Approve = Schema.TaggedStruct("Approve", { approver: Schema.String })

/**
 * A rejection: the call never runs; `approver` and `reason` are recorded and
 * the reason is told to whoever made the call.
 *
 * @category schemas
 * @since 0.2.0
 */
export const Reject = Schema.TaggedStruct("Reject", { approver: Schema.String, reason: Schema.String })

/**
 * A decision on one pending call: {@link Approve} or {@link Reject}.
 *
 * @category schemas
 * @since 0.2.0
 */
export const Decision = Schema.Union([Approve, Reject])

/**
 * @category models
 * @since 0.2.0
 */
export type Decision = typeof Decision.Type

/**
 * Approves a pending call as `approver`.
 *
 * @category constructors
 * @since 0.2.0
 */
export const approve = (approver: string): Decision => ({ _tag: "Approve", approver })

/**
 * Rejects a pending call as `approver`, with `reason`.
 *
 * @category constructors
 * @since 0.2.0
 */
export const reject = (approver: string, reason: string): Decision => ({ _tag: "Reject", approver, reason })

/**
 * A decision as a message says it: `"approved by alice"`, `"rejected by bob:
 * too expensive"`.
 *
 * @category getters
 * @since 0.2.0
 */
export const describe = (decision: Decision): string =>
  decision._tag === "Approve"
    ? `approved by ${decision.approver}`
    : `rejected by ${decision.approver}: ${decision.reason}`

/**
 * Whether two decisions are the same decision: the same verdict by the same
 * approver, with the same reason for a rejection.
 *
 * @category predicates
 * @since 0.2.0
 */
export const same = (a: Decision, b: Decision): boolean =>
  a._tag === b._tag && a.approver === b.approver && (a._tag === "Approve" || a.reason === (b as typeof a).reason)

/**
 * What the rule says of a decision on a call, given the decision already
 * recorded for it:
 *
 * - `Record`: nothing is recorded yet — record this one (atomically, so
 *   that of two writers one records; the other then asks again);
 * - `Repeat`: the same decision is recorded — answer as it;
 * - `Refuse`: another decision is recorded — refuse with `message`
 *   (`"already decided: approved by alice"`).
 *
 * @category models
 * @since 0.2.0
 */
export type Ruling =
  | { readonly _tag: "Record" }
  | { readonly _tag: "Repeat"; readonly recorded: Decision }
  | { readonly _tag: "Refuse"; readonly recorded: Decision; readonly message: string }

/**
 * The message of a decision refused because `recorded` was made first:
 * `"already decided: approved by alice"`.
 *
 * @category getters
 * @since 0.2.0
 */
export const alreadyDecided = (recorded: Decision): string => `already decided: ${describe(recorded)}`

/**
 * The rule applied to `next`, given the decision `recorded` for the call
 * (`undefined` when none is): see {@link Ruling}.
 *
 * @example
 * ```ts
 * import { Decision } from "@rolecraft/core"
 *
 * const ruling = Decision.judge(Decision.approve("alice"), Decision.reject("bob", "too expensive"))
 * // ruling._tag === "Refuse", ruling.message === "already decided: approved by alice"
 * ```
 *
 * @category getters
 * @since 0.2.0
 */
export const judge = (recorded: Decision | undefined, next: Decision): Ruling => {
  if (recorded === undefined) return { _tag: "Record" }
  if (same(recorded, next)) return { _tag: "Repeat", recorded }
  return { _tag: "Refuse", recorded, message: alreadyDecided(recorded) }
}
