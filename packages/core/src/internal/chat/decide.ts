/**
 * Recording a decision on a pending call: the call's token approved or rejected in the store, bound to the
 * call as the paused state shows it (agent, action, exact arguments). What the store said is a value: the
 * call approved, rejected, refused by the store (expired, unknown, bound to another call) or decided before
 * (otherwise).
 */
import * as Effect from "effect/Effect"
import type { ActionError, ApprovalCheck } from "../../ActionError.ts"
import type * as ApprovalStore from "../../ApprovalStore.ts"
import type { Decision, PendingCall } from "../../Chat.ts"
import * as StoreBoundary from "../../StoreBoundary.ts"
import * as ChatMessages from "./messages.ts"
import { labelOf } from "../label.ts"

/** What recording one decision gave: the call approved, rejected, refused by the store, or decided before. */
export type Recorded =
  | { readonly _tag: "Approved" }
  | { readonly _tag: "Rejected"; readonly approver: string; readonly reason: string }
  | { readonly _tag: "Refused"; readonly check: ApprovalCheck }
  | { readonly _tag: "Decided"; readonly message: string }

/** The label of a pending call, as its errors name it. */
export const pendingLabel = (pending: PendingCall): string => labelOf(pending.action, pending.tool)

/**
 * Records one decision on a pending call's token, bound to the call as the state shows it (`binding`: the
 * binding of the call value that runs once it is approved, computed once for both). A store that
 * cannot hold the approver or reason fails the resume as VALIDATION at `decisions.<id>.<field>`; a store
 * that cannot be reached, as TRANSIENT (resuming again is safe: the same decision is the same decision).
 */
export const record = (
  store: ApprovalStore.ApprovalStore["Service"],
  pending: PendingCall,
  binding: Effect.Effect<ApprovalStore.Binding, ActionError>,
  decision: Decision
): Effect.Effect<Recorded, ActionError> => {
  const decided = Effect.flatMap(binding, (binding) =>
    decision._tag === "Reject"
      ? store.reject(pending.pendingTokenId, decision.approver, decision.reason, binding)
      : store.approve(pending.pendingTokenId, decision.approver, binding)
  )
  return Effect.matchEffect(decided, {
    onSuccess: (): Effect.Effect<Recorded> =>
      Effect.succeed(
        decision._tag === "Reject"
          ? { _tag: "Rejected", approver: decision.approver, reason: decision.reason }
          : { _tag: "Approved" }
      ),
    onFailure: (error): Effect.Effect<Recorded, ActionError> => {
      switch (error._tag) {
        case "ApprovalTokenError":
          if (error.check === "decided") return Effect.succeed({ _tag: "Decided", message: error.message })
          // A rejected call never runs, whatever the store says of its token.
          return Effect.succeed(
            decision._tag === "Reject"
              ? { _tag: "Rejected", approver: decision.approver, reason: decision.reason }
              : { _tag: "Refused", check: error.check }
          )
        case "StoreError":
          return Effect.fail(
            error.category === "VALIDATION"
              ? ChatMessages.invalid(
                  "resume",
                  `decisions.${pending.toolCallId}${error.field === undefined ? "" : `.${error.field}`}`,
                  error.message
                )
              : StoreBoundary.toActionError(error, "resume")
          )
        default:
          return Effect.fail(error)
      }
    }
  })
}
